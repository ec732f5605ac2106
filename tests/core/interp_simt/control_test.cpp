// \file Control flow in the SIMT interpreter: loops whose trip counts differ per thread with
// scalar iteration arguments, while loops that threads leave one by one, divergent ifs with
// results, barriers in uniform and divergent control flow, and a for with step 0.
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

// Thread t runs `for i in [lb, t % 7 * step) step {STEP}` carrying (sum of i, count), then stores
// sum * 1000 + count; a barrier in a uniform loop around it keeps every thread together.
const std::string kLoops = kernel(
    R"(func @loops(%out: ptr<i64>, %s: i32, %lb: i32, %step: i32, %rounds: i32) attributes {stage = "simt", threads = 64, subgroup = 8, shared_0 = tile<1xi32>} {)",
    R"(
  %c7 = constant {value = 7} : i32
  %m = rem %tid, %c7 : i32
  %ub = mul %m, %step : i32
  %zero = constant {value = 0} : i64
  %one = constant {value = 1} : i64
  %total = for %c0, %rounds, %c1, %zero ({
  ^(%r: i32, %carry: i64):
    barrier
    %sum, %count = for %lb, %ub, %step, %zero, %zero ({
    ^(%i: i32, %acc: i64, %n: i64):
      %wide = cast %i : i64
      %acc2 = add %acc, %wide : i64
      %n2 = add %n, %one : i64
      yield %acc2, %n2
    }) : i64, i64
    %c1000 = constant {value = 1000} : i64
    %scaled = mul %sum, %c1000 : i64
    %packed = add %scaled, %count : i64
    %next = add %carry, %packed : i64
    yield %next
  }) : i64
  %p = ptr_add %out, %tid : ptr<i64>
  global_store %p, %true, %total {align = 8, width = 1}
)");

int64_t reference_loop(int t, int lb, int step, int rounds) {
  int64_t sum = 0, count = 0;
  const int ub = t % 7 * step;
  for (int i = lb; step > 0 ? i < ub : i > ub; i += step) {
    sum += i;
    ++count;
  }
  return rounds * (sum * 1000 + count);
}

}  // namespace

TEST_CASE("simt control: for loops with per-thread trip counts and scalar iteration arguments") {
  SimtKernel k(kLoops);
  for (auto [lb, step, rounds] :
       {std::tuple{0, 1, 1}, {0, 3, 2}, {2, 1, 3}, {0, -2, 1}, {5, 2, 0}}) {
    CAPTURE(lb);
    CAPTURE(step);
    std::vector<int64_t> out(64, -1);
    HostMemory mem;
    k.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{lb}, int32_t{step}, int32_t{rounds});
    for (int t = 0; t < 64; ++t)
      CHECK(out[static_cast<size_t>(t)] == reference_loop(t, lb, step, rounds));
  }
}

TEST_CASE("simt control: a for with step 0 is a DeviceFault") {
  SimtKernel k(kLoops);
  std::vector<int64_t> out(64);
  HostMemory mem;
  const std::string msg = error_of(
      [&] { k.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{0}, int32_t{0}, int32_t{1}); });
  CHECK(msg.find("for loop with step 0 in kernel 'loops' at k.tir:") == 0);
  CHECK(msg.find(", program (0, 0, 0), thread 0") != std::string::npos);
}

namespace {

// Collatz: thread t counts the steps from t + 1 to 1 in a while loop (threads leave one by one),
// carrying (value, steps); an if with results picks the next value.
const std::string kCollatz = kernel(
    R"(func @collatz(%out: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 32, subgroup = 8} {)",
    R"(
  %start = add %tid, %c1 : i32
  %final, %steps = while %start, %c0 ({
  ^(%v: i32, %n: i32):
    %go = cmp_ne %v, %c1 : i1
    condition %go, %v, %n
  }, {
  ^(%v2: i32, %n2: i32):
    %odd = and %v2, %c1 : i32
    %is_odd = cmp_ne %odd, %c0 : i1
    %next = if %is_odd ({
      %c3 = constant {value = 3} : i32
      %x3 = mul %v2, %c3 : i32
      %x31 = add %x3, %c1 : i32
      yield %x31
    }, {
      %half = shr %v2, %c1 : i32
      yield %half
    }) : i32
    %n3 = add %n2, %c1 : i32
    yield %next, %n3
  }) : i32, i32
  %c100 = constant {value = 100} : i32
  %scaled = mul %steps, %c100 : i32
  %packed = add %scaled, %final : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %packed {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt control: while loops that threads leave at different iterations, divergent ifs") {
  SimtKernel k(kCollatz);
  std::vector<int32_t> out(32, -1);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(out), int32_t{8});
  for (int t = 0; t < 32; ++t) {
    int v = t + 1, steps = 0;
    while (v != 1) {
      v = v % 2 ? 3 * v + 1 : v / 2;
      ++steps;
    }
    CHECK(out[static_cast<size_t>(t)] == steps * 100 + 1);
  }
}

namespace {

// A barrier inside `if tid < %k`.
const std::string kBranchBarrier = kernel(
    R"(func @branchy(%out: ptr<i32>, %s: i32, %k: i32) attributes {stage = "simt", threads = 128, subgroup = 32, shared_0 = tile<128xi32>} {)",
    R"(
  shared_store %tid, %tid {buffer = 0, width = 1}
  %in = cmp_lt %tid, %k : i1
  %r = if %in ({
    barrier loc("bar.cpp":4:1)
    %c127 = constant {value = 127} : i32
    %j = sub %c127, %tid : i32
    %v = shared_load %j {buffer = 0, width = 1} : i32
    yield %v
  }, {
    yield %tid
  }) : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %r {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt control: a barrier that only some threads reach is a DeviceFault") {
  SimtKernel k(kBranchBarrier);
  std::vector<int32_t> out(128, -1);
  HostMemory mem;
  CHECK(error_of([&] { k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{64}); }) ==
        "barrier in divergent control flow in kernel 'branchy' at bar.cpp:4, program (0, 0, 0): "
        "only 64 of 128 threads reach it (thread 64 does not)");
  // Taken by every thread, the same barrier is fine (and orders the shared accesses).
  k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{128});
  for (int t = 0; t < 128; ++t) CHECK(out[static_cast<size_t>(t)] == 127 - t);
}

TEST_CASE("simt control: a barrier in a loop some threads have left is a DeviceFault") {
  // The loops kernel with a barrier inside the per-thread loop instead of the uniform one.
  std::string text = kLoops;
  const std::string inner = "    ^(%i: i32, %acc: i64, %n: i64):\n";
  text.replace(text.find(inner), inner.size(), inner + "      barrier loc(\"loop.cpp\":9:1)\n");
  SimtKernel k(text);
  std::vector<int64_t> out(64);
  HostMemory mem;
  CHECK(error_of([&] {
          k.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{0}, int32_t{1}, int32_t{1});
        }) ==
        "barrier in divergent control flow in kernel 'loops' at loop.cpp:9, program (0, 0, "
        "0): only 54 of 64 threads reach it (thread 0 does not)");
}

TEST_CASE("simt control: a named barrier waits for exactly its threads, whole warps") {
  // The branchy kernel with named barrier 1 of 64 threads in the branch that %k threads take.
  std::string text = kBranchBarrier;
  const std::string plain = "barrier loc(\"bar.cpp\":4:1)";
  text.replace(text.find(plain), plain.size(),
               "barrier {id = 1, threads = 64} loc(\"bar.cpp\":4:1)");
  SimtKernel k(text);
  std::vector<int32_t> out(128, -1);
  HostMemory mem;
  // The first 64 threads (two warps) take the branch: the barrier completes; each reads the
  // element its mirror thread stored before it.
  k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{64});
  for (int t = 0; t < 64; ++t) CHECK(out[static_cast<size_t>(t)] == 127 - t);
  // 96 threads arrive at a barrier of 64: on a GPU the extra warp waits for a second round that
  // never comes.
  CHECK(error_of([&] { k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{96}); }) ==
        "named barrier that cannot complete (a GPU hangs) in kernel 'branchy' at bar.cpp:4, "
        "program (0, 0, 0): it waits for 64 threads, 96 reach it");
  // Part of a warp: bar.sync counts whole warps.
  CHECK(error_of([&] {
          k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{48});
        }).find("named barrier reached by part of a warp in kernel 'branchy' at bar.cpp:4") !=
        std::string::npos);
}
