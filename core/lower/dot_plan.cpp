/// \file Dot plans (plan.h): which instruction form each dot takes on the target, and the layouts
/// of its accumulator and operand fragments.
#include <algorithm>

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
  const bool listed = std::any_of(target.matrix_shapes.begin(), target.matrix_shapes.end(),
                                  [&](const target::MatrixShape& t) {
                                    return t.m == 16 && t.n == 8 && t.k == s->k && t.a == in &&
                                           t.b == in && t.c == acc;
                                  });
  return listed ? s : nullptr;
}

}  // namespace

DotPlan plan_dot(const ir::Op& op, const target::Target& target, int64_t threads) {
  ir::DotOp dot(const_cast<ir::Op*>(&op));
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
