// \file Faults stay with the work that depends on them (docs/design.md, "Errors and streams"), and
// no wait goes without an answer: threads sharing a stream, threads on their own streams, kernels
// that never end under TESSERA_TIMEOUT, and events that were never recorded, on host and simt.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace tl = tessera::tl;
using tessera::Device;
using tessera::ErrorKind;

namespace {

using tessera::test::error_of;

void overrun(tl::ptr<float> out, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, 1.0f);
}

void add_one(tl::ptr<int> x, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(x + offs, tl::load(x + offs, mask) + 1, mask);
}

/// Never ends while *flag != 0 (the interpreters cannot know it stays so).
void spin(tl::ptr<int> flag, tl::ptr<int> out) {
  auto f = tl::load(flag);
  auto count = f * 0;
  tl::while_([&] { return f != 0; }, [&] { count = count + 1; });
  tl::store(out, count);
}

bool names(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

/// Sets TESSERA_TIMEOUT for a scope.
class TimeoutScope {
 public:
  explicit TimeoutScope(const char* seconds) { setenv("TESSERA_TIMEOUT", seconds, 1); }
  ~TimeoutScope() { unsetenv("TESSERA_TIMEOUT"); }
};

/// Issue 17's probe: thread A launches a faulting kernel on the default stream again and again;
/// thread B fills, launches and downloads on the same stream. Every B round either gives the
/// right data or an error naming A's kernel; none gives stale data without an error.
void probe_shared_default_stream(const char* name) {
  CAPTURE(name);
  Device dev = Device::open(name);
  auto fault_k = TESSERA_KERNEL(overrun, out, BLOCK);
  auto add_k = TESSERA_KERNEL(add_one, x, n, BLOCK);
  auto small = dev.alloc<float>(16);
  constexpr int kN = 64;
  auto x = dev.alloc<int>(kN);
  add_k[{1}](x, kN, kN);  // trace and compile before the race starts
  x.download();
  std::atomic<bool> done{false};
  std::atomic<int> a_faults{0}, a_other{0};
  std::thread a([&] {
    while (!done) {
      try {
        fault_k[{1}](small, 64);
        dev.default_stream().synchronize();
        a_other++;  // every launch faults: its synchronize must throw
      } catch (const tessera::Error& e) {
        if (e.kind() == ErrorKind::DeviceFault && names(e.what(), "'overrun'"))
          a_faults++;
        else
          a_other++;
      }
    }
  });
  int right = 0, named = 0, stale = 0, other = 0, rounds = 0;
  // 150 rounds, and on until thread A has run at least once (a loaded machine may starve it).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int round = 0; round < 150 || (a_faults == 0 && std::chrono::steady_clock::now() < give_up);
       ++round, ++rounds) {
    try {
      x.fill(round);
      add_k[{1}](x, kN, kN);
      std::vector<int> r = x.download();
      if (r == std::vector<int>(kN, round + 1))
        right++;
      else
        stale++;
    } catch (const tessera::Error& e) {
      if (e.kind() == ErrorKind::DeviceFault && names(e.what(), "'overrun'"))
        named++;
      else
        other++;
    }
  }
  done = true;
  a.join();
  CHECK(stale == 0);
  CHECK(other == 0);
  CHECK(right + named == rounds);
  CHECK(right > 0);
  CHECK(a_faults > 0);
  CHECK(a_other == 0);
  // The stream is usable once each thread has been told.
  dev.synchronize();
  x.fill(7);
  CHECK(x.download() == std::vector<int>(kN, 7));
}

}  // namespace

TEST_CASE("faults: threads sharing the default stream get their own work done or the named fault") {
  for (const char* name : {"host", "simt:32"}) probe_shared_default_stream(name);
}

TEST_CASE("faults: a fault on one thread's stream never reaches another thread's stream") {
  for (const char* name : {"host", "simt:8"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    auto fault_k = TESSERA_KERNEL(overrun, out, BLOCK);
    auto add_k = TESSERA_KERNEL(add_one, x, n, BLOCK);
    auto small = dev.alloc<float>(16);
    tessera::Stream sa = dev.create_stream(), sb = dev.create_stream();
    std::atomic<bool> done{false};
    std::atomic<int> a_faults{0};
    std::thread a([&] {
      while (!done) {
        try {
          fault_k[{{1}, {}, &sa}](small, 64);
          sa.synchronize();
        } catch (const tessera::Error& e) {
          if (e.kind() == ErrorKind::DeviceFault) a_faults++;
        }
      }
    });
    auto x = dev.alloc<int>(32);
    int right = 0;
    // 60 rounds, and on until thread A has faulted at least once (a loaded machine may starve it).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int rounds = 0;
    for (int round = 0; round < 60 || (a_faults == 0 && std::chrono::steady_clock::now() < give_up);
         ++round, ++rounds) {
      x.fill(round, &sb);
      add_k[{{1}, {}, &sb}](x, 32, 32);
      if (x.download(&sb) == std::vector<int>(32, round + 1)) right++;  // throws on any error
    }
    done = true;
    a.join();
    CHECK(right == rounds);
    CHECK(a_faults > 0);
  }
}

TEST_CASE("faults: work skipped after a fault fails every thread that enqueued it, once") {
  Device dev = Device::open("host");
  auto fault_k = TESSERA_KERNEL(overrun, out, BLOCK);
  auto small = dev.alloc<float>(16);
  auto x = dev.alloc<int>(8);
  x.fill(1);
  x.download();

  // One thread: the fill after the fault is skipped, so the download throws the fault; the
  // stream then runs work again.
  fault_k[{1}](small, 64);
  x.fill(2);
  std::string msg = error_of([&] { x.download(); }, ErrorKind::DeviceFault);
  CHECK(names(msg, "out-of-bounds store in kernel 'overrun'"));
  CHECK(x.download() == std::vector<int>(8, 1));  // the fill of 2 never ran: the error said so
  x.fill(3);
  CHECK(x.download() == std::vector<int>(8, 3));

  // Two threads: B's fill is skipped; A's synchronize reports the fault (and clears the stream);
  // B's next download, although it runs, still throws the fault that skipped B's fill.
  fault_k[{1}](small, 64);
  std::promise<void> a_reported;
  std::string b_first, b_second;
  std::vector<int> b_data;
  std::promise<void> b_enqueued;
  std::thread b([&] {
    x.fill(4);
    b_enqueued.set_value();
    a_reported.get_future().wait();
    b_first = error_of([&] { x.download(); }, ErrorKind::DeviceFault);
    b_data = x.download();  // told once: now the stream's own answer
  });
  b_enqueued.get_future().wait();
  msg = error_of([&] { dev.default_stream().synchronize(); }, ErrorKind::DeviceFault);
  CHECK(names(msg, "'overrun'"));
  a_reported.set_value();
  b.join();
  CHECK(names(b_first, "out-of-bounds store in kernel 'overrun'"));
  CHECK(b_data == std::vector<int>(8, 3));
  // A was told already: its synchronize is clean.
  dev.synchronize();
}

TEST_CASE("timeout: a kernel that never ends stops at TESSERA_TIMEOUT and the device goes on") {
  TimeoutScope scope("0.4");
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    auto k = TESSERA_KERNEL(spin, flag, out);
    auto flag = dev.upload(std::vector<int>{1});
    auto out = dev.upload(std::vector<int>{-1});
    auto t0 = std::chrono::steady_clock::now();
    std::string msg = error_of(
        [&] {
          k[{1}](flag, out);
          dev.synchronize();
        },
        ErrorKind::DeviceFault);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(names(msg, "timed out"));
    CHECK(names(msg, "kernel 'spin'"));
    CHECK(names(msg, "0.4 s (TESSERA_TIMEOUT)"));
    CHECK(names(msg, "faults_test.cpp"));  // the loop's line
    CHECK(seconds >= 0.4);
    CHECK(seconds < 5.0);
    // The process and the device go on: the same kernel ends when the flag is 0.
    flag.upload(std::vector<int>{0});
    k[{1}](flag, out);
    CHECK(out.download() == std::vector<int>{0});
  }
}

TEST_CASE("timeout: TESSERA_TIMEOUT that is not a number of seconds is an Argument error") {
  TimeoutScope scope("soon");
  Device dev = Device::open("host");
  auto x = dev.alloc<int>(4);
  std::string msg = error_of([&] { x.download(); }, ErrorKind::Argument);
  CHECK(msg ==
        "TESSERA_TIMEOUT='soon' is not a number of seconds >= 0 (0 turns the time limit off)");
}

TEST_CASE("events: waiting on an event never recorded is an Argument error, not a hang") {
  for (const char* name : {"host", "simt:32"}) {
    CAPTURE(name);
    Device dev = Device::open(name);
    tessera::Event never = dev.create_event(), recorded = dev.create_event();
    tessera::Stream s = dev.create_stream();
    recorded.record(s);
    std::string msg = error_of([&] { recorded.elapsed_since(never); }, ErrorKind::Argument);
    CHECK(msg == std::string(name) +
                     ": elapsed_since of an event that was never recorded (the start event)");
    msg = error_of([&] { never.elapsed_since(recorded); }, ErrorKind::Argument);
    CHECK(msg == std::string(name) +
                     ": elapsed_since of an event that was never recorded (the end event)");
    msg = error_of([&] { never.wait_in(s); }, ErrorKind::Argument);
    CHECK(msg == std::string(name) + ": wait_in of an event that was never recorded");
    s.synchronize();
    CHECK(recorded.elapsed_since(recorded) == 0.0);
  }
}
