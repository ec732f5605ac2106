/// \file The math algorithms of targets/math/algorithms.h instantiated with a backend that emits
/// LLVM IR: each function becomes one internal function of the module (`__tessera_exp_f32` ...),
/// built the first time a kernel uses it.
#include "targets/ptx/math.h"

#include <functional>
#include <string>

#include "core/support/error.h"
#include "targets/math/library.h"
#include "targets/math/functions.h"

namespace tessera::ptx {
namespace {

template <bool Single>
struct IrMath;

/// A value of the backend: K = 0 float, 1 integer of the float's width, 2 u64, 3 predicate.
template <bool Single, int K>
struct V {
  llvm::Value* v = nullptr;
  IrMath<Single>* m = nullptr;
};

template <bool Single>
struct IrMath {
  static constexpr bool kSingle = Single;
  using F = V<Single, 0>;
  using I = V<Single, 1>;
  using U = V<Single, 2>;
  using B = V<Single, 3>;

  IrMath(llvm::IRBuilder<>& builder, llvm::Function* function, llvm::GlobalVariable* words)
      : b(builder), fn(function), table_(words) {
    fty = Single ? b.getFloatTy() : b.getDoubleTy();
    ity = Single ? b.getInt32Ty() : b.getInt64Ty();
  }

  llvm::IRBuilder<>& b;
  llvm::Function* fn;
  llvm::Type* fty;
  llvm::Type* ity;

  template <int K>
  V<Single, K> wrap(llvm::Value* v) {
    return {v, this};
  }
  llvm::Value* call(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args) {
    return b.CreateIntrinsic(id, {args[0]->getType()}, args);
  }

  F c(double v) { return wrap<0>(llvm::ConstantFP::get(fty, v)); }
  I ci(int64_t v) { return wrap<1>(llvm::ConstantInt::get(ity, static_cast<uint64_t>(v), true)); }
  U cu(uint64_t v) { return wrap<2>(b.getInt64(v)); }
  F fma(F x, F y, F z) { return wrap<0>(call(llvm::Intrinsic::fma, {x.v, y.v, z.v})); }
  F rint(F x) { return wrap<0>(call(llvm::Intrinsic::rint, {x.v})); }
  F abs(F x) { return wrap<0>(call(llvm::Intrinsic::fabs, {x.v})); }
  /// sqrt.rn (llvm.sqrt without fast-math flags rounds correctly on NVPTX).
  F sqrt(F x) { return wrap<0>(call(llvm::Intrinsic::sqrt, {x.v})); }
  /// ex2.approx.f32 (subnormal results kept), for exp; with `ftz` ex2.approx.ftz.f32, for exp2:
  /// results below 2^-126 flushed to +0, as Triton's tl.exp2 does. ptxas keeps subnormal
  /// results of the plain form with a compare and two scalings around the MUFU; attention's
  /// loop spent a sixth of its instructions on them.
  F ex2(F x, bool ftz = false) {
    static_assert(Single, "ex2.approx is used at f32 only");
    return wrap<0>(b.CreateIntrinsic(
        ftz ? llvm::Intrinsic::nvvm_ex2_approx_ftz_f : llvm::Intrinsic::nvvm_ex2_approx_f, {},
        {x.v}));
  }
  F copysign(F x, F y) { return wrap<0>(call(llvm::Intrinsic::copysign, {x.v, y.v})); }
  B isnan(F x) { return wrap<3>(b.CreateFCmpUNO(x.v, x.v)); }
  template <int K>
  V<Single, K> sel(B c, V<Single, K> x, V<Single, K> y) {
    return wrap<K>(b.CreateSelect(c.v, x.v, y.v));
  }
  B and_(B x, B y) { return wrap<3>(b.CreateAnd(x.v, y.v)); }
  B or_(B x, B y) { return wrap<3>(b.CreateOr(x.v, y.v)); }
  B not_(B x) { return wrap<3>(b.CreateNot(x.v)); }
  I bits(F x) { return wrap<1>(b.CreateBitCast(x.v, ity)); }
  F from_bits(I x) { return wrap<0>(b.CreateBitCast(x.v, fty)); }
  /// An integral value in range; NaN and out-of-range values give 0 (never LLVM's poison).
  I to_int(F x) {
    double limit = Single ? 2147483648.0 : 9223372036854775808.0;
    llvm::Value* in =
        b.CreateFCmpOLT(call(llvm::Intrinsic::fabs, {x.v}), llvm::ConstantFP::get(fty, limit));
    llvm::Value* safe = b.CreateSelect(in, x.v, llvm::ConstantFP::get(fty, 0.0));
    return wrap<1>(b.CreateFPToSI(safe, ity));
  }
  F to_float(I x) { return wrap<0>(b.CreateSIToFP(x.v, fty)); }
  I shl(I x, int n) { return wrap<1>(b.CreateShl(x.v, static_cast<uint64_t>(n))); }
  I shr_s(I x, int n) { return wrap<1>(b.CreateAShr(x.v, static_cast<uint64_t>(n))); }
  I shr_u(I x, int n) { return wrap<1>(b.CreateLShr(x.v, static_cast<uint64_t>(n))); }
  B lt_s(I x, I y) { return wrap<3>(b.CreateICmpSLT(x.v, y.v)); }
  B eq(I x, I y) { return wrap<3>(b.CreateICmpEQ(x.v, y.v)); }
  /// Shifts by >= 64 give 0 (LLVM would give poison).
  U shl(U x, U n) {
    return wrap<2>(
        b.CreateSelect(b.CreateICmpUGE(n.v, b.getInt64(64)), b.getInt64(0), b.CreateShl(x.v, n.v)));
  }
  U shr(U x, U n) {
    return wrap<2>(b.CreateSelect(b.CreateICmpUGE(n.v, b.getInt64(64)), b.getInt64(0),
                                  b.CreateLShr(x.v, n.v)));
  }
  U clz(U x) {
    return wrap<2>(b.CreateIntrinsic(llvm::Intrinsic::ctlz, {x.v->getType()}, {x.v, b.getFalse()}));
  }
  U urem(U x, U y) { return wrap<2>(b.CreateURem(x.v, y.v)); }
  B lt_u(U x, U y) { return wrap<3>(b.CreateICmpULT(x.v, y.v)); }
  B eq(U x, U y) { return wrap<3>(b.CreateICmpEQ(x.v, y.v)); }
  U min_u(U x, U y) { return wrap<2>(call(llvm::Intrinsic::umin, {x.v, y.v})); }
  U u_from_i(I x) { return wrap<2>(b.CreateZExt(x.v, b.getInt64Ty())); }
  I i_from_u(U x) { return wrap<1>(b.CreateTrunc(x.v, ity)); }
  F f_from_u(U x) { return wrap<0>(b.CreateUIToFP(x.v, fty)); }
  U table(U index) {
    llvm::Value* p = b.CreateInBoundsGEP(b.getInt32Ty(), table_, index.v);
    return wrap<2>(b.CreateZExt(b.CreateLoad(b.getInt32Ty(), p), b.getInt64Ty()));
  }

  template <class A, class Bf>
  F if_else(B c, A then_fn, Bf else_fn) {
    llvm::LLVMContext& ctx = b.getContext();
    auto* then_bb = llvm::BasicBlock::Create(ctx, "then", fn);
    auto* else_bb = llvm::BasicBlock::Create(ctx, "else", fn);
    auto* merge = llvm::BasicBlock::Create(ctx, "merge", fn);
    b.CreateCondBr(c.v, then_bb, else_bb);
    b.SetInsertPoint(then_bb);
    F a = then_fn();
    llvm::BasicBlock* then_end = b.GetInsertBlock();
    b.CreateBr(merge);
    b.SetInsertPoint(else_bb);
    F z = else_fn();
    llvm::BasicBlock* else_end = b.GetInsertBlock();
    b.CreateBr(merge);
    b.SetInsertPoint(merge);
    llvm::PHINode* phi = b.CreatePHI(fty, 2);
    phi->addIncoming(a.v, then_end);
    phi->addIncoming(z.v, else_end);
    return wrap<0>(phi);
  }

  template <size_t N, class C, class Bd>
  std::array<U, N> loop(std::array<U, N> init, C cond, Bd body) {
    llvm::LLVMContext& ctx = b.getContext();
    llvm::BasicBlock* pre = b.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx, "loop", fn);
    auto* body_bb = llvm::BasicBlock::Create(ctx, "body", fn);
    auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    std::array<llvm::PHINode*, N> phis;
    std::array<U, N> state;
    for (size_t i = 0; i < N; ++i) {
      phis[i] = b.CreatePHI(b.getInt64Ty(), 2);
      phis[i]->addIncoming(init[i].v, pre);
      state[i] = wrap<2>(phis[i]);
    }
    b.CreateCondBr(cond(state).v, body_bb, exit);
    b.SetInsertPoint(body_bb);
    std::array<U, N> next = body(state);
    for (size_t i = 0; i < N; ++i) phis[i]->addIncoming(next[i].v, b.GetInsertBlock());
    b.CreateBr(header);
    b.SetInsertPoint(exit);
    return state;
  }

 private:
  llvm::GlobalVariable* table_;
};

// Operators of the backend's values.
template <bool S>
V<S, 0> operator-(V<S, 0> x) {
  return x.m->template wrap<0>(x.m->b.CreateFNeg(x.v));
}

#define TESSERA_BINARY(op, fop, iop)                      \
  template <bool S, int K>                                \
  V<S, K> operator op(V<S, K> x, V<S, K> y) {             \
    if constexpr (K == 0)                                 \
      return x.m->template wrap<0>(x.m->b.fop(x.v, y.v)); \
    else                                                  \
      return x.m->template wrap<K>(x.m->b.iop(x.v, y.v)); \
  }
TESSERA_BINARY(+, CreateFAdd, CreateAdd)
TESSERA_BINARY(-, CreateFSub, CreateSub)
TESSERA_BINARY(*, CreateFMul, CreateMul)
#undef TESSERA_BINARY

template <bool S>
V<S, 0> operator/(V<S, 0> x, V<S, 0> y) {
  return x.m->template wrap<0>(x.m->b.CreateFDiv(x.v, y.v));
}

#define TESSERA_BITWISE(op, iop)                        \
  template <bool S, int K>                              \
    requires(K == 1 || K == 2)                          \
  V<S, K> operator op(V<S, K> x, V<S, K> y) {           \
    return x.m->template wrap<K>(x.m->b.iop(x.v, y.v)); \
  }
TESSERA_BITWISE(&, CreateAnd)
TESSERA_BITWISE(|, CreateOr)
TESSERA_BITWISE(^, CreateXor)
#undef TESSERA_BITWISE

#define TESSERA_COMPARE(op, pred)                                                   \
  template <bool S>                                                                 \
  V<S, 3> operator op(V<S, 0> x, V<S, 0> y) {                                       \
    return x.m->template wrap<3>(x.m->b.CreateFCmp(llvm::CmpInst::pred, x.v, y.v)); \
  }
TESSERA_COMPARE(<, FCMP_OLT)
TESSERA_COMPARE(<=, FCMP_OLE)
TESSERA_COMPARE(>, FCMP_OGT)
TESSERA_COMPARE(>=, FCMP_OGE)
TESSERA_COMPARE(==, FCMP_OEQ)
#undef TESSERA_COMPARE

/// The words of 2/pi as a constant table (Payne-Hanek reduction), one per module.
llvm::GlobalVariable* two_over_pi(llvm::Module& module) {
  const char* name = "__tessera_two_over_pi";
  if (auto* gv = module.getGlobalVariable(name, true)) return gv;
  llvm::ArrayRef<uint32_t> words(math::kTwoOverPiWords);
  llvm::Constant* data = llvm::ConstantDataArray::get(module.getContext(), words);
  auto* gv =
      new llvm::GlobalVariable(module, data->getType(), true, llvm::GlobalValue::InternalLinkage,
                               data, name, nullptr, llvm::GlobalValue::NotThreadLocal, kConst);
  gv->setAlignment(llvm::Align(4));
  return gv;
}

template <bool Single>
void build_body(IrMath<Single>& m, math::Fn f, llvm::Function* fn) {
  using M = IrMath<Single>;
  math::Algorithms<M> a(m);
  typename M::F x = m.template wrap<0>(fn->getArg(0));
  typename M::F y = math::arity(f) == 2 ? m.template wrap<0>(fn->getArg(1)) : x;
  if constexpr (Single) {  // f32 (and f16/bf16 through f32): exp and exp2 from the hardware's ex2
    if (f == math::Fn::Exp) return void(m.b.CreateRet(a.exp_hw(x).v));
    if (f == math::Fn::Exp2) return void(m.b.CreateRet(m.ex2(x, /*ftz=*/true).v));
  }
  m.b.CreateRet(math::apply(a, f, x, y).v);
}

/// The module's function for `kind` at f32 or f64, built on first use.
llvm::Function* math_function(Emitter& e, ir::OpKind kind, bool single) {
  const math::Fn f = math::function(kind);
  TESSERA_CHECK(f != math::Fn::None, "no math function for '", ir::op_name(kind), "'");
  std::string name = "__tessera_" + std::string(math::name(f)) + (single ? "_f32" : "_f64");
  if (llvm::Function* g = e.module.getFunction(name)) return g;
  llvm::Type* t = single ? e.b.getFloatTy() : e.b.getDoubleTy();
  std::vector<llvm::Type*> args(math::arity(f), t);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(t, args, false),
                                    llvm::GlobalValue::InternalLinkage, name, e.module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(e.ctx, "entry", fn));
  if (single) {
    IrMath<true> m(b, fn, two_over_pi(e.module));
    build_body(m, f, fn);
  } else {
    IrMath<false> m(b, fn, two_over_pi(e.module));
    build_body(m, f, fn);
  }
  return fn;
}

/// Calls `kind`'s function on values of any float type (narrow ones through f32).
llvm::Value* call_math(Emitter& e, ir::OpKind kind, std::vector<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  bool narrow = t->isHalfTy() || t->isBFloatTy();
  if (narrow)
    for (llvm::Value*& v : args) v = e.b.CreateFPExt(v, e.b.getFloatTy());
  llvm::Value* r = e.b.CreateCall(math_function(e, kind, !t->isDoubleTy()), args);
  return narrow ? e.b.CreateFPTrunc(r, t) : r;
}

}  // namespace

llvm::Value* math_unary(Emitter& e, ir::OpKind kind, llvm::Value* x) {
  return call_math(e, kind, {x});
}

llvm::Value* math_fmod(Emitter& e, llvm::Value* x, llvm::Value* y) {
  return call_math(e, ir::OpKind::Rem, {x, y});
}

llvm::Value* math_binary(Emitter& e, ir::OpKind kind, llvm::Value* x, llvm::Value* y) {
  return call_math(e, kind, {x, y});
}

}  // namespace tessera::ptx
