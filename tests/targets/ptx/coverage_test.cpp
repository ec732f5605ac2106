/// \file Every op kind a SIMT function may hold appears in one kernel that ptxas assembles for
/// sm_80 and sm_90; the test fails when the op table grows a kind this kernel lacks.
#include <set>

#include "helpers.h"

namespace ptx_test {
namespace {

using tessera::ir::OpKind;

const char* kEverything = R"(
func @everything(%x: ptr<f32>, %y: ptr<i32>, %n: i32) attributes {stage = "simt", threads = 128, subgroup = 32, shared_0 = tile<128xf32>} {
  %pid = program_id {axis = 0} : i32
  %np = num_programs {axis = 0} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %nn = multiple_of %n {values = [16]} : i32
  %nc = max_contiguous %nn {values = [4]} : i32
  %c0 = constant {value = 0} : i32
  %pos = cmp_ge %nc, %c0 : i1
  assume %pos
  %in = cmp_lt %tid, %nc : i1
  %px = ptr_add %x, %tid : ptr<f32>
  %zero = constant {value = 0.0} : f32
  %v = global_load %px, %in, %zero {align = 4, width = 1} : f32
  %a = add %v, %v : f32
  %b = sub %a, %v : f32
  %m = mul %b, %a : f32
  %d = div %m, %a : f32
  %r = rem %d, %a : f32
  %mn = min %r, %d : f32
  %mx = max %mn, %m : f32
  %ng = neg %mx : f32
  %ab = abs %ng : f32
  %e = exp %ab : f32
  %e2 = exp2 %e : f32
  %l = log %e2 : f32
  %l2 = log2 %l : f32
  %sq = sqrt %l2 : f32
  %rs = rsqrt %sq : f32
  %sn = sin %rs : f32
  %cs = cos %sn : f32
  %th = tanh %cs : f32
  %ef = erf %th : f32
  %lp = log1p %ef : f32
  %em = expm1 %lp : f32
  %lt = log10 %em : f32
  %snh = sinh %lt : f32
  %csh = cosh %snh : f32
  %as = asin %csh : f32
  %ac = acos %as : f32
  %at = atan %ac : f32
  %cr = cbrt %at : f32
  %ei = erfinv %cr : f32
  %pw = pow %ei, %at : f32
  %a2 = atan2 %pw, %cr : f32
  %hy = hypot %a2, %pw : f32
  %fl = floor %hy : f32
  %ce = ceil %fl : f32
  %fm = fma %ce, %v, %a : f32
  %gt = cmp_gt %fm, %zero : i1
  %le = cmp_le %fm, %zero : i1
  %ne = cmp_ne %fm, %zero : i1
  %eq = cmp_eq %fm, %zero : i1
  %g2 = and %gt, %ne : i1
  %g3 = or %g2, %le : i1
  %g4 = xor %g3, %eq : i1
  %g5 = not %g4 : i1
  %w = where %g5, %fm, %v : f32
  %bits = bitcast %w : i32
  %c3 = constant {value = 3} : i32
  %sh = shl %bits, %c3 : i32
  %sr = shr %sh, %c3 : i32
  %ci = cast %w : i32
  %mix = add %sr, %ci : i32
  %o = shuffle %w, %c32 {mode = "xor"} : f32
  shared_store %tid, %o {buffer = 0, width = 1}
  barrier
  %s = shared_load %lane {buffer = 0, width = 1} : f32
  %c1 = constant {value = 1} : i32
  %loop = for %c0, %nc, %c1, %s ({
  ^(%i: i32, %acc: f32):
    %acc2 = add %acc, %s : f32
    yield %acc2
  }) : f32
  %big = cmp_gt %loop, %zero : i1
  %sel = if %big ({
    yield %loop
  }, {
    yield %zero
  }) : f32
  %halves = while %nc ({
  ^(%h: i32):
    %more = cmp_gt %h, %c1 : i1
    condition %more, %h
  }, {
  ^(%h2: i32):
    %c2 = constant {value = 2} : i32
    %half = div %h2, %c2 : i32
    yield %half
  }) : i32
  %ia = inline_asm %mix, %c3 {asm = "add.s32 $0, $1, $2;", constraints = "=r,r,r"} : i32
  %ib = inline_asm_impure %ia {asm = "mov.b32 $0, $1;", constraints = "=r,r"} : i32
  %old = atomic_rmw %y, %ib, %in {op = "add"} : i32
  %prev = atomic_cas %y, %old, %halves : i32
  %ok = cmp_ge %prev, %c0 : i1
  assert %ok {message = "a non-negative count"}
  print %sel {prefix = "sel "}
  global_store %px, %in, %sel {align = 4, width = 1}
  %xa = multiple_of %x {values = [16]} : ptr<f32>
  cp_async %c0, %xa, %in {buffer = 0}
  cp_async_commit
  cp_async_wait {pending = 0}
  barrier
  %frag = ldmatrix %c0 {buffer = 0, count = 1} : f32
  %d0, %d1, %d2, %d3 = mma %frag, %s, %s, %s, %frag, %s, %zero, %zero, %zero, %zero {a = "tf32", shape = "m16n8k8"} : f32, f32, f32, f32
  %dd = add %d0, %d3 : f32
  global_store %px, %in, %dd {align = 4, width = 1}
}
)";

TEST_CASE("ptx: one kernel holds every SIMT op kind and assembles") {
  auto module = parse(kEverything);
  std::set<OpKind> seen;
  tessera::ir::walk(module->kernel().body,
                    [&](const tessera::ir::Op* op) { seen.insert(op->kind); });
  for (int k = 0; k < tessera::ir::num_op_kinds(); ++k) {
    auto kind = static_cast<OpKind>(k);
    if (tessera::ir::has_trait(kind, tessera::ir::kTileOnly)) continue;
    // The warpgroup family needs sm_90a: wgmma_test.cpp assembles it there.
    if (kind == OpKind::Wgmma || kind == OpKind::WgmmaFence || kind == OpKind::WgmmaCommit ||
        kind == OpKind::WgmmaWait || kind == OpKind::FenceAsyncShared ||
        kind == OpKind::SetMaxNReg ||
        kind == OpKind::WarpSpecialize)  // (its roles' pieces are this family's)
      continue;
    // The TMA family too: tma_test.cpp assembles it there.
    if (kind == OpKind::MbarrierInit || kind == OpKind::MbarrierArriveTx ||
        kind == OpKind::MbarrierWait || kind == OpKind::MbarrierInval || kind == OpKind::TmaLoad ||
        kind == OpKind::TmaStore || kind == OpKind::TmaStoreCommit ||
        kind == OpKind::TmaStoreWait || kind == OpKind::ClusterRank ||
        kind == OpKind::ClusterBarrier)
      continue;
    // Cooperative matrices are SPIR-V's: PTX refuses them (below).
    if (kind == OpKind::CoopMatFill || kind == OpKind::CoopMatLoad ||
        kind == OpKind::CoopMatStore || kind == OpKind::CoopMatMulAdd ||
        kind == OpKind::CoopMatLoadTensor)
      continue;
    CAPTURE(tessera::ir::op_name(kind));
    CHECK(seen.count(kind) == 1);
  }
  Emitted e = emit_both(kEverything);
  CHECK(e.has("shfl.sync.bfly.b32"));
  CHECK(e.has("bar.sync"));
  CHECK(e.has("atom.acq_rel.gpu.global.add.u32"));
  CHECK(e.has("atom.acq_rel.gpu.global.cas.b32"));
  CHECK(e.has("vprintf"));
  CHECK(e.has("trap;"));
  CHECK(e.has("cp.async.cg.shared.global ["));
  CHECK(e.has("cp.async.commit_group;"));
  CHECK(e.has("cp.async.wait_group 0;"));
  CHECK(e.has("ldmatrix.sync.aligned.m8n8.x1.shared.b16"));
  CHECK(e.has("cvt.rna.tf32.f32"));
  CHECK(e.has("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
}

TEST_CASE("ptx: cooperative matrices are refused, naming the op and what CUDA uses instead") {
  auto module = parse(R"(
func @k(%i: i32) attributes {shared_0 = tile<256xf32>, stage = "simt", subgroup = 32, threads = 32} {
  %z = constant {value = 0.0} : f32
  %c = coopmat_fill %z : coopmat_acc<16x16xf32>
  coopmat_store %i, %c {buffer = 0, stride = 16}
}
)");
  auto [kind, what] =
      error_of([&] { tessera::ptx::emit(module->kernel(), profile("cuda-sm_90")); });
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(what.find("'coopmat_fill' is not supported on cuda-sm_90") != std::string::npos);
  CHECK(what.find("CUDA targets plan mma.sync or wgmma") != std::string::npos);
}

}  // namespace
}  // namespace ptx_test
