// \file The fault channel on a Vulkan device: device asserts report the failing invocation, and on
// a driver that ends loops early (lavapipe: 65535 iterations per invocation in all) a launch that
// reaches the limit is a DeviceFault naming the loop, never a wrong result; below the limit, and on
// drivers without one, the same kernels give exact results.
#include "vk_test.h"

namespace tl = tessera::tl;
using tessera::Error;
using tessera::ErrorKind;

namespace {

/// Each program counts `n` iterations `reps` times over.
void count_kernel(tl::ptr<int32_t> out, tl::i32 n, tl::i32 reps, int BLOCK) {
  auto acc = tl::zeros<int32_t>({BLOCK});
  for (auto r : tl::range(0, reps, 1)) {
    for (auto i : tl::range(0, n, 1)) acc += 1;
  }
  tl::store(out + tl::program_id(0) * BLOCK + tl::arange(0, BLOCK), acc);
}

/// A while loop halving nothing: `n` passes.
void while_kernel(tl::ptr<int32_t> out, tl::i32 n) {
  tl::tensor i = n * 0;
  tl::while_([&] { return i < n; }, [&] { i = i + 1; });
  tl::store(out + tl::program_id(0), i);
}

/// `n` float atomic maxima in a loop: each is a compare-and-swap loop of its own on lavapipe.
void atomic_loop_kernel(tl::ptr<float> out, tl::i32 n) {
  for (auto i : tl::range(0, n, 1)) tl::atomic_max(out + tl::program_id(0), i.to(tl::float32));
}

void checked_kernel(tl::ptr<int32_t> x, tl::i32 limit, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  tl::device_assert(v < limit, "v < limit");
  tl::store(x + offs, v + 1);
}

int64_t loop_limit(const tessera::Device& dev) {
  auto t = tessera::target::parse_target(dev.info().target);
  REQUIRE(t);
  return t->loop_limit;
}

/// Runs `launch` and returns the DeviceFault's message ("" when it ran without error).
template <class F>
std::string fault_of(F&& launch) {
  try {
    launch();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::DeviceFault);
    return e.what();
  }
  return "";
}

bool mentions(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("vulkan: loops past the driver's limit are a DeviceFault, below it exact") {
  VKTEST_DEVICE(dev);
  const int64_t limit = loop_limit(dev);
  auto count = TESSERA_KERNEL(count_kernel, out, n, reps, BLOCK);
  auto out = dev.alloc<int32_t>(2 * 16);
  struct Case {
    int n, reps;
    bool past;  ///< past lavapipe's count
  };
  // Below lavapipe's count (one per pass, the leaving pass included; the kernel keeps a margin
  // of 16 passes) and above it: 100000 in one loop, 300 x 300 and 30000 x 3 nested (wrong
  // results before: 65535, 65101 and 65531).
  for (Case c : {Case{65000, 1, false}, Case{100, 640, false}, Case{100000, 1, true},
                 Case{300, 300, true}, Case{30000, 3, true}, Case{32767, 2, true}}) {
    CAPTURE(c.n);
    CAPTURE(c.reps);
    const int64_t want = int64_t{c.n} * c.reps;
    const bool past = limit > 0 && c.past;
    std::vector<int32_t> got;
    std::string fault = fault_of([&] {
      count[{2}](out, c.n, c.reps, 16);
      got = out.download();
    });
    if (past) {
      CHECK(mentions(fault, "kernel count_kernel: the loop at "));
      CHECK(mentions(fault, "fault_channel_test.cpp:1"));  // line 16 or 17
      CHECK(mentions(fault, "reached the limit of 65535 loop iterations per invocation"));
      // Every invocation reaches the limit; the first to claim the record is named, and which
      // one that is depends on how the driver's threads are scheduled (under load, program 1's).
      CHECK((mentions(fault, "(program (0, 0, 0), thread ") ||
             mentions(fault, "(program (1, 0, 0), thread ")));
    } else {
      CHECK(fault == "");
      REQUIRE(got.size() == 32);
      for (int32_t v : got) REQUIRE(v == want);
    }
  }
  // The stream goes on after a fault.
  count[{2}](out, 7, 3, 16);
  for (int32_t v : out.download()) REQUIRE(v == 21);
}

TEST_CASE("vulkan: a while loop and the compare-and-swap loops of atomics count too") {
  VKTEST_DEVICE(dev);
  const int64_t limit = loop_limit(dev);
  auto loop = TESSERA_KERNEL(while_kernel, out, n);
  auto out = dev.alloc<int32_t>(4);
  for (int n : {1000, 70000}) {
    CAPTURE(n);
    std::vector<int32_t> got;
    std::string fault = fault_of([&] {
      loop[{4}](out, n);
      got = out.download();
    });
    if (limit > 0 && n >= limit) {
      CHECK(mentions(fault, "kernel while_kernel: the loop at "));
      CHECK(mentions(fault, "fault_channel_test.cpp:25 reached the limit"));
    } else {
      CHECK(fault == "");
      for (int32_t v : got) REQUIRE(v == n);
    }
  }
  // Each pass of the outer loop runs a compare-and-swap loop, which costs lavapipe two passes
  // more (it leaves through its continue construct): 30000 of them pass lavapipe's count (the
  // result was 21844 before) although the loop alone would not; 20000 stay below it.
  auto atomics = TESSERA_KERNEL(atomic_loop_kernel, out, n);
  auto best = dev.alloc<float>(2);
  for (int n : {100, 20000, 30000}) {
    CAPTURE(n);
    best.fill(-1.0f);
    std::vector<float> got;
    std::string fault = fault_of([&] {
      atomics[{2}](best, n);
      got = best.download();
    });
    if (limit > 0 && n * 3 > limit) {
      CHECK(mentions(fault, "kernel atomic_loop_kernel: the loop"));
    } else {
      CHECK(fault == "");
      for (float v : got) REQUIRE(v == static_cast<float>(n - 1));
    }
  }
}

TEST_CASE("vulkan: a failing device_assert is a DeviceFault naming the invocation") {
  VKTEST_DEVICE(dev);
  auto checked = TESSERA_KERNEL(checked_kernel, x, limit, BLOCK);
  std::vector<int32_t> h(64);
  for (int i = 0; i < 64; ++i) h[i] = i;
  auto x = dev.upload(h);
  CHECK(fault_of([&] {
          checked[{4}](x, 1000, 16);
          dev.synchronize();
        }) == "");
  // Values 1..64 now: 1..39 pass; 40 (program 2, thread 7 of the first subgroup) fails first in
  // some order; every failing element is >= 40.
  std::string fault = fault_of([&] {
    checked[{4}](x, 40, 16);
    dev.synchronize();
  });
  CHECK(mentions(fault, "device assert failed in kernel checked_kernel at "));
  CHECK(mentions(fault, "fault_channel_test.cpp:37: v < limit (program ("));
  CHECK(mentions(fault, ": v < limit (program ("));
  auto at = fault.find("index (");
  REQUIRE(at != std::string::npos);
  int index = std::stoi(fault.substr(at + 7));
  auto program = fault.find("program (");
  int pid = std::stoi(fault.substr(program + 9));
  CHECK(pid * 16 + index + 1 >= 40);  // the element that failed held pid*16+index+1
  // The fault is reported once; the launch ran to its end (Vulkan has no trap); the stream and
  // the device go on.
  dev.synchronize();
  checked[{4}](x, 1000, 16);
  auto got = x.download();
  for (int i = 0; i < 64; ++i) REQUIRE(got[i] == i + 3);
}
