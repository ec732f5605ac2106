/// \file The TMA instruction forms (mbarrier.init, mbarrier.arrive.expect_tx,
/// cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes, mbarrier.try_wait.parity) and a
/// tensor map as a `.param .align 64 .b8 [128]` kernel parameter, assembled by ptxas for sm_90a;
/// the same kernel runs on a GPU in tests/runtime/cuda/tma_test.cpp.
#include <doctest/doctest.h>

#include "helpers.h"
#include "tma_box_ptx.h"

TEST_CASE("ptx tma: a tensor map parameter, an mbarrier and a bulk tensor copy assemble") {
  const auto a = ptx_test::assemble(tma_test::kTmaBoxPtx, "sm_90a");
  if (!a.ran) {
    MESSAGE(
        "SKIP: ptxas not found (no CUDA toolkit in /usr/local/cuda or $CUDA_HOME): PTX not "
        "assembled");
    return;
  }
  CHECK_MESSAGE(a.ok, a.log);
  // sm_80 has no TMA: ptxas refuses the module (its .target is sm_90a).
  CHECK_FALSE(ptx_test::assemble(tma_test::kTmaBoxPtx, "sm_80").ok);
}
