// \file Global memory in the SIMT interpreter: predicated vector loads with `other` values and
// predicated vector stores, the alignment and bounds faults, atomics from many threads on one
// address, and seeded store/atomic orders that make order-dependent results visible.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

// Thread t loads x[4t .. 4t+4) if 4t < n (else -1, -2, -3, -4) and stores the four values at
// out[4t ..) if t is even.
const std::string kVector = kernel(
    R"(func @vec(%x: ptr<f32>, %out: ptr<f32>, %s: i32, %n: i32) attributes {stage = "simt", threads = 32, subgroup = 8} {)",
    R"(
  %c4 = constant {value = 4} : i32
  %i = mul %tid, %c4 : i32
  %in = cmp_lt %i, %n : i1
  %px = ptr_add %x, %i : ptr<f32>
  %o0 = constant {value = -1.0} : f32
  %o1 = constant {value = -2.0} : f32
  %o2 = constant {value = -3.0} : f32
  %o3 = constant {value = -4.0} : f32
  %a, %b, %c, %d = global_load %px, %in, %o0, %o1, %o2, %o3 {align = 16, width = 4} : f32, f32, f32, f32 loc("vec.cpp":9:1)
  %odd = and %tid, %c1 : i32
  %even = cmp_eq %odd, %c0 : i1
  %po = ptr_add %out, %i : ptr<f32>
  global_store %po, %even, %a, %b, %c, %d {align = 16, width = 4} loc("vec.cpp":13:1)
)");

}  // namespace

TEST_CASE("simt memory: predicated width-4 loads take `other` values, predicated stores skip") {
  SimtKernel k(kVector);
  std::vector<float> x(64);  // malloc aligns to 16 bytes
  std::iota(x.begin(), x.end(), 100.0f);
  std::vector<float> out(128, 0.5f);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(x), mem.add(out), int32_t{8}, int32_t{40});
  for (int t = 0; t < 32; ++t) {
    for (int w = 0; w < 4; ++w) {
      const float got = out[static_cast<size_t>(4 * t + w)];
      if (t % 2) {
        CHECK(got == 0.5f);  // not stored
        continue;
      }
      CHECK(got ==
            (4 * t < 40 ? 100.0f + static_cast<float>(4 * t + w) : -1.0f - static_cast<float>(w)));
    }
  }
}

TEST_CASE("simt memory: a load misaligned to `align` is a DeviceFault") {
  SimtKernel k(kVector);
  std::vector<float> x(160);
  std::vector<float> out(128);
  HostMemory mem;
  const uint64_t base = mem.add(x);
  REQUIRE(base % 16 == 0);
  mem.add(out);
  char want[200];
  std::snprintf(want, sizeof want,
                "misaligned load in kernel 'vec' at vec.cpp:9, program (0, 0, 0), thread 0: "
                "address 0x%llx (16 bytes) is not aligned to 16 bytes",
                static_cast<unsigned long long>(base + 4));
  CHECK(error_of([&] {
          k.run(mem, Grid{}, base + 4, reinterpret_cast<uint64_t>(out.data()), int32_t{8},
                int32_t{128});
        }) == want);
}

TEST_CASE("simt memory: a vector load running past its buffer is a DeviceFault naming the thread") {
  SimtKernel k(kVector);
  std::vector<float> x(100);  // thread 25 reads x[100 .. 104)
  std::vector<float> out(128);
  HostMemory mem;
  const uint64_t base = mem.add(x);
  REQUIRE(base % 16 == 0);
  char want[200];
  std::snprintf(want, sizeof want,
                "out-of-bounds load in kernel 'vec' at vec.cpp:9, program (0, 0, 0), thread 25: "
                "address 0x%llx (16 bytes) is not inside a live buffer",
                static_cast<unsigned long long>(base + 400));
  CHECK(error_of([&] { k.run(mem, Grid{}, base, mem.add(out), int32_t{8}, int32_t{128}); }) ==
        want);
  // The same load with a predicate that masks the tail off touches nothing.
  k.run(mem, Grid{}, base, mem.add(out), int32_t{8}, int32_t{100});
}

namespace {

// Every thread of every program: old = atomic_rmw {OP} counter, tid + 1; out[program * T + tid]
// = old.
const std::string kAtomic = kernel(
    R"(func @atomic(%counter: ptr<{T}>, %out: ptr<{T}>, %s: i32) attributes {stage = "simt", threads = 256, subgroup = 32} {)",
    R"(
  %one = constant {value = 1} : i32
  %t1 = add %tid, %one : i32
  %v = cast %t1 : {T}
  %old = atomic_rmw %counter, %v {op = "{OP}"} : {T}
  %pid = program_id {axis = 0} : i32
  %c256 = constant {value = 256} : i32
  %row = mul %pid, %c256 : i32
  %i = add %row, %tid : i32
  %p = ptr_add %out, %i : ptr<{T}>
  global_store %p, %true, %old {align = {ALIGN}, width = 1}
)");

}  // namespace

TEST_CASE("simt memory: integer atomic adds from 4 x 256 threads on one address sum exactly") {
  SimtKernel k(subst(kAtomic, {{"T", "i32"}, {"OP", "add"}, {"ALIGN", "4"}}));
  for (uint64_t seed : {0, 1, 2}) {
    std::vector<int32_t> counter(1, 0);
    std::vector<int32_t> old(4 * 256, -1);
    HostMemory mem;
    SimtOptions options;
    options.schedule_seed = seed;
    k.run_opts(mem, Grid{4}, options, mem.add(counter), mem.add(old), int32_t{32});
    CHECK(counter[0] == 4 * (256 * 257 / 2));
    // Every old value is a distinct prefix sum of the order the adds landed in.
    CHECK(std::set<int32_t>(old.begin(), old.end()).size() == old.size());
    CHECK(*std::min_element(old.begin(), old.end()) == 0);
  }
}

TEST_CASE("simt memory: the schedule seed changes the order of atomics and stores in an op") {
  // Float sums of values of very different magnitudes depend on the order.
  SimtKernel k(subst(kAtomic, {{"T", "f32"}, {"OP", "add"}, {"ALIGN", "4"}}));
  std::set<float> sums;
  std::set<std::vector<float>> olds;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    std::vector<float> counter(1, 1e8f);
    std::vector<float> old(256);
    HostMemory mem;
    SimtOptions options;
    options.schedule_seed = seed;
    k.run_opts(mem, Grid{1}, options, mem.add(counter), mem.add(old), int32_t{32});
    sums.insert(counter[0]);
    olds.insert(old);
  }
  CHECK(olds.size() == 8);
  CHECK(sums.size() > 1);
  // And a seed is a fixed order: the same seed twice gives the same result.
  std::vector<float> again[2];
  for (auto& old : again) {
    std::vector<float> counter(1, 1e8f);
    old.resize(256);
    HostMemory mem;
    SimtOptions options;
    options.schedule_seed = 5;
    k.run_opts(mem, Grid{1}, options, mem.add(counter), mem.add(old), int32_t{32});
  }
  CHECK(again[0] == again[1]);
}

TEST_CASE("simt memory: atomic max and xchg from many threads") {
  SimtKernel max(subst(kAtomic, {{"T", "i64"}, {"OP", "max"}, {"ALIGN", "8"}}));
  std::vector<int64_t> counter(1, 17);
  std::vector<int64_t> old(256);
  HostMemory mem;
  max.run(mem, Grid{}, mem.add(counter), mem.add(old), int32_t{32});
  CHECK(counter[0] == 256);
  SimtKernel xchg(subst(kAtomic, {{"T", "u16"}, {"OP", "xchg"}, {"ALIGN", "2"}}));
  std::vector<uint16_t> c16(1, 0);
  std::vector<uint16_t> old16(256);
  xchg.run(mem, Grid{}, mem.add(c16), mem.add(old16), int32_t{32});
  // The values form one chain: every value but the last one stored was read back by one thread.
  std::vector<uint16_t> seen(old16);
  seen.push_back(c16[0]);
  std::sort(seen.begin(), seen.end());
  std::vector<uint16_t> want(257);
  std::iota(want.begin(), want.end(), uint16_t{0});
  CHECK(seen == want);
}

namespace {

// Threads whose %mask bit is set try cas(lock, 0, tid + 1); out[tid] = old. Others
// atomic-add 0 with a false mask and store their result (zero bits).
const std::string kCas = kernel(
    R"(func @cas(%lock: ptr<i32>, %out: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 64, subgroup = 8} {)",
    R"(
  %t1 = add %tid, %c1 : i32
  %old = atomic_cas %lock, %c0, %t1 : i32
  %false = constant {value = 0} : i1
  %none = atomic_rmw %lock, %t1, %false {op = "add"} : i32
  %both = add %old, %none : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %both {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt memory: atomic_cas lets exactly one thread win, a masked-off atomic yields 0") {
  SimtKernel k(kCas);
  for (uint64_t seed : {0, 3}) {
    std::vector<int32_t> lock(1, 0);
    std::vector<int32_t> out(64, -1);
    HostMemory mem;
    SimtOptions options;
    options.schedule_seed = seed;
    k.run_opts(mem, Grid{}, options, mem.add(lock), mem.add(out), int32_t{8});
    CHECK(lock[0] >= 1);
    CHECK(lock[0] <= 64);
    CHECK(std::count(out.begin(), out.end(), 0) == 1);
    CHECK(out[static_cast<size_t>(lock[0] - 1)] == 0);  // the winner saw the free lock
    CHECK(std::count(out.begin(), out.end(), lock[0]) == 63);
  }
}

namespace {

// Every thread stores its tid to out[0]; thread t also stores to out[1 + t].
const std::string kSameAddress = kernel(
    R"(func @same(%out: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 64, subgroup = 32} {)",
    R"(
  global_store %out, %true, %tid {align = 4, width = 1}
  %t1 = add %tid, %c1 : i32
  %p = ptr_add %out, %t1 : ptr<i32>
  global_store %p, %true, %tid {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt memory: which of many stores to one address lands depends on the seed") {
  SimtKernel k(kSameAddress);
  std::set<int32_t> winners;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    std::vector<int32_t> out(65, -1);
    HostMemory mem;
    SimtOptions options;
    options.schedule_seed = seed;
    k.run_opts(mem, Grid{}, options, mem.add(out), int32_t{32});
    winners.insert(out[0]);
    for (int t = 0; t < 64; ++t) CHECK(out[static_cast<size_t>(1 + t)] == t);
  }
  CHECK(winners.size() > 1);
}

namespace {

// i1 and u8 vectors: 16 u8 at src + 16t copied to dst, and an i1 load of the first byte.
const std::string kBytes = kernel(
    R"(func @bytes(%src: ptr<u8>, %dst: ptr<u8>, %flags: ptr<i1>, %fout: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 8, subgroup = 8} {)",
    R"(
  %c16 = constant {value = 16} : i32
  %i = mul %tid, %c16 : i32
  %ps = ptr_add %src, %i : ptr<u8>
  %z = constant {value = 0} : u8
  %b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7, %b8, %b9, %b10, %b11, %b12, %b13, %b14, %b15 = global_load %ps, %true, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z {align = 16, width = 16} : u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8
  %pd = ptr_add %dst, %i : ptr<u8>
  global_store %pd, %true, %b15, %b14, %b13, %b12, %b11, %b10, %b9, %b8, %b7, %b6, %b5, %b4, %b3, %b2, %b1, %b0 {align = 16, width = 16}
  %pf = ptr_add %flags, %tid : ptr<i1>
  %no = constant {value = 0} : i1
  %f = global_load %pf, %true, %no {align = 1, width = 1} : i1
  %fi = cast %f : i32
  %po = ptr_add %fout, %tid : ptr<i32>
  global_store %po, %true, %fi {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt memory: width-16 byte vectors, and i1 loads read any non-zero byte as 1") {
  SimtKernel k(kBytes);
  std::vector<uint8_t> src(128), dst(128, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 3);
  std::vector<uint8_t> flags = {0, 1, 2, 255, 0, 0, 7, 1};
  std::vector<int32_t> fout(8, -1);
  HostMemory mem;
  k.run(mem, Grid{}, mem.add(src), mem.add(dst), mem.add(flags), mem.add(fout), int32_t{8});
  for (size_t t = 0; t < 8; ++t) {
    for (size_t w = 0; w < 16; ++w) CHECK(dst[16 * t + w] == src[16 * t + 15 - w]);
    CHECK(fout[t] == (flags[t] != 0 ? 1 : 0));
  }
}
