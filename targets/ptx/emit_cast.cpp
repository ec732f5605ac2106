/// \file Conversions (ops.h's `cast` rules), bitcasts and pointer arithmetic. LLVM's NVPTX
/// lowering is exact for every conversion but one: a 32- or 64-bit integer to bf16 before sm_90
/// goes through f32 and rounds twice, so those convert through an f64 rounded to odd instead (then
/// LLVM's f64 -> bf16, itself round-to-odd then nearest, rounds correctly once). fp8 values are
/// bytes to LLVM: they convert through inline `cvt` (sm_90+: PTX 8.0 has the fp8 cvt forms for
/// sm_90 only, sm_89 gets them in PTX 8.1), from f16 exactly and to fp8 from an
/// f32 (rounded to odd first where the source is wider, so the one rounding to fp8 is correct).
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

using ir::DType;

/// A 64-bit integer as an f64 rounded to odd (exact values stay exact): the intermediate that
/// lets a second rounding to a format of <= 51 bits be correct. cvt.rz is inline PTX because
/// LLVM 19 rewrites the nvvm *2d.rz intrinsics into sitofp (which rounds to nearest).
llvm::Value* int64_to_f64_odd(Emitter& e, llvm::Value* x, bool is_signed) {
  auto& b = e.b;
  auto* fty = llvm::FunctionType::get(b.getDoubleTy(), {b.getInt64Ty()}, false);
  const char* text = is_signed ? "cvt.rz.f64.s64 $0, $1;" : "cvt.rz.f64.u64 $0, $1;";
  llvm::Value* d = b.CreateCall(llvm::InlineAsm::get(fty, text, "=d,l", false), {x});
  // |d| <= |x| and d is integral, so converting back is exact (no poison).
  llvm::Value* back =
      is_signed ? b.CreateFPToSI(d, b.getInt64Ty()) : b.CreateFPToUI(d, b.getInt64Ty());
  llvm::Value* bits = b.CreateBitCast(d, b.getInt64Ty());
  llvm::Value* odd = b.CreateOr(bits, b.getInt64(1));
  return b.CreateBitCast(b.CreateSelect(b.CreateICmpEQ(back, x), bits, odd), b.getDoubleTy());
}

llvm::Value* int_to_float(Emitter& e, llvm::Value* x, DType from, DType to, llvm::Type* t) {
  auto& b = e.b;
  bool sgn = ir::is_signed_int(from);
  if (to == DType::bf16 && e.target.sm < 90 && ir::dtype_bits(from) > 16) {
    llvm::Value* wide = sgn ? b.CreateSExt(x, b.getInt64Ty()) : b.CreateZExt(x, b.getInt64Ty());
    return b.CreateFPTrunc(int64_to_f64_odd(e, wide, sgn), t);  // one correct rounding
  }
  return sgn ? b.CreateSIToFP(x, t) : b.CreateUIToFP(x, t);
}

/// An f64 as an f32 rounded to odd: truncated (cvt.rz), its last bit set when that was inexact.
llvm::Value* f64_to_f32_odd(Emitter& e, llvm::Value* x) {
  auto& b = e.b;
  auto* fty = llvm::FunctionType::get(b.getFloatTy(), {b.getDoubleTy()}, false);
  llvm::Value* f =
      b.CreateCall(llvm::InlineAsm::get(fty, "cvt.rz.f32.f64 $0, $1;", "=f,d", false), {x});
  llvm::Value* exact = b.CreateFCmpUEQ(b.CreateFPExt(f, b.getDoubleTy()), x);  // NaN: as is
  llvm::Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value* odd = b.CreateOr(bits, b.getInt32(1));
  return b.CreateBitCast(b.CreateSelect(exact, bits, odd), b.getFloatTy());
}

/// An fp8 byte widened exactly to f16 by `cvt.rn.f16x2.{e4m3,e5m2}x2` (the high byte is zero).
llvm::Value* fp8_to_f16(Emitter& e, llvm::Value* x, DType from) {
  auto& b = e.b;
  auto* fty = llvm::FunctionType::get(b.getInt32Ty(), {b.getInt16Ty()}, false);
  const char* text =
      from == DType::f8e4m3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
  llvm::Value* pair = b.CreateCall(llvm::InlineAsm::get(fty, text, "=r,h", false),
                                   {b.CreateZExt(x, b.getInt16Ty())});
  return b.CreateBitCast(b.CreateTrunc(pair, b.getInt16Ty()), b.getHalfTy());
}

/// An f32 rounded to fp8 by `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` (NaN stays NaN, beyond the
/// largest finite value saturates); the low byte of the pair is the second operand's.
llvm::Value* f32_to_fp8(Emitter& e, llvm::Value* x, DType to) {
  auto& b = e.b;
  auto* fty = llvm::FunctionType::get(b.getInt16Ty(), {b.getFloatTy(), b.getFloatTy()}, false);
  const char* text = to == DType::f8e4m3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
                                         : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
  llvm::Value* pair = b.CreateCall(llvm::InlineAsm::get(fty, text, "=h,f,f", false),
                                   {llvm::ConstantFP::get(b.getFloatTy(), 0.0), x});
  return b.CreateTrunc(pair, b.getInt8Ty());
}

llvm::Value* convert(Emitter& e, llvm::Value* x, DType from, DType to);

/// A conversion from or to fp8: through f16 (exact) from fp8, through an f32 that holds the
/// source exactly or rounded to odd to fp8.
llvm::Value* convert_fp8(Emitter& e, const ir::Op& op, llvm::Value* x, DType from, DType to) {
  auto& b = e.b;
  if (e.target.sm < 90)
    e.unsupported(op, "dtype " + std::string(ir::dtype_name(ir::is_fp8(from) ? from : to)) +
                          " on " + e.target.name +
                          ": fp8 conversions need sm_90 or newer (cvt ... e4m3x2/e5m2x2 in PTX " +
                          "8.0)");
  if (from == to) return x;
  if (ir::is_fp8(from)) {
    llvm::Value* h = fp8_to_f16(e, x, from);
    if (to == DType::f16) return h;
    llvm::Value* f = b.CreateFPExt(h, b.getFloatTy());
    return ir::is_fp8(to) ? f32_to_fp8(e, f, to) : convert(e, f, DType::f32, to);
  }
  llvm::Value* f = nullptr;
  if (from == DType::f32)
    f = x;
  else if (from == DType::f16 || from == DType::bf16)
    f = b.CreateFPExt(x, b.getFloatTy());
  else if (from == DType::f64)
    f = f64_to_f32_odd(e, x);
  else if (from == DType::i64 || from == DType::u64)
    f = f64_to_f32_odd(e, int64_to_f64_odd(e, x, ir::is_signed_int(from)));
  else  // integers of <= 32 bits are exact in f64
    f = f64_to_f32_odd(e, convert(e, x, from, DType::f64));
  return f32_to_fp8(e, f, to);
}

llvm::Value* convert(Emitter& e, llvm::Value* x, DType from, DType to) {
  auto& b = e.b;
  llvm::Type* t = e.scalar_type(to);
  if (from == to) return x;
  if (to == DType::i1) {  // x != 0 (NaN counts as nonzero)
    if (ir::is_float(from)) return b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (ir::is_float(from) && ir::is_float(to)) {
    int from_bits = ir::dtype_bits(from), to_bits = ir::dtype_bits(to);
    if (to_bits > from_bits) return b.CreateFPExt(x, t);
    if (to_bits < from_bits) return b.CreateFPTrunc(x, t);
    return b.CreateFPTrunc(b.CreateFPExt(x, b.getFloatTy()), t);  // f16 <-> bf16: exact, then once
  }
  if (ir::is_float(to)) return int_to_float(e, x, from, to, t);
  if (ir::is_float(from)) {  // toward zero, saturating, NaN -> 0 (as the interpreter defines)
    auto id = ir::is_signed_int(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b.CreateIntrinsic(id, {t, x->getType()}, {x});
  }
  // int -> int: truncate, or extend by the source's signedness (i1 is unsigned: 0/1)
  return ir::is_signed_int(from) ? b.CreateSExtOrTrunc(x, t) : b.CreateZExtOrTrunc(x, t);
}

}  // namespace

void emit_cast(Emitter& e, const ir::Op& op) {
  const ir::Type& from = op.operand(0)->type;
  const ir::Type& to = op.result()->type;
  llvm::Value* x = e.get(op.operand(0));
  auto& b = e.b;
  llvm::Value* y = nullptr;
  switch (op.kind) {
    case ir::OpKind::PtrAdd: {
      llvm::Value* off = e.get(op.operand(1));
      const ir::Type& ot = op.operand(1)->type;
      off = ir::is_signed_int(ot.dtype) ? b.CreateSExtOrTrunc(off, b.getInt64Ty())
                                        : b.CreateZExtOrTrunc(off, b.getInt64Ty());
      y = b.CreateGEP(e.memory_type(from.dtype), x, off);
      break;
    }
    case ir::OpKind::Bitcast:
      if (from.is_ptr || to.is_ptr) {
        llvm::Value* bits =
            from.is_ptr ? b.CreatePtrToInt(x, b.getInt64Ty()) : b.CreateBitCast(x, b.getInt64Ty());
        y = to.is_ptr ? b.CreateIntToPtr(bits, e.type(to)) : b.CreateBitCast(bits, e.type(to));
      } else if (x->getType() == e.type(to)) {
        y = x;
      } else if (x->getType()->isFloatingPointTy() && e.type(to)->isFloatingPointTy()) {
        // f16 <-> bf16: NVPTX cannot select a bitcast between two float types, so it goes
        // through the integer of their width, and through a `mov` the optimizer cannot see
        // through (LLVM folds bitcast(bitcast(x)) back into the float-to-float bitcast; the
        // fuzz corpus had two kernels that aborted instruction selection so). ptxas drops the mov.
        const unsigned width = x->getType()->getPrimitiveSizeInBits();
        llvm::Type* bits = b.getIntNTy(width);
        auto* fty = llvm::FunctionType::get(bits, {bits}, false);
        const bool wide = width == 32;
        llvm::Value* same =
            b.CreateCall(llvm::InlineAsm::get(fty, wide ? "mov.b32 $0, $1;" : "mov.b16 $0, $1;",
                                              wide ? "=r,r" : "=h,h", false),
                         {b.CreateBitCast(x, bits)});
        y = b.CreateBitCast(same, e.type(to));
      } else {
        y = b.CreateBitCast(x, e.type(to));
      }
      break;
    case ir::OpKind::Cast:
      if (from.is_ptr || to.is_ptr) {  // pointer <-> 64-bit integer, or pointee change
        if (from.is_ptr && to.is_ptr)
          y = x;
        else if (from.is_ptr)
          y = b.CreatePtrToInt(x, e.type(to));
        else
          y = b.CreateIntToPtr(b.CreateZExtOrTrunc(x, b.getInt64Ty()), e.type(to));
      } else if (ir::is_fp8(from.dtype) || ir::is_fp8(to.dtype)) {
        y = convert_fp8(e, op, x, from.dtype, to.dtype);
      } else {
        y = convert(e, x, from.dtype, to.dtype);
      }
      break;
    default:
      TESSERA_CHECK(false, "not a cast: ", op.name());
  }
  e.set(op.result(), y);
}

}  // namespace tessera::ptx
