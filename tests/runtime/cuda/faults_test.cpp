/// \file Errors and faults: driver errors name the call, the error and the kernel; an illegal
/// address and a failed device assert fail the pending work with DeviceFault naming the kernel
/// (and the assert's message and index), the device resets, old buffers say so, and new work runs.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "helpers.h"
#include "tests/support/capture.h"

namespace cuda_test {
namespace {

const char* kStoreTo =
    R"(func @wild_store(%p: ptr<i32>) attributes {stage = "simt", threads = 32, subgroup = 32} {
  %c = constant {value = 7} : i32
  %t = constant {value = 1} : i1
  global_store %p, %t, %c {align = 4, width = 1}
}
)";

std::string fill_kernel() {
  return kernel("%out: ptr<i32>", R"(  %lane = lane_id : i32
  %t = constant {value = 1} : i1
  %p = ptr_add %out, %lane : ptr<i32>
  global_store %p, %t, %lane {align = 4, width = 1})",
                "", 32);
}

TEST_CASE("cuda faults: an illegal address fails the work and names the kernel") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda faults: an illegal address fails the work and names the kernel")) return;
  auto before = dev.upload(std::vector<int>(32, 1));
  auto wild = load(dev, kStoreTo);
  uint64_t bad = 0x10;  // unmapped
  dev.impl()->default_stream()->launch(wild, Grid(1), pack(wild->params, {scalar(bad)}, {0}), {});
  auto [kind, what] = error_of([&] { dev.synchronize(); });
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(
      what, "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (700) in kernel wild_store"));
  // Tessera held the primary context alone: it lets go without a reset, and the driver discards it.
  CHECK(contains(what,
                 "; buffers allocated on cuda:0 before the fault are invalid; Tessera did not "
                 "reset the primary context (no other user held it, so the driver discarded "
                 "it)"));
  MESSAGE("fault: " << what);
  // Buffers of the old context say what happened.
  std::tie(kind, what) = error_of([&] { before.download(); });
  CHECK(kind == ErrorKind::Runtime);
  CHECK(contains(what,
                 "download: the buffer was allocated on cuda:0 before a device fault (or "
                 "Device::reset) ended its context"));
  // New work runs again (kernels loaded before the fault are reloaded), or the device says it
  // cannot be used in this process.
  runs_or_device_lost([&] {
    auto out = run(dev, load(dev, fill_kernel()), Grid(1), {buffer(std::vector<int>(32, -1))});
    CHECK(as<int>(out[0])[31] == 31);
    auto again = dev.upload(std::vector<int>{1, 2, 3});
    dev.impl()->default_stream()->launch(
        wild, Grid(1), pack(wild->params, {scalar(again.address())}, {0}), {again.allocation()});
    const std::vector<int> got = again.download();  // outside CHECK (see runs_or_device_lost)
    CHECK(got == std::vector<int>{7, 2, 3});
  });
}

TEST_CASE("cuda faults: work pending on another stream is reported lost") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda faults: work pending on another stream is reported lost")) return;
  tessera::Stream other = dev.create_stream();
  auto buf = dev.alloc<int>(32);
  auto fill = load(dev, fill_kernel());
  auto wild = load(dev, kStoreTo);
  other.impl()->launch(fill, Grid(1), pack(fill->params, {scalar(buf.address())}, {0}),
                       {buf.allocation()});
  dev.impl()->default_stream()->launch(wild, Grid(1),
                                       pack(wild->params, {scalar(uint64_t{0x10})}, {0}), {});
  auto [kind, what] = error_of([&] { dev.default_stream().synchronize(); });
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(what, "in kernel wild_store"));
  std::tie(kind, what) = error_of([&] { other.synchronize(); });
  CHECK(kind == ErrorKind::DeviceFault);
  MESSAGE("other stream: " << what);
  bool lost = contains(what, "work on this stream was lost (kernel k) when the device faulted: ");
  bool unusable = contains(what, "cuda:0 cannot be used again in this process");
  CHECK((lost || unusable));
}

TEST_CASE("cuda faults: a failed device assert names the kernel and the message and the index") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child(
          "cuda faults: a failed device assert names the kernel and the message and the index"))
    return;
  std::string text =
      R"(func @checked(%n: i32) attributes {stage = "simt", threads = 64, subgroup = 32} {
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %ok = cmp_lt %tid, %n : i1
  assert %tid, %ok {message = "tid < n", rank = 1} loc("/src/check.cpp":17:3)
}
)";
  auto k = load(dev, text);
  dev.impl()->default_stream()->launch(k, Grid(3), pack(k->params, {scalar(int32_t{64})}, {0}), {});
  dev.synchronize();  // every thread passes
  dev.impl()->default_stream()->launch(k, Grid(3), pack(k->params, {scalar(int32_t{40})}, {0}), {});
  auto [kind, what] = error_of([&] { dev.synchronize(); });
  MESSAGE("assert: " << what);
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(
      what, "device assert failed in kernel checked at /src/check.cpp:17: tid < n (program ("));
  CHECK(contains(what, "), thread "));
  CHECK(contains(what, ", index ("));
  CHECK(contains(what, "failed: CUDA_ERROR_"));
  runs_or_device_lost([&] {
    auto out = run(dev, load(dev, fill_kernel()), Grid(1), {buffer(std::vector<int>(32))});
    CHECK(as<int>(out[0])[31] == 31);
  });
}

TEST_CASE("cuda errors: driver failures name the call, the error and the kernel") {
  CUDA_DEVICE_OR_SKIP(dev);
  tessera::target::Artifact bad;
  bad.kernel = "softmax_kernel";
  bad.isa = "ptx";
  bad.ptx =
      ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry softmax_kernel() { bogus; "
      "}\n";
  bad.threads = 32;
  bad.subgroup = 32;
  auto [kind, what] = error_of([&] { tessera::rt::cuda::load(*dev.impl(), bad); });
  CHECK(kind == ErrorKind::Runtime);
  CHECK(what.starts_with(
      "cuLinkAddData failed: CUDA_ERROR_INVALID_PTX (218) in kernel softmax_kernel: "));
  MESSAGE(what);

  tessera::target::Artifact spirv = bad;
  spirv.isa = "spirv";
  std::tie(kind, what) = error_of([&] { tessera::rt::cuda::load(*dev.impl(), spirv); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(what == "cuda:0: kernel 'softmax_kernel' is a spirv artifact; CUDA devices load PTX");

  auto m = parse(kernel("", "  barrier", "shared_0 = tile<1000000xf32>"));
  tessera::target::Artifact huge = tessera::ptx::emit(m->kernel(), target_of(dev));
  std::tie(kind, what) = error_of([&] { tessera::rt::cuda::load(*dev.impl(), huge); });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(contains(what, "kernel 'k' needs 4000000 bytes of shared memory; the device allows "));

  auto k = load(dev, fill_kernel());
  std::tie(kind, what) = error_of([&] {
    dev.impl()->default_stream()->launch(k, Grid(1, 70000),
                                         pack(k->params, {scalar(uint64_t{0})}, {0}), {});
  });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(what, "kernel 'k': grid (1, 70000, 1) exceeds cuda:0's limit"));
}

TEST_CASE("cuda: device print writes the interpreter's line format through vprintf") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text = kernel("%v: f32", R"(  %lane = lane_id : i32
  %c1 = constant {value = 1} : i32
  %first = cmp_lt %lane, %c1 : i1
  if %first ({
    print %lane, %v {prefix = "v = ", rank = 1}
    %h = constant {value = 255} : u8
    print %h {hex = 1}
    yield
  }, {
    yield
  }))",
                            "", 32);
  auto k = load(dev, text);
  std::string out = tessera::test::capture(1, [&] {
    dev.impl()->default_stream()->launch(k, Grid(2), pack(k->params, {scalar(2.5f)}, {0}), {});
    dev.synchronize();
  });
  CHECK(contains(out, "pid (0, 0, 0) idx (0) v = 2.5\n"));
  CHECK(contains(out, "pid (1, 0, 0) idx (0) v = 2.5\n"));
  CHECK(contains(out, "pid (1, 0, 0) 0xff\n"));
}

}  // namespace
}  // namespace cuda_test
