// \file The SIMT interpreter's deadline: a while loop that no thread leaves stops with a
// DeviceFault naming the kernel, the loop and the limit once the deadline passes.
#include <chrono>
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;
using tessera::interp::Deadline;

namespace {

// Every thread loops while its value differs from *%flag's... which nothing changes.
const std::string kEndless = kernel(
    R"(func @endless(%out: ptr<i32>, %s: i32, %stop: i32) attributes {stage = "simt", threads = 64, subgroup = 8} {)",
    R"(
  %final = while %tid ({
  ^(%v: i32):
    %go = cmp_ne %stop, %c1 : i1
    condition %go, %v
  }, {
  ^(%v2: i32):
    %v3 = add %v2, %c1 : i32
    yield %v3
  }) : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %final {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt deadline: a while no thread leaves stops at the deadline, naming the loop") {
  for (int sg : kSubgroups) {
    CAPTURE(sg);
    SimtKernel k(kEndless, sg);
    std::vector<int32_t> out(64, -1);
    HostMemory mem;
    SimtOptions options;
    options.deadline = Deadline::after(0.05, "TESSERA_TIMEOUT");
    const auto t0 = std::chrono::steady_clock::now();
    std::string msg =
        error_of([&] { k.run_opts(mem, Grid{}, options, mem.add(out), int32_t{sg}, int32_t{0}); });
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(took >= 0.05);
    CHECK(took < 2.0);
    CHECK(msg.find("timed out: still running after the time limit of 0.05 s (TESSERA_TIMEOUT) in "
                   "kernel 'endless' at k.tir:") == 0);
    CHECK(out == std::vector<int32_t>(64, -1));
    // With %stop = 1 every thread leaves at once: the loop is fine, only its length was not.
    options.deadline = Deadline::after(10);
    k.run_opts(mem, Grid{}, options, mem.add(out), int32_t{sg}, int32_t{1});
    CHECK(out[5] == 5);
  }
}
