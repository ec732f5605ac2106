// \file Dots on tensor cores, end to end: lowered for the simt:32 target (mma, ldmatrix), run in
// the SIMT interpreter and compared with the tile interpreter for M, N, K in {16, 32, 64, 128},
// num_warps in {1, 2, 4, 8} and f16, bf16, f32 (TF32), f32 (IEEE: the FMA form), i8; operands
// stored transposed; which dots take which form.
#include <chrono>

#include "tests/core/lower/dot_helpers.h"

using namespace dot_test;

namespace {

/// The sweep's shapes with M in `ms` for one dtype, warp count and num_stages (1: the operands
/// staged from registers; 3: the loop's loads prefetched by cp.async). Returns how many lowered
/// to mma.
int sweep(DType in, bool ieee, int warps, std::initializer_list<int> ms, int stages) {
  const tessera::target::Target t = simt32_target();
  int mma = 0;
  for (int M : ms)
    for (int N : {16, 32, 64, 128})
      for (int K : {16, 32, 64, 128}) {
        DotCase c;
        c.in = in;
        c.ieee = ieee;
        c.M = M, c.N = N, c.K = K, c.warps = warps, c.stages = stages;
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        auto simt = run_and_compare(c, t, static_cast<uint32_t>(M * 7 + N * 3 + K));
        const int n = count_ops(*simt, ir::OpKind::Mma);
        // The tensor-core form whenever the warps have a 16x8 tile each and K is a whole number
        // of instruction steps; else FMAs.
        const int k = in == DType::f32 ? 8 : in == DType::i8 ? 32 : 16;
        const bool fits = (M / 16) * (N / 8) >= warps && K % k == 0;
        CHECK((n > 0) == (!ieee && fits));
        if (n > 0) CHECK(n == (M / 16) * (N / 8) * (K / k) / warps);
        // Pipelined when at least 2 stages of A and B (and an f32 accumulator tile) fit.
        const int64_t stage_bytes = int64_t{M * K + K * N} * ir::dtype_bytes(in);
        const bool room = 2 * stage_bytes + int64_t{M} * N * 4 <= t.max_shared_bytes;
        CHECK((count_ops(*simt, ir::OpKind::CpAsync) > 0) == (n > 0 && stages > 1 && room));
        mma += n > 0;
      }
  return mma;
}

}  // namespace

// One test case per dtype, warp count, half of the M values (32 shapes each) and num_stages (1
// or 3). Of the (M, N) pairs with M in {16, 32}, those with fewer 16x8 accumulator tiles than
// warps take FMAs: none at 1 and 2 warps, 16x16 at 4, 16x16, 16x32 and 32x16 at 8; i8 needs
// K >= 32 (3 of the 4 K values).
#define SWEEP1(name, dtype, ieee, warps, m0, m1, stages, expected)                            \
  TEST_CASE("lower mma: " name " dots, M in {" #m0 ", " #m1 "}, " #warps " warp(s), " #stages \
            " stage(s)") {                                                                    \
    CHECK(sweep(DType::dtype, ieee, warps, {m0, m1}, stages) == (ieee ? 0 : (expected)));     \
  }
#define SWEEP(name, dtype, ieee, warps, small, large) \
  SWEEP1(name, dtype, ieee, warps, 16, 32, 1, small)  \
  SWEEP1(name, dtype, ieee, warps, 16, 32, 3, small)  \
  SWEEP1(name, dtype, ieee, warps, 64, 128, 1, large) \
  SWEEP1(name, dtype, ieee, warps, 64, 128, 3, large)
#define SWEEP_ALL(name, dtype, ieee, ks)          \
  SWEEP(name, dtype, ieee, 1, 8 * (ks), 8 * (ks)) \
  SWEEP(name, dtype, ieee, 2, 8 * (ks), 8 * (ks)) \
  SWEEP(name, dtype, ieee, 4, 7 * (ks), 8 * (ks)) \
  SWEEP(name, dtype, ieee, 8, 5 * (ks), 8 * (ks))
SWEEP_ALL("f16", f16, false, 4)
SWEEP_ALL("bf16", bf16, false, 4)
SWEEP_ALL("f32 (TF32)", f32, false, 4)
SWEEP_ALL("f32 (IEEE, FMA)", f32, true, 4)
SWEEP_ALL("i8", i8, false, 3)

TEST_CASE("lower mma: operands stored transposed (ldmatrix .trans or scalar fragment reads)") {
  const tessera::target::Target t = simt32_target();
  for (DType in : {DType::f16, DType::bf16, DType::f32, DType::i8})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int warps : {1, 4}) {
          DotCase c;
          c.in = in;
          c.M = 64, c.N = 32, c.K = 64;
          c.ta = ta, c.tb = tb, c.warps = warps;
          CAPTURE(ir::dtype_name(in));
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(warps);
          auto simt = run_and_compare(c, t);
          CHECK(count_ops(*simt, ir::OpKind::Mma) > 0);
          // ldmatrix for an operand stored along K, or (.trans) of 16-bit elements; scalar
          // fragment reads otherwise (A stored K-major, B stored N-major, 8- or 32-bit).
          const bool b16 = ir::dtype_bytes(in) == 2;
          CHECK((count_ops(*simt, ir::OpKind::LdMatrix) > 0) == (b16 || !ta || tb));
        }
}

TEST_CASE("lower mma: the K loop pipelined with cp.async over num_stages buffers") {
  const tessera::target::Target t = simt32_target();
  for (DType in : {DType::f16, DType::bf16, DType::f32, DType::i8})
    for (int stages : {1, 2, 3, 4})
      for (int ta = 0; ta < 2; ++ta) {
        DotCase c;
        c.in = in;
        c.M = 64, c.N = 32, c.K = 256, c.bk = in == DType::i8 ? 64 : 32;
        c.ta = ta, c.tb = !ta, c.warps = 4, c.stages = stages;
        CAPTURE(ir::dtype_name(in));
        CAPTURE(stages);
        CAPTURE(ta);
        auto simt = run_and_compare(c, t);
        CHECK(count_ops(*simt, ir::OpKind::Mma) > 0);
        // Per operand: S - 1 prologue copies and one in the loop; commits likewise.
        const int copies = count_ops(*simt, ir::OpKind::CpAsync);
        CHECK((copies > 0) == (stages > 1));
        if (stages > 1) {
          CHECK(count_ops(*simt, ir::OpKind::CpAsyncCommit) == stages);
          CHECK(count_ops(*simt, ir::OpKind::CpAsyncWait) == 2);
        }
      }
}
