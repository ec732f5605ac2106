/// \file Constants, elementwise arithmetic and comparisons: a table from op kind to LLVM
/// instruction per operand class, plus the cases ops.h defines beyond LLVM's semantics (integer
/// division by zero and shifts past the width are defined as the interpreter defines them, so no
/// poison reaches the optimizer; float min/max follow the op's NaN rule).
#include "core/ir/ops.h"
#include "core/support/error.h"
#include "core/support/float8.h"
#include "targets/ptx/emitter.h"
#include "targets/ptx/math.h"

namespace tessera::ptx {
namespace {

using ir::OpKind;
using BinOp = llvm::Instruction::BinaryOps;
constexpr auto kNone = static_cast<BinOp>(0);

/// Binary ops that are one LLVM instruction per operand class.
struct BinaryRow {
  OpKind kind;
  BinOp sint, uint, flt;
};
constexpr BinaryRow kBinary[] = {
    {OpKind::Add, BinOp::Add, BinOp::Add, BinOp::FAdd},
    {OpKind::Sub, BinOp::Sub, BinOp::Sub, BinOp::FSub},
    {OpKind::Mul, BinOp::Mul, BinOp::Mul, BinOp::FMul},
    {OpKind::Div, BinOp::SDiv, BinOp::UDiv, BinOp::FDiv},
    {OpKind::And, BinOp::And, BinOp::And, kNone},
    {OpKind::Or, BinOp::Or, BinOp::Or, kNone},
    {OpKind::Xor, BinOp::Xor, BinOp::Xor, kNone},
};

/// Comparisons: signed, unsigned (and pointers), float (ordered, except `!=`).
struct CompareRow {
  OpKind kind;
  llvm::CmpInst::Predicate sint, uint, flt;
};
using P = llvm::CmpInst::Predicate;
constexpr CompareRow kCompare[] = {
    {OpKind::CmpEq, P::ICMP_EQ, P::ICMP_EQ, P::FCMP_OEQ},
    {OpKind::CmpNe, P::ICMP_NE, P::ICMP_NE, P::FCMP_UNE},
    {OpKind::CmpLt, P::ICMP_SLT, P::ICMP_ULT, P::FCMP_OLT},
    {OpKind::CmpLe, P::ICMP_SLE, P::ICMP_ULE, P::FCMP_OLE},
    {OpKind::CmpGt, P::ICMP_SGT, P::ICMP_UGT, P::FCMP_OGT},
    {OpKind::CmpGe, P::ICMP_SGE, P::ICMP_UGE, P::FCMP_OGE},
};

/// min/max: integer intrinsics by signedness; floats by NaN rule.
struct MinMaxRow {
  OpKind kind;
  llvm::Intrinsic::ID sint, uint, propagate, ignore;
};
constexpr MinMaxRow kMinMax[] = {
    {OpKind::Min, llvm::Intrinsic::smin, llvm::Intrinsic::umin, llvm::Intrinsic::minimum,
     llvm::Intrinsic::minnum},
    {OpKind::Max, llvm::Intrinsic::smax, llvm::Intrinsic::umax, llvm::Intrinsic::maximum,
     llvm::Intrinsic::maxnum},
};

bool is_signed(const ir::Type& t) {
  return !t.is_ptr && ir::is_signed_int(t.dtype);
}

/// Integer division and remainder with the interpreter's definitions of the undefined cases:
/// x / 0 == 0, x % 0 == x, MIN / -1 wraps to MIN, MIN % -1 == 0.
llvm::Value* int_divide(Emitter& e, bool rem, bool is_signed, llvm::Value* a, llvm::Value* d) {
  auto& b = e.b;
  llvm::Type* t = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* by_zero = b.CreateICmpEQ(d, zero);
  if (!is_signed || t->isIntegerTy(1)) {
    llvm::Value* safe = b.CreateSelect(by_zero, one, d);
    llvm::Value* q = rem ? b.CreateURem(a, safe) : b.CreateUDiv(a, safe);
    return b.CreateSelect(by_zero, rem ? a : zero, q);
  }
  llvm::Value* by_minus_one = b.CreateICmpEQ(d, llvm::ConstantInt::getSigned(t, -1));
  llvm::Value* safe = b.CreateSelect(b.CreateOr(by_zero, by_minus_one), one, d);
  llvm::Value* q = rem ? b.CreateSRem(a, safe) : b.CreateSDiv(a, safe);
  llvm::Value* minus_one_result = rem ? zero : b.CreateSub(zero, a);
  return b.CreateSelect(by_zero, rem ? a : zero, b.CreateSelect(by_minus_one, minus_one_result, q));
}

/// Shifts saturate like PTX's shl/shr (and the interpreter): a count >= the width (read as
/// unsigned) gives 0, or the sign fill for an arithmetic right shift.
llvm::Value* shift(Emitter& e, bool left, bool is_signed, llvm::Value* a, llvm::Value* c) {
  auto& b = e.b;
  llvm::Type* t = a->getType();
  unsigned bits = t->getIntegerBitWidth();
  llvm::Value* too_far = b.CreateICmpUGE(c, llvm::ConstantInt::get(t, bits));
  if (left) return b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), b.CreateShl(a, c));
  if (!is_signed) return b.CreateSelect(too_far, llvm::ConstantInt::get(t, 0), b.CreateLShr(a, c));
  return b.CreateAShr(a, b.CreateSelect(too_far, llvm::ConstantInt::get(t, bits - 1), c));
}

/// f32 division as div.full.f32: within 2 ulp over the full range (ops.h allows SPIR-V's 2.5),
/// as CUDA's and Triton's default `/`; about a third of div.rn.f32's instructions. LLVM has no
/// intrinsic for it, and NVPTX picks the form for `fdiv` by a process-wide option.
llvm::Value* divide_f32(Emitter& e, llvm::Value* x, llvm::Value* y) {
  llvm::Type* f = e.b.getFloatTy();
  auto* fty = llvm::FunctionType::get(f, {f, f}, false);
  return e.b.CreateCall(llvm::InlineAsm::get(fty, "div.full.f32 $0, $1, $2;", "=f,f,f", false),
                        {x, y});
}

llvm::Value* binary(Emitter& e, const ir::Op& op, llvm::Value* x, llvm::Value* y) {
  const ir::Type& t = op.operand(0)->type;
  const bool flt = t.is_float(), sgn = is_signed(t);
  switch (op.kind) {
    case OpKind::Div:
      if (!flt) return int_divide(e, false, sgn, x, y);
      if (x->getType()->isFloatTy()) return divide_f32(e, x, y);
      break;
    case OpKind::Rem:
      return flt ? math_fmod(e, x, y) : int_divide(e, true, sgn, x, y);
    case OpKind::Shl:
    case OpKind::Shr:
      return shift(e, op.kind == OpKind::Shl, sgn, x, y);
    case OpKind::Min:
    case OpKind::Max:
      for (const MinMaxRow& r : kMinMax) {
        if (r.kind != op.kind) continue;
        llvm::Intrinsic::ID id =
            !flt ? (sgn ? r.sint : r.uint) : (ir::propagates_nan(&op) ? r.propagate : r.ignore);
        return e.intrinsic(id, {x->getType()}, {x, y});
      }
      break;
    default:
      break;
  }
  for (const BinaryRow& r : kBinary) {
    if (r.kind != op.kind) continue;
    BinOp inst = flt ? r.flt : (sgn ? r.sint : r.uint);
    if (inst == kNone) e.unsupported(op, "operands of type " + t.str());
    return e.b.CreateBinOp(inst, x, y);
  }
  TESSERA_CHECK(false, "no binary row for '", op.name(), "'");
}

/// -x of an integer. Quirk::NarrowNegateUnwrapped (ptxas): an 8- or 16-bit x is negated in 32
/// bits and wrapped there with `bfe` (the low bits sign- or zero-extended, in inline PTX that
/// ptxas cannot merge with the negation) before narrowing, so the register holds the wrapped value.
llvm::Value* negate(Emitter& e, llvm::Value* x, bool is_signed) {
  auto& b = e.b;
  const unsigned bits = x->getType()->getIntegerBitWidth();
  if (!e.target.has(target::Quirk::NarrowNegateUnwrapped) || bits >= 32) return b.CreateNeg(x);
  llvm::Value* wide = is_signed ? b.CreateSExt(x, b.getInt32Ty()) : b.CreateZExt(x, b.getInt32Ty());
  llvm::Value* negated = b.CreateNeg(wide);
  std::string text =
      std::string(is_signed ? "bfe.s32" : "bfe.u32") + " $0, $1, 0, " + std::to_string(bits) + ";";
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt32Ty()}, false);
  llvm::Value* wrapped = b.CreateCall(llvm::InlineAsm::get(fty, text, "=r,r", false), {negated});
  return b.CreateTrunc(wrapped, x->getType());
}

llvm::Value* unary(Emitter& e, const ir::Op& op, llvm::Value* x) {
  const ir::Type& t = op.operand(0)->type;
  auto& b = e.b;
  switch (op.kind) {
    case OpKind::Neg:
      return t.is_float() ? b.CreateFNeg(x) : negate(e, x, is_signed(t));
    case OpKind::Not:
      return b.CreateNot(x);
    case OpKind::Abs:
      if (t.is_float()) return e.intrinsic(llvm::Intrinsic::fabs, {x->getType()}, {x});
      if (!is_signed(t)) return x;
      if (e.target.has(target::Quirk::NarrowNegateUnwrapped) && t.is_int() &&
          ir::dtype_bits(t.dtype) < 32)  // |MIN| == MIN, through the wrapped negation
        return b.CreateSelect(b.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0)),
                              negate(e, x, true), x);
      return e.intrinsic(llvm::Intrinsic::abs, {x->getType()}, {x, b.getFalse()});  // MIN wraps
    default:
      TESSERA_CHECK(false, "not a unary op: ", op.name());
  }
}

}  // namespace

void emit_constant(Emitter& e, const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  llvm::Type* ty = e.type(t);
  ir::ConstantOp c(&op);
  llvm::Value* v = nullptr;
  if (t.is_ptr) {
    v = e.b.CreateIntToPtr(e.b.getInt64(static_cast<uint64_t>(c.int_value())), ty);
  } else if (ir::is_fp8(t.dtype)) {  // a byte to LLVM: its encoding
    const double x = c.is_float() ? c.float_value() : double(c.int_value());
    v = e.b.getInt8(t.dtype == ir::DType::f8e4m3 ? f8e4m3_from_double(x) : f8e5m2_from_double(x));
  } else if (t.is_float()) {
    v = llvm::ConstantFP::get(ty, c.is_float() ? c.float_value() : double(c.int_value()));
  } else {
    v = llvm::ConstantInt::get(ty, static_cast<uint64_t>(c.int_value()), is_signed(t));
  }
  e.set(op.result(), v);
}

void emit_arith(Emitter& e, const ir::Op& op) {
  std::vector<llvm::Value*> in;
  for (const ir::Value* v : op.operands) in.push_back(e.get(v));
  llvm::Value* out = nullptr;
  if (op.kind == OpKind::Where) {
    out = e.b.CreateSelect(in[0], in[1], in[2]);
  } else if (op.kind == OpKind::Fma) {
    out = op.operand(0)->type.is_float() ? e.intrinsic(llvm::Intrinsic::fma, {in[0]->getType()}, in)
                                         : e.b.CreateAdd(e.b.CreateMul(in[0], in[1]), in[2]);
  } else if (in.size() == 1) {
    out = unary(e, op, in[0]);
  } else {
    out = binary(e, op, in[0], in[1]);
  }
  e.set(op.result(), out);
}

void emit_compare(Emitter& e, const ir::Op& op) {
  const ir::Type& t = op.operand(0)->type;
  llvm::Value* x = e.get(op.operand(0));
  llvm::Value* y = e.get(op.operand(1));
  for (const CompareRow& r : kCompare) {
    if (r.kind != op.kind) continue;
    P pred = t.is_float() ? r.flt : (is_signed(t) ? r.sint : r.uint);
    e.set(op.result(), t.is_float() ? e.b.CreateFCmp(pred, x, y) : e.b.CreateICmp(pred, x, y));
    return;
  }
  TESSERA_CHECK(false, "no compare row for '", op.name(), "'");
}

}  // namespace tessera::ptx
