// \file No wait without an answer on CUDA: synchronization polls with TESSERA_TIMEOUT, so a kernel
// that outlasts it ends the wait with a DeviceFault naming the kernel and the limit, and the
// device is lost for the rest of the process (run in a child process); events never recorded
// are Argument errors; ordinary waits still return their results.
#include <chrono>
#include <cstdlib>

#include "helpers.h"

namespace tl = tessera::tl;

namespace cuda_test {
namespace {

/// Counts to `limit` while *flag != 0: seconds on a GPU for limit = 2^30, at once for flag = 0.
void spin_kernel(tl::ptr<int> flag, tl::ptr<int> out, tl::i32 limit) {
  auto f = tl::load(flag);
  auto count = f * 0;
  tl::while_([&] { return (f != 0) & (count < limit); }, [&] { count = count + 1; });
  tl::store(out, count);
}

TEST_CASE(
    "cuda timeout: a kernel running past TESSERA_TIMEOUT ends the wait and the device is lost") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda timeout: a kernel running past TESSERA_TIMEOUT ends the wait and the "
                   "device is lost"))
    return;
  auto k = TESSERA_KERNEL(spin_kernel, flag, out, limit);
  auto flag = dev.upload(std::vector<int>{0});
  auto out = dev.upload(std::vector<int>{-1});
  k[{1}](flag, out, 1 << 30);  // compiled and run once while the limit is the default
  CHECK(out.download() == std::vector<int>{0});
  flag.upload(std::vector<int>{1});
  dev.synchronize();

  setenv("TESSERA_TIMEOUT", "0.5", 1);
  k[{1}](flag, out, 1 << 30);
  const auto t0 = std::chrono::steady_clock::now();
  auto [kind, msg] = error_of([&] { dev.synchronize(); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  unsetenv("TESSERA_TIMEOUT");
  CHECK(kind == ErrorKind::DeviceFault);
  CHECK(contains(msg,
                 "cuda:0 was lost: it stopped answering (cuStreamSynchronize timed out after "
                 "0.5 s (TESSERA_TIMEOUT) waiting for kernel spin_kernel)"));
  CHECK(took >= 0.5);
  CHECK(took < 3.0);
  // Later use says the device was lost, at once; the process goes on.
  auto [later_kind, later] = error_of([&] { dev.alloc<int>(4); });
  CHECK(later_kind == ErrorKind::DeviceFault);
  CHECK(contains(later, "cuda:0 was lost: it stopped answering"));
  CHECK(Device::open("host").upload(std::vector<int>{7}).download() == std::vector<int>{7});
}

TEST_CASE("cuda timeout: waits that poll still return results, unrecorded events are Argument") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto k = TESSERA_KERNEL(spin_kernel, flag, out, limit);
  auto flag = dev.upload(std::vector<int>{1});
  auto out = dev.upload(std::vector<int>{-1});
  tessera::Stream s = dev.create_stream();
  tessera::Event start = dev.create_event(), stop = dev.create_event(), never = dev.create_event();
  start.record(s);
  k[{{1}, {}, &s}](flag, out, 100000);
  stop.record(s);
  CHECK(stop.elapsed_since(start) > 0.0);
  CHECK(out.download(&s) == std::vector<int>{100000});
  auto [kind, msg] = error_of([&] { stop.elapsed_since(never); });
  CHECK(kind == ErrorKind::Argument);
  CHECK(contains(msg, "never recorded"));
  auto [wait_kind, wait_msg] = error_of([&] { never.wait_in(s); });
  CHECK(wait_kind == ErrorKind::Argument);
  CHECK(contains(wait_msg, "never recorded"));
}

}  // namespace
}  // namespace cuda_test
