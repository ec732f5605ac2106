/// \file Math ops: the ones NVPTX lowers exactly (sqrt.rn, floor, ceil) become LLVM intrinsics;
/// rsqrt is 1 / sqrt with both steps rounded (<= 1 ulp); the transcendental functions call the
/// module's math library (math.cpp).
#include "core/support/error.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/math.h"
#include "core/ir/op_table.h"
#include "targets/math/functions.h"

namespace tessera::ptx {

namespace {

/// How PTX computes the math ops that need no library function (math::is_native).
using Native = llvm::Value* (*)(Emitter&, llvm::Value*);
constexpr ir::OpTable<Native> kNative = [] {
  using K = ir::OpKind;
  ir::OpTable<Native> t;
  t.add([](Emitter& e,
           llvm::Value* x) { return e.intrinsic(llvm::Intrinsic::sqrt, {x->getType()}, {x}); },
        {K::Sqrt});
  t.add(
      [](Emitter& e, llvm::Value* x) {
        llvm::Type* t = x->getType();
        return e.b.CreateFDiv(llvm::ConstantFP::get(t, 1.0),
                              e.intrinsic(llvm::Intrinsic::sqrt, {t}, {x}));
      },
      {K::Rsqrt});
  t.add([](Emitter& e,
           llvm::Value* x) { return e.intrinsic(llvm::Intrinsic::floor, {x->getType()}, {x}); },
        {K::Floor});
  t.add([](Emitter& e,
           llvm::Value* x) { return e.intrinsic(llvm::Intrinsic::ceil, {x->getType()}, {x}); },
        {K::Ceil});
  return t;
}();

/// Every kMath row (emitter.cpp routes them all here) is the library's or has a Native entry.
constexpr bool every_math_row_emitted() {
  for (const ir::OpRow& r : ir::kOpRows)
    if ((r.traits & ir::kMath) != 0 &&
        kNative.has(r.kind) == (math::function(r.kind) != math::Fn::None))
      return false;
  return true;
}
static_assert(
    every_math_row_emitted(),
    "a kMath op has neither a PTX instruction nor a library function (targets/math/functions.h)");

}  // namespace

void emit_math(Emitter& e, const ir::Op& op) {
  llvm::Value* x = e.get(op.operand(0));
  if (!x->getType()->isFloatingPointTy())
    e.unsupported(op, "operand of type " + op.operand(0)->type.str());
  llvm::Value* y;
  if (kNative.has(op.kind))
    y = kNative[op.kind](e, x);
  else if (math::arity(math::function(op.kind)) == 2)
    y = math_binary(e, op.kind, x, e.get(op.operand(1)));
  else
    y = math_unary(e, op.kind, x);
  e.set(op.result(), y);
}

}  // namespace tessera::ptx
