/// \file dot on one workgroup-scope cooperative matrix (DotKind::CoopMat2,
/// VK_NV_cooperative_matrix2): A and B are the dot's own desc_loads (LoweringPlan::loaded_by_dot),
/// read straight from global memory by coopmat_load_tensor through the descriptor's tensor (dims,
/// strides, the block's offsets), never staged in shared memory by the lowering. Each load takes
/// the fast path (no clamping: the whole block lies in the tensor) where the block's run-time
/// bounds allow it, and the edge path (elements outside the tensor read zero, desc_load's rule)
/// elsewhere, chosen by a workgroup-uniform branch. The accumulator is one wgmat_acc: carried
/// through the K loop like any matrix, and converted to a linear layout for the epilogue through
/// shared memory (mats_to_linear), which is why the plan bounds its size by the target's shared
/// memory.
#include "core/ir/ops.h"
#include "core/ir/simt.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// The matrix of dot operand `v` (a rank-2 desc_load of i32 descriptor values) for `use`.
ir::Value* tensor_matrix(Lowerer& lw, const ir::Value* v, ir::MatUse use) {
  const ir::DescOperands d = ir::DescLoadOp(v->def).desc();
  const Type type =
      Type::coopmat(v->type.dtype, v->type.shape[0], v->type.shape[1], use, /*workgroup=*/true);
  std::vector<ir::Value*> operands = {lw.scalar(d.base())};
  for (int i = 0; i < 2; ++i) operands.push_back(lw.scalar(d.dim(i)));
  for (int i = 0; i < 2; ++i) operands.push_back(lw.scalar(d.stride(i)));
  for (int i = 0; i < 2; ++i) operands.push_back(lw.scalar(d.offset(i)));
  // Inside the tensor along d: 0 <= off_d and off_d <= dim_d - block_d (no overflow for dims
  // of at least 0).
  const Type i1 = Type::scalar(DType::i1);
  ir::Value* inside = nullptr;
  for (int i = 0; i < 2; ++i) {
    ir::Value* off = operands[static_cast<size_t>(5 + i)];
    ir::Value* dim = operands[static_cast<size_t>(1 + i)];
    ir::Value* last =
        lw.emit(OpKind::Sub, {dim, lw.const_int(DType::i32, v->type.shape[static_cast<size_t>(i)])},
                Type::scalar(DType::i32));
    ir::Value* low = lw.emit(OpKind::CmpGe, {off, lw.const_int(DType::i32, 0)}, i1);
    ir::Value* high = lw.emit(OpKind::CmpLe, {off, last}, i1);
    ir::Value* both = lw.and_(low, high);
    inside = inside ? lw.and_(inside, both) : both;
  }
  ir::Op* branch = lw.b().create(OpKind::If, {inside}, {type});
  ir::Region* fast = lw.b().add_region(branch);
  ir::Region* edge = lw.b().add_region(branch);
  for (const bool clamp : {false, true}) {
    lw.b().set_insertion_end(clamp ? edge : fast);
    std::vector<ir::Attribute> attrs;
    if (clamp) attrs.push_back({attr::kClampZero, int64_t{1}});
    ir::Value* m = lw.b().create(OpKind::CoopMatLoadTensor, operands, {type}, attrs)->result();
    lw.b().create(OpKind::Yield, {m}, {});
  }
  lw.b().set_insertion_after(branch);
  return branch->result();
}

}  // namespace

void Lowerer::lower_coopmat2(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(&op);
  Regs acc = regs(dot.acc(), plan.acc);  // one wgmat_acc
  TESSERA_CHECK(acc.size() == 1 && acc[0]->type.workgroup,
                "a workgroup-scope dot's accumulator is not one workgroup matrix");
  ir::Value* a = tensor_matrix(*this, dot.lhs(), ir::MatUse::A);
  ir::Value* b = tensor_matrix(*this, dot.rhs(), ir::MatUse::B);
  acc[0] = emit(OpKind::CoopMatMulAdd, {a, b, acc[0]}, acc[0]->type);
  define_tile(op.result(), plan.acc, acc);
}

}  // namespace tessera::lower::detail
