/// \file Dot plans (plan.h): which instruction form each dot takes on the target, and the layouts
/// of its accumulator and operand fragments.
#include <algorithm>
#include <utility>

#include "core/ir/ops.h"
#include "core/lower/plan.h"

namespace tessera::lower {
namespace {

using ir::DType;

/// The fma plan: the dot layout (each thread a strided block of C, reads of A and B in shared
/// memory conflict-free).
DotPlan fma_plan(const ir::Op& op, int64_t threads) {
  DotPlan p;
  p.kind = DotKind::Fma;
  const ir::Shape& c = op.result()->type.shape;
  p.acc = dot_layout(c[0], c[1], threads);
  return p;
}

/// The mma.sync instruction for the dot's dtypes, if the target lists it.
const ir::MmaShape* mma_sync_shape(const ir::DotOp& dot, const target::Target& target) {
  if (!target.has(target::Cap::MmaSync) || target.subgroup_size != 32) return nullptr;
  const DType in = dot.lhs()->type.dtype, acc = dot.op->result()->type.dtype;
  if (dot.rhs()->type.dtype != in) return nullptr;
  if (in == DType::f32 && dot.precision() != ir::DotPrecision::Tf32) return nullptr;
  const ir::MmaShape* s = ir::mma_shape_for(in);
  if (!s || s->acc != acc) return nullptr;
  const bool listed = std::any_of(
      target.matrix_shapes.begin(), target.matrix_shapes.end(), [&](const target::MatrixShape& t) {
        return t.m == 16 && t.n == 8 && t.k == s->k && t.a == in && t.b == in && t.c == acc;
      });
  return listed ? s : nullptr;
}

/// How the warpgroups tile an [M, N] accumulator of instructions of A/B dtype `in` and
/// accumulator dtype `acc` (k steps dividing K), with the instruction; nullopt if none fits.
std::optional<std::pair<WgmmaTiling, ir::WgmmaShape>> wgmma_tiling(int64_t M, int64_t N, int64_t K,
                                                                   DType in, DType acc,
                                                                   int groups) {
  WgmmaTiling t;
  t.wg_m = 1;
  while (t.wg_m * 2 <= groups && M % (64 * t.wg_m * 2) == 0) t.wg_m *= 2;
  t.wg_n = groups / t.wg_m;
  if (M % (64 * t.wg_m) || N % (8 * t.wg_n)) return std::nullopt;
  const int64_t cols = N / t.wg_n;
  t.instr_n = static_cast<int>(std::min<int64_t>(256, cols));
  std::optional<ir::WgmmaShape> s = ir::wgmma_shape_for(in, t.instr_n);
  if (!s || s->acc != acc || K % s->k) return std::nullopt;
  t.reps_n = static_cast<int>(cols / t.instr_n);
  t.reps_m = static_cast<int>(M / (64 * t.wg_m));
  if (int64_t{t.reps_m} * t.reps_n * t.instr_n / 2 > 128) return std::nullopt;  // registers
  return std::make_pair(t, *s);
}

/// The dimension along which dot operand `v` lies contiguous in global memory, in the
/// operand's coordinates: a pointer-tile load's (read directly or transposed) whose runs along
/// it fill 16-byte copies; -1 otherwise.
int source_fast(const AxisInfoMap& axis, const ir::Value* v) {
  bool transposed = false;
  if (v->def && v->def->kind == ir::OpKind::Permute &&
      v->def->ints_attr(attr::kOrder) == std::vector<int64_t>{1, 0}) {
    transposed = true;
    v = v->def->operand(0);
  }
  if (!v->def || v->def->kind != ir::OpKind::Load) return -1;
  const std::vector<int64_t>& c = axis.get(ir::LoadOp(v->def).ptr()).contiguity;
  const int fast = c[0] > c[1] ? 0 : 1;
  if (c[static_cast<size_t>(fast)] * ir::dtype_bytes(v->type.dtype) < 16) return -1;
  return transposed ? 1 - fast : fast;
}

/// The wgmma plan, if the target, dtypes and tile allow one. A 32- or 8-bit dot whose B lies
/// N-major and A K-major in global memory is swapped where the transposed tiling fits: wgmma
/// reads such a B from shared memory only K-major, but C^T = B^T A^T takes B^T as its A, which
/// may come from registers read out of shared memory in any layout.
std::optional<DotPlan> wgmma_plan(const ir::DotOp& dot, const target::Target& target,
                                  const AxisInfoMap& axis, int64_t threads) {
  if (!target.has(target::Cap::Wgmma) || target.subgroup_size != 32 || threads % 128)
    return std::nullopt;
  const DType in = dot.lhs()->type.dtype, acc = dot.op->result()->type.dtype;
  if (dot.rhs()->type.dtype != in) return std::nullopt;
  if (in == DType::f32 && dot.precision() != ir::DotPrecision::Tf32) return std::nullopt;
  const int64_t M = dot.lhs()->type.shape[0], K = dot.lhs()->type.shape[1];
  const int64_t N = dot.rhs()->type.shape[1];
  const int groups = static_cast<int>(threads / 128);
  DotPlan p;
  p.kind = DotKind::Wgmma;
  const std::optional<ir::WgmmaShape> probe = ir::wgmma_shape_for(in, 8);
  if (probe && !probe->allows_trans() && source_fast(axis, dot.rhs()) == 1 &&
      source_fast(axis, dot.lhs()) == 1) {
    if (auto swapped = wgmma_tiling(N, M, K, in, acc, groups)) {
      p.swapped = true;
      p.tiling = swapped->first;
      p.wgmma = swapped->second;
      p.acc = wgmma_acc_t_layout(M, N, p.tiling, threads);
      return p;
    }
  }
  auto tiling = wgmma_tiling(M, N, K, in, acc, groups);
  if (!tiling) return std::nullopt;
  p.tiling = tiling->first;
  p.wgmma = tiling->second;
  p.acc = wgmma_acc_layout(M, N, p.tiling, threads);
  return p;
}

/// The operand's layout: contiguous along `fast` (its source's), K-major where MN-major is not
/// allowed; the widest swizzle its contiguous extent fills.
WgmmaOperand wgmma_operand(bool is_a, int fast, const ir::Shape& shape, const ir::WgmmaShape& s) {
  const int k_dim = is_a ? 1 : 0;
  WgmmaOperand o;
  o.mn_major = fast >= 0 && fast != k_dim && s.allows_trans();
  const int64_t extent =
      shape[static_cast<size_t>(o.mn_major ? 1 - k_dim : k_dim)] * ir::dtype_bytes(s.in);
  o.swizzle = extent >= 128 ? 128 : extent >= 64 ? 64 : 32;
  return o;
}

/// The cooperative-matrix plan, if the target lists a subgroup-scope shape for the dot's dtypes
/// whose matrices tile the accumulator over the subgroups (the largest M x N listed wins).
std::optional<DotPlan> coopmat_plan(const ir::DotOp& dot, const target::Target& target,
                                    int64_t threads) {
  if (!target.has(target::Cap::CooperativeMatrix) || threads % target.subgroup_size)
    return std::nullopt;
  const DType in = dot.lhs()->type.dtype, acc = dot.op->result()->type.dtype;
  if (dot.rhs()->type.dtype != in || (in != DType::f16 && in != DType::bf16 && in != DType::i8))
    return std::nullopt;
  // Accumulators in f32 (i32 for i8), as coopmat_mul_add takes them.
  if (acc != (in == DType::i8 ? DType::i32 : DType::f32)) return std::nullopt;
  const int64_t M = dot.lhs()->type.shape[0], K = dot.lhs()->type.shape[1];
  const int64_t N = dot.rhs()->type.shape[1];
  const target::MatrixShape* best = nullptr;
  for (const target::MatrixShape& s : target.matrix_shapes) {
    if (s.a != in || s.b != in || s.c != acc || M % s.m || N % s.n || K % s.k) continue;
    if (!best || s.m * s.n > best->m * best->n) best = &s;
  }
  if (!best) return std::nullopt;
  const int subgroups = static_cast<int>(threads / target.subgroup_size);
  // Subgroups along M while M has at least as many matrices per subgroup as N, else along N.
  MatTiling t{best->m, best->n, 1, 1, target.subgroup_size};
  while (t.wm * t.wn < subgroups) {
    const int64_t per_m = M / (best->m * t.wm), per_n = N / (best->n * t.wn);
    if (per_m >= per_n && per_m >= 2)
      t.wm *= 2;
    else if (per_n >= 2)
      t.wn *= 2;
    else
      return std::nullopt;  // too few matrices for the subgroups
  }
  DotPlan p;
  p.kind = DotKind::CoopMat;
  p.mat_k = best->k;
  p.acc = mat_layout(M, N, t);
  return p;
}

/// Is `v` a rank-2 desc_load of an i32 descriptor (what coopmat_load_tensor reads)?
bool tensor_operand(const ir::Value* v) {
  if (!v->def || v->def->kind != ir::OpKind::DescLoad || v->type.rank() != 2) return false;
  const ir::DescOperands d = ir::DescLoadOp(v->def).desc();
  return d.rank == 2 && d.dim(0)->type.dtype == DType::i32;
}

/// The workgroup-scope plan (VK_NV_cooperative_matrix2), if both operands are tensor operands
/// and a workgroup shape for `threads` invocations and the dtypes has a granularity dividing the
/// tile; the accumulator, converted to the epilogue's layout through shared memory, must fit it.
std::optional<DotPlan> coopmat2_plan(const ir::DotOp& dot, const target::Target& target,
                                     int64_t threads) {
  if (!target.has(target::Cap::CooperativeMatrix2)) return std::nullopt;
  if (!tensor_operand(dot.lhs()) || !tensor_operand(dot.rhs())) return std::nullopt;
  const DType in = dot.lhs()->type.dtype, acc = dot.op->result()->type.dtype;
  const int64_t M = dot.lhs()->type.shape[0], K = dot.lhs()->type.shape[1];
  const int64_t N = dot.rhs()->type.shape[1];
  if (M * N * ir::dtype_bytes(acc) > target.max_shared_bytes) return std::nullopt;
  for (const target::WorkgroupShape& w : target.workgroup_shapes) {
    const target::MatrixShape& g = w.granularity;
    if (w.invocations != threads || g.a != in || g.b != dot.rhs()->type.dtype || g.c != acc)
      continue;
    if (M % g.m || N % g.n || K % g.k) continue;
    DotPlan p;
    p.kind = DotKind::CoopMat2;
    p.mat_k = K;
    p.acc = mat_layout(M, N, MatTiling{M, N, 1, 1, static_cast<int>(threads), true});
    return p;
  }
  return std::nullopt;
}

}  // namespace

PaddedTile padded_tile(const ir::Shape& shape, int fast, int elem_bytes) {
  PaddedTile t;
  t.fast = fast == 0 ? 0 : 1;
  t.stride = shape[static_cast<size_t>(t.fast)] + 16 / elem_bytes;
  t.size = shape[static_cast<size_t>(1 - t.fast)] * t.stride;
  return t;
}

std::string WgmmaOperand::str() const {
  return std::string(mn_major ? "mn-major" : "k-major") + " swizzle " + std::to_string(swizzle);
}

void plan_wgmma_operands(DotPlan& plan, const ir::Op& op, const Homes& homes) {
  if (plan.kind != DotKind::Wgmma) return;
  ir::DotOp dot(&op);
  plan.wa = wgmma_operand(true, fast_dim(homes.layout_for(dot.lhs())), dot.lhs()->type.shape,
                          *plan.wgmma);
  plan.wb = wgmma_operand(false, fast_dim(homes.layout_for(dot.rhs())), dot.rhs()->type.shape,
                          *plan.wgmma);
  if (plan.swapped) {
    // B lies N-major (as it is copied) and is read into registers, never by a descriptor.
    plan.wb = {true, 0};
    return;
  }
  // A computed in registers (attention's probabilities: a cast of the previous dot's
  // accumulator) already lying as wgmma reads A from registers skips shared memory.
  const ir::Value* a = dot.lhs();
  auto is_load = [](const ir::Op* op) {
    return op && (op->kind == ir::OpKind::Load || op->kind == ir::OpKind::DescLoad);
  };
  const bool loaded = !a->def || is_load(a->def) ||
                      (a->def->kind == ir::OpKind::Permute && is_load(a->def->operand(0)->def));
  if (loaded || !plan.wgmma->allows_trans() || plan.tiling.wg_n != 1 || homes.is_free(a)) return;
  Layout ra =
      wgmma_a_layout(a->type.shape[0], a->type.shape[1], plan.tiling, plan.acc.num_threads());
  if (homes.layout_for(a) != ra) return;
  plan.a_registers = true;
  plan.ra = std::move(ra);
}

DotPlan plan_dot(const ir::Op& op, const target::Target& target, const AxisInfoMap& axis,
                 int64_t threads, bool coopmat2) {
  ir::DotOp dot(&op);
  if (coopmat2)
    if (std::optional<DotPlan> w = coopmat2_plan(dot, target, threads)) return *w;
  if (std::optional<DotPlan> w = wgmma_plan(dot, target, axis, threads)) return *w;
  if (std::optional<DotPlan> c = coopmat_plan(dot, target, threads)) return *c;
  const ir::MmaShape* s = mma_sync_shape(dot, target);
  const int64_t M = dot.lhs()->type.shape[0], K = dot.lhs()->type.shape[1];
  const int64_t N = dot.rhs()->type.shape[1];
  if (!s || M % 16 || N % 8 || K % s->k) return fma_plan(op, threads);
  const MmaWarps w = mma_warps(M, N, static_cast<int>(threads / 32));
  if (w.m > M / 16 || w.n > N / 8) return fma_plan(op, threads);
  DotPlan p;
  p.kind = DotKind::MmaSync;
  p.shape = s;
  p.warps = w;
  p.acc = mma_acc_layout(M, N, w, threads);
  p.a = mma_a_layout(M, K, s->per_reg(), w, threads);
  p.b = mma_b_layout(K, N, s->per_reg(), w, threads);
  return p;
}

}  // namespace tessera::lower
