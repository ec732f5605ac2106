/// \file dot on tensor cores with mma.sync (DotKind::MmaSync): the accumulator lives in the mma
/// layout; A and B go from their home layouts into XOR-swizzled shared memory with vector stores
/// (or arrive there by cp.async in a ring: lower_pipeline.cpp), come back as fragments
/// (mma_operand.h), and each k step issues one `mma` per instruction tile of the warp, k
/// increasing.
#include <algorithm>

#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

namespace {

/// One k step: an mma per pair of the warp's instruction tiles along M (fragments `fa`) and N
/// (`fb`), each updating its 4 accumulator registers in `acc`.
void mma_step(Lowerer& lw, const DotPlan& plan, const std::vector<Regs>& fa,
              const std::vector<Regs>& fb, Regs& acc) {
  const ir::MmaShape& s = *plan.shape;
  for (size_t i = 0; i < fa.size(); ++i) {
    for (size_t j = 0; j < fb.size(); ++j) {
      std::vector<ir::Value*> operands = fa[i];
      operands.insert(operands.end(), fb[j].begin(), fb[j].end());
      std::vector<int> slots;
      for (int v = 0; v < ir::MmaShape::kCCount; ++v) {
        const int64_t m = 8 * (v / 2) + 16 * plan.warps.m * static_cast<int64_t>(i);
        const int64_t n = v % 2 + 8 * plan.warps.n * static_cast<int64_t>(j);
        const int reg = plan.acc.reg_of({m, n});
        TESSERA_CHECK(reg >= 0, "mma accumulator register not found");
        slots.push_back(reg);
        operands.push_back(acc[static_cast<size_t>(reg)]);
      }
      ir::Op* mma = lw.b().create(
          OpKind::Mma, operands, std::vector<Type>(ir::MmaShape::kCCount, Type::scalar(s.acc)),
          {{attr::kA, std::string(s.a)}, {attr::kShape, std::string(s.shape)}});
      for (int v = 0; v < ir::MmaShape::kCCount; ++v)
        acc[static_cast<size_t>(slots[static_cast<size_t>(v)])] =
            mma->result(static_cast<size_t>(v));
    }
  }
}

}  // namespace

void Lowerer::lower_mma(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(&op);
  const ir::Value* av = dot.lhs();
  const ir::Value* bv = dot.rhs();
  Regs acc = regs(dot.acc(), plan.acc);
  Operand oa, ob;
  if (plan.ring) {
    // The ring has put this iteration's operands in its stage buffers already.
    const StagedDot* staged = staged_operands(*plan.ring, op);
    TESSERA_CHECK(staged, "an mma dot planned on a ring that feeds it nothing");
    oa = staged->a;
    ob = staged->b;
  } else {
    Layout la = homes().layout_for(av), lb = homes().layout_for(bv);
    Regs ra = regs(av, la), rb = regs(bv, lb);
    // One scratch buffer: the larger tile first, so that each tile's base has no bit in common
    // with its offsets.
    const DType in_t = av->type.dtype;
    const int64_t size_a = av->type.numel(), size_b = bv->type.numel();
    const int buf = scratch(in_t, size_a + size_b);
    oa = make_operand(true, in_t, av->type.shape, fast_dim(la), plan, buf,
                      size_a >= size_b ? 0 : size_b, threads());
    ob = make_operand(false, in_t, bv->type.shape, fast_dim(lb), plan, buf,
                      size_a >= size_b ? size_a : 0, threads());
    store_operand(*this, oa, ra, la);
    store_operand(*this, ob, rb, lb);
    barrier();
    prepare_reads(*this, oa, nullptr);
    prepare_reads(*this, ob, nullptr);
  }
  for (int64_t k0 = 0; k0 < av->type.shape[1]; k0 += plan.shape->k)
    mma_step(*this, plan, fragments(*this, oa, plan, k0), fragments(*this, ob, plan, k0), acc);
  // The scratch tiles may be overwritten once every thread has read them; a pipelined loop's
  // next iteration waits at its own barrier instead.
  if (!plan.ring) barrier();
  define_tile(op.result(), plan.acc, acc);
}

}  // namespace tessera::lower::detail
