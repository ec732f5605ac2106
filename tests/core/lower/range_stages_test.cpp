// \file tl::range's per-loop num_stages (the for op's `num_stages` attribute) in the loop plan
// (core/lower/loop_plan.cpp): it replaces the launch's num_stages for its loop, and a loop
// without it keeps the launch's.
#include <doctest/doctest.h>

#include "core/lower/plan.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "matmul_kernel.h"

namespace lower = tessera::lower;
namespace passes = tessera::passes;
namespace ir = tessera::ir;

namespace {

/// The stages of the f16 matmul's K loop on cuda-sm_90a at launch num_stages 3, with the loop's
/// own num_stages `per_loop` (0: none).
int planned_stages(int64_t per_loop) {
  auto traced = matmul_test::trace_matmul(ir::DType::f16, 64, 64, 32);
  if (per_loop > 0) {
    ir::walk(traced->kernel().body, [&](ir::Op* op) {
      if (op->kind == ir::OpKind::For) op->attrs.push_back({"num_stages", per_loop});
    });
  }
  const tessera::CompileOptions options{.num_warps = 4, .num_stages = 3};
  const tessera::target::Target target = *tessera::target::profile("cuda-sm_90a");
  passes::Compiled compiled = passes::compile(*traced, target, options, passes::Stage::Tile);
  lower::LoweringPlan plan(compiled.tile->kernel(), target, options);
  int stages = -1;
  ir::walk(plan.function().body, [&](const ir::Op* op) {
    if (op->kind == ir::OpKind::For) stages = plan.loop(*op).stages;
  });
  return stages;
}

}  // namespace

TEST_CASE("loop plan: a loop's num_stages attribute replaces the launch's num_stages") {
  CHECK(planned_stages(0) == 3);  // the launch's
  CHECK(planned_stages(2) == 2);
  CHECK(planned_stages(1) == 0);  // no ring
}
