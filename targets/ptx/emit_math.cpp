/// \file Math ops: the ones NVPTX lowers exactly (sqrt.rn, floor, ceil) become LLVM intrinsics;
/// rsqrt is 1 / sqrt with both steps rounded (<= 1 ulp); the transcendental functions call the
/// module's math library (math.cpp).
#include "core/support/error.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/math.h"

namespace tessera::ptx {

void emit_math(Emitter& e, const ir::Op& op) {
  llvm::Value* x = e.get(op.operand(0));
  llvm::Type* t = x->getType();
  if (!t->isFloatingPointTy()) e.unsupported(op, "operand of type " + op.operand(0)->type.str());
  llvm::Value* y = nullptr;
  switch (op.kind) {
    case ir::OpKind::Sqrt:
      y = e.intrinsic(llvm::Intrinsic::sqrt, {t}, {x});
      break;
    case ir::OpKind::Rsqrt:
      y = e.b.CreateFDiv(llvm::ConstantFP::get(t, 1.0),
                         e.intrinsic(llvm::Intrinsic::sqrt, {t}, {x}));
      break;
    case ir::OpKind::Floor:
      y = e.intrinsic(llvm::Intrinsic::floor, {t}, {x});
      break;
    case ir::OpKind::Ceil:
      y = e.intrinsic(llvm::Intrinsic::ceil, {t}, {x});
      break;
    case ir::OpKind::Pow:
    case ir::OpKind::Atan2:
    case ir::OpKind::Hypot:
      y = math_binary(e, op.kind, x, e.get(op.operand(1)));
      break;
    default:
      y = math_unary(e, op.kind, x);
      break;
  }
  e.set(op.result(), y);
}

}  // namespace tessera::ptx
