// \file Shuffles in the SIMT interpreter: the four modes at subgroup sizes 8, 32 and 64 against
// their definition in core/ir/simt.h, a butterfly reduction per subgroup, 8-byte values, and the
// errors: a shuffle reading an inactive lane, one run by part of a subgroup, a lane out of range.
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

constexpr int kThreads = 128;

// out[tid] = shuffle(tid, n) in mode MODE.
const std::string kShuffle = kernel(
    R"(func @shuffle(%out: ptr<i32>, %s: i32, %n: i32) attributes {stage = "simt", threads = 128, subgroup = 32} {)",
    R"(
  %v = shuffle %tid, %n {mode = "{MODE}"} : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %v {align = 4, width = 1}
)");

/// The thread whose value thread t receives, by core/ir/simt.h.
int source(const std::string& mode, int t, int s, int n) {
  const int lane = t % s, base = t - lane;
  if (mode == "xor") return base + (lane ^ n);
  if (mode == "idx") return base + n;
  const int src = mode == "up" ? lane - n : lane + n;
  return base + (src < 0 || src >= s ? lane : src);
}

std::vector<int32_t> run_shuffle(const std::string& mode, int s, int n) {
  SimtKernel k(subst(kShuffle, {{"MODE", mode}}), s);
  std::vector<int32_t> out(kThreads, -1);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(out), int32_t{s}, int32_t{n});
  return out;
}

}  // namespace

TEST_CASE("simt shuffle: xor, idx, up and down at S = 8, 32, 64") {
  for (int s : kSubgroups) {
    const std::vector<std::pair<std::string, int>> cases = {
        {"xor", 1},     {"xor", 3},      {"xor", s - 1}, {"idx", 0}, {"idx", 5},
        {"idx", s - 1}, {"up", 1},       {"up", 3},      {"up", s},  {"down", 1},
        {"down", 7},    {"down", s + 2}, {"up", 0},      {"down", 0}};
    for (const auto& [mode, n] : cases) {
      CAPTURE(s);
      CAPTURE(mode);
      CAPTURE(n);
      const std::vector<int32_t> out = run_shuffle(mode, s, n);
      for (int t = 0; t < kThreads; ++t)
        CHECK(out[static_cast<size_t>(t)] == source(mode, t, s, n));
    }
  }
  // Spot checks of the definition itself, at S = 8: up/down past the end keep their own value.
  CHECK(source("up", 9, 8, 3) == 9);
  CHECK(source("up", 12, 8, 3) == 9);
  CHECK(source("down", 14, 8, 3) == 14);
  CHECK(source("down", 12, 8, 3) == 15);
}

namespace {

// out[tid] = the sum of x over the thread's subgroup, by a butterfly of xor shuffles with
// distances s/2, s/4, ..., 1 (log2(s) steps, a loop carrying the partial sum and the distance);
// f32 and f64 at once.
const std::string kButterfly = kernel(
    R"(func @butterfly(%x: ptr<f32>, %out: ptr<f32>, %out64: ptr<f64>, %s: i32, %steps: i32) attributes {stage = "simt", threads = 128, subgroup = 32} {)",
    R"(
  %px = ptr_add %x, %tid : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %v = global_load %px, %true, %zero {align = 4, width = 1} : f32
  %v64 = cast %v : f64
  %half = shr %s, %c1 : i32
  %sum, %sum64, %dist = for %c0, %steps, %c1, %v, %v64, %half ({
  ^(%i: i32, %acc: f32, %acc64: f64, %d: i32):
    %other = shuffle %acc, %d {mode = "xor"} : f32
    %next = add %acc, %other : f32
    %other64 = shuffle %acc64, %d {mode = "xor"} : f64
    %next64 = add %acc64, %other64 : f64
    %d2 = shr %d, %c1 : i32
    yield %next, %next64, %d2
  }) : f32, f64, i32
  %po = ptr_add %out, %tid : ptr<f32>
  global_store %po, %true, %sum {align = 4, width = 1}
  %po64 = ptr_add %out64, %tid : ptr<f64>
  global_store %po64, %true, %sum64 {align = 8, width = 1}
)");

}  // namespace

TEST_CASE("simt shuffle: a butterfly reduction sums each subgroup at S = 8, 32, 64") {
  std::vector<float> x(kThreads);
  for (int t = 0; t < kThreads; ++t)
    x[static_cast<size_t>(t)] = static_cast<float>((t * 37) % 101) - 50;
  for (int s : kSubgroups) {
    CAPTURE(s);
    int steps = 0;
    while ((1 << steps) < s) ++steps;
    SimtKernel k(kButterfly, s);
    std::vector<float> out(kThreads, -1);
    std::vector<double> out64(kThreads, -1);
    HostMemory mem;
    k.run(mem, Grid{}, mem.add(x), mem.add(out), mem.add(out64), int32_t{s}, int32_t{steps});
    for (int t = 0; t < kThreads; ++t) {
      double expected = 0;
      for (int u = t - t % s; u < t - t % s + s; ++u) expected += x[static_cast<size_t>(u)];
      CHECK(out[static_cast<size_t>(t)] == expected);  // small integers: exact in any order
      CHECK(out64[static_cast<size_t>(t)] == expected);
    }
  }
}

namespace {

// Lanes below %k run a shuffle by %n (xor) inside an if; the others skip it.
const std::string kPartial = kernel(
    R"(func @partial(%out: ptr<i32>, %s: i32, %k: i32, %n: i32) attributes {stage = "simt", threads = 64, subgroup = 8} {)",
    R"(
  %in = cmp_lt %lane, %k : i1
  %r = if %in ({
    %v = shuffle %tid, %n {mode = "xor"} : i32 loc("shfl.cpp":9:1)
    yield %v
  }, {
    yield %tid
  }) : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %r {align = 4, width = 1}
)");

std::string partial_error(int k, int n) {
  SimtKernel kern(kPartial, 8);
  std::vector<int32_t> out(64);
  HostMemory mem;
  return error_of([&] { kern.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{k}, int32_t{n}); });
}

}  // namespace

TEST_CASE("simt shuffle: reading an inactive lane is a DeviceFault") {
  CHECK(partial_error(4, 4) ==
        "shuffle from an inactive lane in kernel 'partial' at shfl.cpp:9, program (0, 0, 0), "
        "thread 0: lane 0 of subgroup 0 reads lane 4, which is inactive");
}

TEST_CASE("simt shuffle: part of a subgroup running a shuffle is a DeviceFault") {
  // Lanes 0..3 read lanes 1, 0, 3, 2, all active, but lanes 4..7 are not there.
  CHECK(partial_error(4, 1) ==
        "shuffle in divergent control flow in kernel 'partial' at shfl.cpp:9, program (0, 0, "
        "0): 4 of 8 lanes of subgroup 0 execute it (lane 4 does not)");
}

TEST_CASE("simt shuffle: a subgroup-uniform branch may shuffle") {
  // Every lane of every subgroup takes the branch (k = 8) or none does (k = 0).
  for (int k : {0, 8}) {
    SimtKernel kern(kPartial, 8);
    std::vector<int32_t> out(64, -1);
    HostMemory mem;
    kern.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{k}, int32_t{2});
    for (int t = 0; t < 64; ++t) CHECK(out[static_cast<size_t>(t)] == (k ? t ^ 2 : t));
  }
}

TEST_CASE("simt shuffle: an xor or idx lane outside the subgroup is a DeviceFault") {
  SimtKernel k(subst(kShuffle, {{"MODE", "xor"}}), 32);
  std::vector<int32_t> out(kThreads);
  HostMemory mem;
  const std::string msg =
      error_of([&] { k.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{32}); });
  CHECK(msg.find("shuffle from a lane outside the subgroup in kernel 'shuffle' at k.tir:") == 0);
  CHECK(msg.find(", program (0, 0, 0), thread 0: lane 0 of subgroup 0 reads lane 32 (subgroup "
                 "size 32)") != std::string::npos);
  SimtKernel idx(subst(kShuffle, {{"MODE", "idx"}}), 8);
  CHECK(error_of([&] {
          idx.run(mem, Grid{}, mem.add(out), int32_t{8}, int32_t{-1});
        }).find("lane 0 of subgroup 0 reads lane -1 (subgroup size 8)") != std::string::npos);
}
