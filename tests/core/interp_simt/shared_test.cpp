// \file Shared memory in the SIMT interpreter: a reduction across subgroups through shared memory
// and barriers at S = 8, 32, 64; the race detector (a missing barrier, write-after-read, writes of
// different and of equal values); the poison of unwritten elements in every workgroup; bounds and
// width checks.
#include <cstring>
#include <string>
#include <vector>

#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;

namespace {

// out[program] = sum of x[program * 128 + 0 .. 128): a butterfly per subgroup, lane 0 of each
// subgroup stores its sum in shared_0[subgroup], {BARRIER}, thread 0 adds the partial sums.
const std::string kBlockSum = kernel(
    R"(func @block_sum(%x: ptr<f32>, %out: ptr<f32>, %s: i32, %steps: i32, %groups: i32) attributes {stage = "simt", threads = 128, subgroup = 32, shared_0 = tile<16xf32>} {)",
    R"(
  %pid = program_id {axis = 0} : i32
  %c128 = constant {value = 128} : i32
  %row = mul %pid, %c128 : i32
  %i = add %row, %tid : i32
  %px = ptr_add %x, %i : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %v = global_load %px, %true, %zero {align = 4, width = 1} : f32
  %half = shr %s, %c1 : i32
  %sum, %dist = for %c0, %steps, %c1, %v, %half ({
  ^(%k: i32, %acc: f32, %d: i32):
    %other = shuffle %acc, %d {mode = "xor"} : f32
    %next = add %acc, %other : f32
    %d2 = shr %d, %c1 : i32
    yield %next, %d2
  }) : f32, i32
  %first = cmp_eq %lane, %c0 : i1
  if %first ({
    shared_store %sg, %sum {buffer = 0, width = 1} loc("sum.cpp":20:1)
    yield
  }, {
    yield
  })
  {BARRIER}
  %leader = cmp_eq %tid, %c0 : i1
  if %leader ({
    %total = for %c0, %groups, %c1, %zero ({
    ^(%g: i32, %acc2: f32):
      %part = shared_load %g {buffer = 0, width = 1} : f32 loc("sum.cpp":30:1)
      %acc3 = add %acc2, %part : f32
      yield %acc3
    }) : f32
    %po = ptr_add %out, %pid : ptr<f32>
    global_store %po, %true, %total {align = 4, width = 1}
    yield
  }, {
    yield
  })
)");

struct BlockSum {
  std::vector<float> x = std::vector<float>(3 * 128);
  std::vector<float> out = std::vector<float>(3, -1);
  HostMemory mem;
  BlockSum() {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 13) - 6;
  }
  void run(int s, const char* barrier, SimtOptions options = {}) {
    SimtKernel k(subst(kBlockSum, {{"BARRIER", barrier}}), s);
    int steps = 0;
    while ((1 << steps) < s) ++steps;
    k.run_opts(mem, Grid{3}, options, mem.add(x), mem.add(out), int32_t{s}, int32_t{steps},
               int32_t{128 / s});
  }
  float expected(int program) const {
    float sum = 0;
    for (int i = 0; i < 128; ++i) sum += x[static_cast<size_t>(program * 128 + i)];
    return sum;
  }
};

}  // namespace

TEST_CASE("simt shared: a cross-subgroup reduction through shared memory, at S = 8, 32, 64") {
  for (int s : kSubgroups) {
    CAPTURE(s);
    BlockSum b;
    b.run(s, "barrier");
    for (int p = 0; p < 3; ++p) CHECK(b.out[static_cast<size_t>(p)] == b.expected(p));
  }
}

TEST_CASE("simt shared: the same reduction without its barrier is a race") {
  BlockSum b;
  CHECK(error_of([&] { b.run(8, ""); }) ==
        "shared-memory race in kernel 'block_sum' at sum.cpp:30: thread 0 reads shared_0[1] "
        "written by thread 8 at sum.cpp:20 with no barrier between (program (0, 0, 0))");
  // Lock-step execution hides the missing barrier from the values: only the detector sees it.
  SimtOptions unchecked;
  unchecked.check_races = false;
  b.run(8, "", unchecked);
  for (int p = 0; p < 3; ++p) CHECK(b.out[static_cast<size_t>(p)] == b.expected(p));
}

namespace {

// Every thread reads shared_0[0] (written by thread 0 before a barrier); then thread {WRITER}
// writes it again, {BARRIER}.
const std::string kReadThenWrite = kernel(
    R"(func @war(%out: ptr<i32>, %s: i32, %writer: i32) attributes {stage = "simt", threads = 64, subgroup = 32, shared_0 = tile<1xi32>} {)",
    R"(
  %is0 = cmp_eq %tid, %c0 : i1
  if %is0 ({
    shared_store %c0, %tid {buffer = 0, width = 1}
    yield
  }, {
    yield
  })
  barrier
  %v = shared_load %c0 {buffer = 0, width = 1} : i32 loc("war.cpp":5:1)
  {BARRIER}
  %me = cmp_eq %tid, %writer : i1
  if %me ({
    shared_store %c0, %c1 {buffer = 0, width = 1} loc("war.cpp":7:1)
    yield
  }, {
    yield
  })
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %v {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt shared: a write over other threads' reads with no barrier is a race") {
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  SimtKernel race(subst(kReadThenWrite, {{"BARRIER", ""}}));
  CHECK(error_of([&] { race.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{0}); }) ==
        "shared-memory race in kernel 'war' at war.cpp:7: thread 0 writes shared_0[0] read by "
        "thread 1 at war.cpp:5 with no barrier between (program (0, 0, 0))");
  CHECK(error_of([&] { race.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{5}); }) ==
        "shared-memory race in kernel 'war' at war.cpp:7: thread 5 writes shared_0[0] read by "
        "thread 0 at war.cpp:5 with no barrier between (program (0, 0, 0))");
  SimtKernel fixed(subst(kReadThenWrite, {{"BARRIER", "barrier"}}));
  fixed.run(mem, Grid{}, mem.add(out), int32_t{32}, int32_t{5});
  for (int32_t v : out) CHECK(v == 0);
}

namespace {

// Every thread of a subgroup writes {VALUE} to shared_0[subgroup], then a barrier, then reads it.
const std::string kReplicated = kernel(
    R"(func @replicated(%out: ptr<i32>, %s: i32) attributes {stage = "simt", threads = 64, subgroup = 8, shared_0 = tile<8xi32>} {)",
    R"(
  shared_store %sg, {VALUE} {buffer = 0, width = 1} loc("rep.cpp":3:1)
  barrier
  %v = shared_load %sg {buffer = 0, width = 1} : i32
  %p = ptr_add %out, %tid : ptr<i32>
  global_store %p, %true, %v {align = 4, width = 1}
)");

}  // namespace

TEST_CASE(
    "simt shared: threads writing one value to one element is no race; different values are") {
  std::vector<int32_t> out(64, -1);
  HostMemory mem;
  SimtKernel same(subst(kReplicated, {{"VALUE", "%sg"}}));
  same.run(mem, Grid{}, mem.add(out), int32_t{8});
  for (int t = 0; t < 64; ++t) CHECK(out[static_cast<size_t>(t)] == t / 8);
  SimtKernel different(subst(kReplicated, {{"VALUE", "%lane"}}));
  CHECK(error_of([&] { different.run(mem, Grid{}, mem.add(out), int32_t{8}); }) ==
        "shared-memory race in kernel 'replicated' at rep.cpp:3: thread 1 writes shared_0[0] "
        "written by thread 0 at rep.cpp:3 with no barrier between (program (0, 0, 0))");
}

namespace {

// Program 0 fills shared_0 (i32) and shared_1 (f32); every program then reads both back.
const std::string kPoison = kernel(
    R"(func @poison(%out: ptr<i32>, %outf: ptr<f32>, %s: i32) attributes {stage = "simt", threads = 32, subgroup = 8, shared_0 = tile<32xi32>, shared_1 = tile<32xf32>} {)",
    R"(
  %pid = program_id {axis = 0} : i32
  %is0 = cmp_eq %pid, %c0 : i1
  if %is0 ({
    %seven = constant {value = 7} : i32
    shared_store %tid, %seven {buffer = 0, width = 1}
    %half = constant {value = 0.5} : f32
    shared_store %tid, %half {buffer = 1, width = 1}
    yield
  }, {
    yield
  })
  barrier
  %v = shared_load %tid {buffer = 0, width = 1} : i32
  %f = shared_load %tid {buffer = 1, width = 1} : f32
  %c32 = constant {value = 32} : i32
  %row = mul %pid, %c32 : i32
  %i = add %row, %tid : i32
  %p = ptr_add %out, %i : ptr<i32>
  global_store %p, %true, %v {align = 4, width = 1}
  %pf = ptr_add %outf, %i : ptr<f32>
  global_store %pf, %true, %f {align = 4, width = 1}
)");

}  // namespace

TEST_CASE("simt shared: unwritten shared memory reads as poison in every workgroup, not zero") {
  SimtKernel k(kPoison);
  std::vector<int32_t> out(64, 0);
  std::vector<float> outf(64, 0);
  HostMemory mem;
  k.run(mem, Grid{2}, mem.add(out), mem.add(outf), int32_t{8});
  uint32_t poison_bits = 0xCDCDCDCDu;
  float poison_float;
  std::memcpy(&poison_float, &poison_bits, 4);
  for (int t = 0; t < 32; ++t) {
    CHECK(out[static_cast<size_t>(t)] == 7);
    CHECK(outf[static_cast<size_t>(t)] == 0.5f);
    // Program 1 does not see program 0's data: its workgroup's shared memory is fresh poison.
    CHECK(static_cast<uint32_t>(out[static_cast<size_t>(32 + t)]) == poison_bits);
    CHECK(std::memcmp(&outf[static_cast<size_t>(32 + t)], &poison_float, 4) == 0);
  }
}

namespace {

const std::string kIndex = kernel(
    R"(func @index(%s: i32, %off: i32) attributes {stage = "simt", threads = 64, subgroup = 32, shared_0 = tile<128xi32>} {)",
    R"(
  %c2 = constant {value = 2} : i32
  %twice = mul %tid, %c2 : i32
  %i = add %twice, %off : i32
  shared_store %i, %tid, %tid {buffer = 0, width = 2} loc("idx.cpp":4:1)
  barrier
  %a, %b = shared_load %i {buffer = 0, width = 2} : i32, i32 loc("idx.cpp":6:1)
)");

}  // namespace

TEST_CASE("simt shared: an index past the buffer or not a multiple of the width is a DeviceFault") {
  SimtKernel k(kIndex);
  HostMemory mem;
  k.run(mem, Grid{}, int32_t{32}, int32_t{0});
  CHECK(error_of([&] { k.run(mem, Grid{}, int32_t{32}, int32_t{2}); }) ==
        "out-of-bounds shared store in kernel 'index' at idx.cpp:4, program (0, 0, 0), thread 63: "
        "shared_0[128..129] is outside its 128 elements");
  CHECK(error_of([&] { k.run(mem, Grid{}, int32_t{32}, int32_t{-2}); }) ==
        "out-of-bounds shared store in kernel 'index' at idx.cpp:4, program (0, 0, 0), thread 0: "
        "shared_0[-2..-1] is outside its 128 elements");
  CHECK(error_of([&] { k.run(mem, Grid{}, int32_t{32}, int32_t{1}); }) ==
        "misaligned shared store in kernel 'index' at idx.cpp:4, program (0, 0, 0), thread 0: "
        "index 1 of shared_0 is not a multiple of width 2");
}
