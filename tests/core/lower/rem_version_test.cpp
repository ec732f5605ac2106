// \file Remainder versioning (core/passes/rem_version.h): which kernels it versions, the test it
// builds, and Triton's tutorial matmul on cuda-sm_90a, whose fast copy gets the cp.async ring with
// 16-byte copies of A and B while the copy as written keeps its plain loads.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "samples/kernels/matmul_tutorial.h"
#include "core/ir/ops.h"
#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/lower/axis_info.h"
#include "core/lower/plan.h"
#include "core/passes/pipeline.h"
#include "core/passes/rem_version.h"
#include "core/target/target.h"
#include "matmul_kernel.h"

namespace ir = tessera::ir;
namespace lower = tessera::lower;
namespace passes = tessera::passes;
namespace tl = tessera::tl;

namespace {

/// The ops of `kind` anywhere in `fn`.
std::vector<ir::Op*> ops_of(const ir::Function& fn, ir::OpKind kind) {
  std::vector<ir::Op*> out;
  ir::walk(fn.body, [&](ir::Op* op) {
    if (op->kind == kind) out.push_back(op);
  });
  return out;
}

/// Is `op` inside region `r` (at any depth)?
bool inside(const ir::Op* op, const ir::Region* r) {
  for (const ir::Region* at = op->parent; at; at = at->parent ? at->parent->parent : nullptr)
    if (at == r) return true;
  return false;
}

std::unique_ptr<ir::Module> parsed(const std::string& text) {
  auto m = ir::parse(text, "rem_version_test");
  REQUIRE(ir::verify_all(*m).empty());
  return m;
}

/// A gather through `(k * 64 + arange) % n`: `base` is how the program's start is computed.
std::string gather(const std::string& base) {
  return R"(func @k(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32> {divisibility = 16}, %n: i32 {divisibility = 16}, %k: i32) {
  %pid = program_id {axis = 0} : i32
)" + base +
         R"(
  %c64 = constant {value = 64} : i32
  %start = mul %b, %c64 : i32
  %sb = splat %start : tile<64xi32>
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %off = add %sb, %r : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %w = rem %off, %sn : tile<64xi32>
  %sx = splat %x : tile<64xptr<f32>>
  %px = ptr_add %sx, %w : tile<64xptr<f32>>
  %v = load %px : tile<64xf32>
  %sy = splat %y : tile<64xptr<f32>>
  %py = ptr_add %sy, %r : tile<64xptr<f32>>
  store %py, %v
})";
}

}  // namespace

TEST_CASE("rem versioning: a left side of unknown sign is versioned, the copy marked nonneg") {
  auto m = parsed(gather("  %b = sub %pid, %k : i32"));
  REQUIRE(passes::version_remainders(*m));
  INFO(ir::print(*m));
  REQUIRE(ir::verify_all(*m).empty());
  const ir::Function& fn = m->kernel();
  const std::vector<ir::Op*> ifs = ops_of(fn, ir::OpKind::If);
  REQUIRE(ifs.size() == 1);
  CHECK(ifs[0]->parent == fn.body);
  const ir::IfOp branch(ifs[0]);
  const std::vector<ir::Op*> rems = ops_of(fn, ir::OpKind::Rem);
  REQUIRE(rems.size() == 2);
  for (const ir::Op* rem : rems) {
    const bool fast = inside(rem, branch.then_region());
    CHECK(fast != inside(rem, branch.else_region()));
    CHECK(rem->int_attr_or(lower::kNonnegAttr, 0) == (fast ? 1 : 0));
    // The fact gives the fast copy's remainder runs of 16 (n's divisibility), not the other's.
    const lower::AxisInfoMap info(fn);
    CHECK(info.get(rem->result()).contiguity[0] == (fast ? 16 : 1));
  }
  // One store in each copy, none outside the branch.
  for (const ir::Op* store : ops_of(fn, ir::OpKind::Store)) CHECK(inside(store, fn.body));
  CHECK(ops_of(fn, ir::OpKind::Store).size() == 2);
}

TEST_CASE(
    "rem versioning: a provably non-negative left side, or one that no access reads, is "
    "left as written") {
  auto nonneg = parsed(gather("  %b = add %pid, %pid : i32"));
  CHECK_FALSE(passes::version_remainders(*nonneg));
  // Its remainder keeps its runs without any test.
  const lower::AxisInfoMap info(nonneg->kernel());
  CHECK(info.get(ops_of(nonneg->kernel(), ir::OpKind::Rem)[0]->result()).contiguity[0] == 16);

  auto unused =
      parsed(R"(func @k(%y: ptr<i32> {divisibility = 16}, %n: i32 {divisibility = 16}, %k: i32) {
  %sk = splat %k : tile<64xi32>
  %r = arange {start = 0, end = 64} : tile<64xi32>
  %off = add %sk, %r : tile<64xi32>
  %sn = splat %n : tile<64xi32>
  %w = rem %off, %sn : tile<64xi32>
  %sy = splat %y : tile<64xptr<i32>>
  %py = ptr_add %sy, %r : tile<64xptr<i32>>
  store %py, %w
})");
  CHECK_FALSE(passes::version_remainders(*unused));  // the remainder is stored, not an address
}

namespace {

/// Triton's tutorial matmul (samples/kernels/matmul_tutorial.h) traced for f16 as a launch with M,
/// N, K divisible by 16 and unit inner strides specializes it, BM x BN x BK tiles, GROUP_M 8.
std::unique_ptr<ir::Module> trace_tutorial(int bm, int bn, int bk) {
  using matmul_test::const_arg;
  using matmul_test::i32_arg;
  using matmul_test::ptr_arg;
  tl::ArgSpec one;
  one.equal_to_one = true;
  const tl::ArgSpec i32 = i32_arg();
  std::vector<tl::ArgSpec> specs = {ptr_arg(ir::DType::f16),
                                    ptr_arg(ir::DType::f16),
                                    ptr_arg(ir::DType::f16),
                                    i32,  // M
                                    i32,  // N
                                    i32,  // K
                                    i32,  // stride_am
                                    one,  // stride_ak
                                    i32,  // stride_bk
                                    one,  // stride_bn
                                    i32,  // stride_cm
                                    one,  // stride_cn
                                    const_arg(bm),
                                    const_arg(bn),
                                    const_arg(bk),
                                    const_arg(8)};
  std::vector<std::string> names = {"a_ptr",     "b_ptr",     "c_ptr",     "M",
                                    "N",         "K",         "stride_am", "stride_ak",
                                    "stride_bk", "stride_bn", "stride_cm", "stride_cn",
                                    "BLOCK_M",   "BLOCK_N",   "BLOCK_K",   "GROUP_M"};
  return tl::trace(samples::matmul_relu_tutorial_kernel, "tutorial", names, specs);
}

}  // namespace

TEST_CASE("rem versioning: the tutorial matmul's fast copy gets the cp.async ring on sm_90a") {
  auto traced = trace_tutorial(128, 256, 64);
  const tessera::CompileOptions options{.num_warps = 8, .num_stages = 3};
  const tessera::target::Target target = *tessera::target::profile("cuda-sm_90a");
  // Through the SIMT stage: both copies lower, their rings within the shared memory limit.
  passes::Compiled compiled = passes::compile(*traced, target, options, passes::Stage::Simt);
  const ir::Function& fn = compiled.tile->kernel();
  const std::vector<ir::Op*> ifs = ops_of(fn, ir::OpKind::If);
  REQUIRE(ifs.size() == 1);
  const ir::IfOp branch(ifs[0]);
  int marked = 0;
  for (const ir::Op* rem : ops_of(fn, ir::OpKind::Rem))
    marked += inside(rem, branch.then_region()) && rem->int_attr_or(lower::kNonnegAttr, 0) == 1;
  CHECK(marked == 2);  // % M and % N
  const lower::LoweringPlan& plan = *compiled.plan;
  const std::vector<ir::Op*> loops = ops_of(fn, ir::OpKind::For);
  REQUIRE(loops.size() == 2);
  for (const ir::Op* loop : loops) {
    const lower::LoopPlan& lp = plan.loop(*loop);
    if (inside(loop, branch.then_region())) {
      CHECK(lp.kind == lower::LoopKind::CpAsyncRing);
      CHECK(lp.stages == 3);
      REQUIRE(lp.feeds.size() == 2);
      for (const lower::RingFeed& f : lp.feeds) CHECK(f.load.width == 8);  // 8 halves: 16 bytes
    } else {
      CHECK(inside(loop, branch.else_region()));
      CHECK(lp.kind == lower::LoopKind::Plain);  // B's tile has no runs along N there
    }
  }
  // The SIMT kernel copies by cp.async (16 bytes each, core/ir/simt.h).
  CHECK_FALSE(ops_of(compiled.simt->kernel(), ir::OpKind::CpAsync).empty());
}
