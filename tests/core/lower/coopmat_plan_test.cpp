// \file Cooperative-matrix plans (core/lower/dot_plan.cpp, loop_plan.cpp) and the linear twin of
// their opaque accumulator layout (core/lower/layout.h): which dots and loops take them on a
// target that lists matrix shapes, and that the twin gives every element to a thread of the
// subgroup whose matrices hold it.
#include <doctest/doctest.h>

#include "core/lower/layout.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "matmul_kernel.h"

namespace lower = tessera::lower;
namespace passes = tessera::passes;
using tessera::ir::DType;
using lower::Layout;
using lower::MatTiling;

namespace {

/// The plans of the matmul kernel (BM x BN x BK tiles) on `profile`, beside the tile IR they
/// refer to.
struct Planned {
  passes::Compiled compiled;
  std::unique_ptr<lower::LoweringPlan> plan;
  const lower::LoweringPlan& operator*() const { return *plan; }
};
Planned plan_matmul(const char* profile, DType in, int bm, int bn, int bk, int warps) {
  auto traced = matmul_test::trace_matmul(in, bm, bn, bk);
  const tessera::CompileOptions options{.num_warps = warps, .num_stages = 3};
  Planned p;
  p.compiled =
      passes::compile(*traced, *tessera::target::profile(profile), options, passes::Stage::Tile);
  p.plan = std::make_unique<lower::LoweringPlan>(p.compiled.tile->kernel(),
                                                 *tessera::target::profile(profile), options);
  return p;
}

/// The plan's one loop and its dot.
struct Found {
  const lower::LoopPlan* loop = nullptr;
  const lower::DotPlan* dot = nullptr;
};
Found find(const lower::LoweringPlan& p) {
  Found f;
  tessera::ir::walk(p.function().body, [&](const tessera::ir::Op* op) {
    if (op->kind == tessera::ir::OpKind::For) f.loop = &p.loop(*op);
    if (op->kind == tessera::ir::OpKind::Dot) f.dot = &p.dot(*op);
  });
  return f;
}

}  // namespace

TEST_CASE(
    "coopmat plans: f16, bf16 and i8 dots on vulkan-nvidia take cooperative matrices and a register ring") {
  struct Case {
    DType in;
    int bm, bn, bk, warps;
    int64_t mat_k;
    int wm, wn, stages;
  };
  const Case cases[] = {
      {DType::f16, 64, 64, 32, 4, 16, 2, 2, 2},    // two padded stages fit
      {DType::f16, 64, 64, 128, 4, 16, 2, 2, 1},   // 35.8 KB a stage: one, a second barrier
      {DType::f16, 128, 128, 32, 8, 16, 4, 2, 2},  // 8 subgroups: 4 along M, 2 along N
      {DType::i8, 64, 64, 64, 4, 32, 2, 2, 2},    {DType::bf16, 64, 64, 32, 4, 16, 2, 2, 2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.bk);
    CAPTURE(c.warps);
    Planned p = plan_matmul("vulkan-nvidia", c.in, c.bm, c.bn, c.bk, c.warps);
    Found f = find(*p);
    REQUIRE(f.dot);
    REQUIRE(f.loop);
    CHECK(f.dot->kind == lower::DotKind::CoopMat);
    CHECK(f.dot->mat_k == c.mat_k);
    REQUIRE(f.dot->acc.mats.has_value());
    CHECK(f.dot->acc.mats->wm == c.wm);
    CHECK(f.dot->acc.mats->wn == c.wn);
    CHECK(f.dot->acc.num_regs() == (c.bm / (16 * c.wm)) * (c.bn / (16 * c.wn)));
    CHECK(f.loop->kind == lower::LoopKind::RegisterRing);
    CHECK(f.loop->stages == c.stages);
    REQUIRE(f.loop->feeds.size() == 2);
    CHECK(f.loop->feeds[0].is_a);
    CHECK(f.loop->feeds[0].load.via_registers);
    CHECK(!f.loop->feeds[1].is_a);
    CHECK(f.loop->feeds[1].load.via_registers);
  }
  // Without matrix shapes (lavapipe), and for IEEE f32 inputs, the FMA form stays.
  CHECK(find(*plan_matmul("vulkan-lavapipe", DType::f16, 32, 32, 32, 4)).dot->kind ==
        lower::DotKind::Fma);
  CHECK(find(*plan_matmul("vulkan-nvidia", DType::f32, 32, 32, 32, 4)).dot->kind ==
        lower::DotKind::Fma);
  // A target whose device lists no bf16 shape (no VK_KHR_shader_bfloat16) keeps the FMA form.
  {
    tessera::target::Target t = *tessera::target::profile("vulkan-nvidia");
    std::erase_if(t.matrix_shapes, [](const auto& s) { return s.a == DType::bf16; });
    auto traced = matmul_test::trace_matmul(DType::bf16, 32, 32, 32);
    passes::Compiled c = passes::compile(*traced, t, {.num_warps = 4}, passes::Stage::Tile);
    lower::LoweringPlan p(c.tile->kernel(), t, {.num_warps = 4});
    CHECK(find(p).dot->kind == lower::DotKind::Fma);
  }
}

TEST_CASE("coopmat twin: every element lives in a thread of the subgroup whose matrices hold it") {
  struct Case {
    int64_t m, n;
    MatTiling t;
    int64_t threads;
  };
  const Case cases[] = {
      {64, 64, {16, 16, 2, 2, 32}, 128},
      {128, 128, {16, 16, 2, 4, 32}, 256},
      {32, 64, {16, 8, 2, 1, 32}, 64},
      {64, 32, {16, 16, 2, 2, 8}, 32},  // lavapipe-sized subgroups
  };
  for (const Case& c : cases) {
    CAPTURE(c.m);
    CAPTURE(c.t.lanes);
    const Layout opaque = lower::mat_layout(c.m, c.n, c.t);
    const Layout twin = lower::mat_twin(opaque, c.threads);
    twin.check();
    CHECK(twin.num_regs() * c.threads == c.m * c.n);  // no copies
    const int64_t rows = c.m / c.t.wm, cols = c.n / c.t.wn;
    for (int64_t th = 0; th < c.threads; ++th) {
      const int64_t sg = th / c.t.lanes;
      for (int r = 0; r < twin.num_regs(); ++r) {
        const std::vector<int64_t> e = twin.coords(r, th);
        CHECK(e[0] / rows == sg % c.t.wm);
        CHECK(e[1] / cols == sg / c.t.wm);
        // Register r holds matrix r / (m * n / lanes) of the subgroup's, row-major.
        const int64_t per = c.t.m * c.t.n / c.t.lanes, q = r / per;
        const int64_t reps_n = cols / c.t.n;
        CHECK((e[0] % rows) / c.t.m == q / reps_n);
        CHECK((e[1] % cols) / c.t.n == q % reps_n);
      }
    }
  }
}
