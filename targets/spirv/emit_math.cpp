/// \file Math functions: which computes each op (kMath: a GLSL.std.450 instruction, this file's
/// f32 code, or the math library of targets/math through math_backend.cpp; narrow floats in f32)
/// and fma with one rounding for every float dtype.
#include <iterator>

#include "core/support/math_coefficients.h"
#include "core/ir/op_table.h"
#include "targets/math/functions.h"
#include "targets/spirv/emitter.h"
#include "targets/spirv/math_backend.h"

namespace tessera::spirv::impl {

using ir::DType;
using ir::OpKind;

namespace {

/// How each math op is computed. f32 (and f16/bf16 through f32): `f32` says which; f64: the
/// GLSL.std.450 instruction where `glsl_f64` (a 64-bit form exists and is exact), else the math
/// library (targets/math/algorithms.h through math_backend.cpp).
enum class F32 : uint8_t {
  Glsl,     ///< the instruction (Vulkan's bounds meet the tile IR's)
  Own,      ///< this file's f32 code (faster than the library where the bandwidth rows use it)
  Library,  ///< the math library (sin, cos: exact reduction for huge arguments)
};
struct MathRow {
  OpKind kind;
  GLSLstd450 instruction;
  F32 f32;
  bool glsl_f64;
};
constexpr MathRow kMath[] = {
    {OpKind::Exp, GLSLstd450Exp, F32::Own, false},
    {OpKind::Exp2, GLSLstd450Exp2, F32::Own, false},
    {OpKind::Log, GLSLstd450Log, F32::Glsl, false},
    {OpKind::Log2, GLSLstd450Log2, F32::Glsl, false},
    {OpKind::Log1p, GLSLstd450Bad, F32::Library, false},
    {OpKind::Expm1, GLSLstd450Bad, F32::Library, false},
    {OpKind::Log10, GLSLstd450Bad, F32::Library, false},
    {OpKind::Sinh, GLSLstd450Bad, F32::Library, false},
    {OpKind::Cosh, GLSLstd450Bad, F32::Library, false},
    {OpKind::Asin, GLSLstd450Bad, F32::Library, false},
    {OpKind::Acos, GLSLstd450Bad, F32::Library, false},
    {OpKind::Atan, GLSLstd450Bad, F32::Library, false},
    {OpKind::Cbrt, GLSLstd450Bad, F32::Library, false},
    {OpKind::Pow, GLSLstd450Bad, F32::Library, false},  // GLSL Pow: not accurate on every driver
    {OpKind::Atan2, GLSLstd450Bad, F32::Library, false},
    {OpKind::Hypot, GLSLstd450Bad, F32::Library, false},
    {OpKind::Sqrt, GLSLstd450Sqrt, F32::Glsl, true},
    {OpKind::Rsqrt, GLSLstd450InverseSqrt, F32::Glsl, true},
    {OpKind::Sin, GLSLstd450Sin, F32::Library, false},
    {OpKind::Cos, GLSLstd450Cos, F32::Library, false},
    {OpKind::Tanh, GLSLstd450Tanh, F32::Own, false},
    {OpKind::Erf, GLSLstd450Bad, F32::Own, false},
    {OpKind::Erfinv, GLSLstd450Bad, F32::Library, false},
    {OpKind::Floor, GLSLstd450Floor, F32::Glsl, true},
    {OpKind::Ceil, GLSLstd450Ceil, F32::Glsl, true},
};

/// kMath by op kind (listing a kind twice is not a constant expression: a build error).
constexpr ir::OpTable<MathRow> kRows = [] {
  ir::OpTable<MathRow> t;
  for (const MathRow& r : kMath) t.put(r.kind, r);
  return t;
}();

/// Every kMath row of ops.def (emit.cpp routes them all to emit_math) has a row here, and every
/// way a row leaves to the math library (f32 Library, f64 without GLSL, two operands) meets a
/// library function (targets/math/functions.h).
constexpr bool every_math_row_emitted() {
  for (const ir::OpRow& r : ir::kOpRows) {
    const bool math = (r.traits & ir::kMath) != 0;
    if (math != kRows.has(r.kind)) return false;
    if (!math) continue;
    const MathRow& row = kRows[r.kind];
    const bool library = row.f32 == F32::Library || !row.glsl_f64 || r.min_operands == 2;
    if (library && math::function(r.kind) == math::Fn::None) return false;
    if (row.f32 == F32::Glsl && row.instruction == GLSLstd450Bad) return false;
    const bool own = r.kind == OpKind::Exp || r.kind == OpKind::Exp2 || r.kind == OpKind::Erf ||
                     r.kind == OpKind::Tanh;  // the functions emit_math has f32 code for
    if (row.f32 == F32::Own && !own) return false;
  }
  return true;
}
static_assert(every_math_row_emitted(),
              "a kMath op has no SPIR-V row, or a row that needs a library function lacks one");

/// erf(x)/x = P(x^2) on |x| < 1 (Chebyshev interpolant, relative error 1.3e-9).
constexpr float kErfSmall[] = {0x1.20dd74p+0f, -0x1.81273ep-2f,  0x1.ce2d10p-4f, -0x1.b7fabap-6f,
                               0x1.541270p-8f, -0x1.a45088p-11f, 0x1.4a5690p-14f};
/// erfc(x) exp(x^2) = Q(x - kErfCenter) on [1, kErfOne] (relative error 1.5e-7).
constexpr float kErfLarge[] = {0x1.b5f786p-3f,  -0x1.38f18ep-4f,  0x1.a8e072p-6f,  -0x1.139898p-7f,
                               0x1.5769fep-9f,  -0x1.9f282ap-11f, 0x1.e19c26p-13f, -0x1.ef67e2p-15f,
                               0x1.1170bep-16f, -0x1.d34d7ep-18f, 0x1.dc5ba8p-20f};
constexpr float kErfCenter = 0x1.3ad444p+1f;  // (1 + kErfOne) / 2
/// The smallest f32 whose erf rounds to 1 (erfc(x) = 2^-25).
constexpr float kErfOne = 0x1.f5a88ap+1f;

Value horner(Builder& b, const float* c, size_t n, Value t) {
  Value r = b.c_float(t.type, c[n - 1]);
  for (size_t i = n - 1; i-- > 0;)
    r = b.ext(GLSLstd450Fma, t.type, {r, t, b.c_float(t.type, c[i])});
  return r;
}

/// erf in f32: x P(x^2) below 1, sign(x) (1 - exp(-x^2) Q(|x|)) up to kErfOne, +-1 beyond. The
/// worst relative error over f32, simulated with Exp at Vulkan's error bound (3 + 2|x| ulp), is
/// 1.7e-7 (at |x| near 1).
Value erf_f32(Emitter& e, Value x) {
  Builder& b = e.b;
  uint32_t f = x.type;
  Value ax = b.ext(GLSLstd450FAbs, f, {x});
  Value small = e.fbinary(spv::OpFMul, x,
                          horner(b, kErfSmall, std::size(kErfSmall), e.fbinary(spv::OpFMul, x, x)));
  Value in_range = b.compare(spv::OpFOrdLessThan, ax, b.c_float(f, kErfOne));
  Value ac = b.select(in_range, ax, b.c_float(f, kErfOne));
  Value q = horner(b, kErfLarge, std::size(kErfLarge),
                   e.fbinary(spv::OpFSub, ac, b.c_float(f, kErfCenter)));
  Value decay = b.ext(GLSLstd450Exp, f, {b.unary(spv::OpFNegate, e.fbinary(spv::OpFMul, ac, ac))});
  Value large = b.ext(GLSLstd450Fma, f, {b.unary(spv::OpFNegate, decay), q, b.c_float(f, 1)});
  large = b.select(in_range, large, b.c_float(f, 1));
  Value negative = b.compare(spv::OpFOrdLessThan, x, b.c_float(f, 0));
  large = b.select(negative, b.unary(spv::OpFNegate, large), large);
  Value r = b.select(b.compare(spv::OpFOrdLessThan, ax, b.c_float(f, 1)), small, large);
  return b.select(b.op(spv::OpIsNan, b.t_bool(), {x}), x, r);
}

/// tanh(x)/x = R(x^2) on |x| < kTanhSmall (Chebyshev interpolant; 1.5 ulp in f32).
constexpr float kTanhSmall = 0.625f;
constexpr float kTanh[] = {0x1.000000p+0f,  -0x1.555524p-2f, 0x1.11056ep-3f,
                           -0x1.b8133cp-5f, 0x1.515122p-6f,  -0x1.72befap-8f};

/// tanh: GLSL's Tanh is the exp-based formula on some drivers, which cancels near 0 (lavapipe is
/// off by 2^-25 absolute) and overflows to NaN for large |x|. Small arguments use the odd
/// polynomial; others GLSL Tanh with |x| clamped to 10, where the f32 result is already +-1.
Value tanh_f32(Emitter& e, Value x) {
  Builder& b = e.b;
  uint32_t f = x.type;
  Value ax = b.ext(GLSLstd450FAbs, f, {x});
  Value big = b.compare(spv::OpFOrdGreaterThan, ax, b.c_float(f, 10));
  Value limit = b.select(b.compare(spv::OpFOrdGreaterThan, x, b.c_float(f, 0)), b.c_float(f, 10),
                         b.c_float(f, -10));
  Value large = b.ext(GLSLstd450Tanh, f, {b.select(big, limit, x)});
  Value small =
      e.fbinary(spv::OpFMul, x, horner(b, kTanh, std::size(kTanh), e.fbinary(spv::OpFMul, x, x)));
  return b.select(b.compare(spv::OpFOrdLessThan, ax, b.c_float(f, kTanhSmall)), small, large);
}

/// ln 2 in two parts: kLn2Hi has 15 significant bits, so k * kLn2Hi is exact for |k| < 2^9.
constexpr float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f, kLog2E = 0x1.715476p+0f;

/// x limited to [lo, hi] (f32); NaN passes through.
Value clamp(Builder& b, Value x, float lo, float hi) {
  uint32_t f = x.type;
  x = b.select(b.compare(spv::OpFOrdGreaterThan, x, b.c_float(f, hi)), b.c_float(f, hi), x);
  return b.select(b.compare(spv::OpFOrdLessThan, x, b.c_float(f, lo)), b.c_float(f, lo), x);
}

/// exp and exp2: Vulkan bounds Exp's error by 3 + 2|x| ulp (lavapipe is 7 ulp off at x = 18), so
/// the argument is reduced to |r| <= ln2/2 (exp2: |f| <= 1/2) and the power of two applied
/// exactly with Ldexp. Arguments are clamped where the result is already 0 or inf.
Value exp_f32(Emitter& e, Value x, bool base2) {
  Builder& b = e.b;
  uint32_t f = x.type;
  Value xc = base2 ? clamp(b, x, -151, 129) : clamp(b, x, -104, 89);
  Value k, r;
  if (base2) {
    k = b.ext(GLSLstd450RoundEven, f, {xc});
    r = e.fbinary(spv::OpFSub, xc, k);  // exact
  } else {
    k = b.ext(GLSLstd450RoundEven, f, {e.fbinary(spv::OpFMul, xc, b.c_float(f, kLog2E))});
    r = e.fbinary(spv::OpFSub, xc, e.fbinary(spv::OpFMul, k, b.c_float(f, kLn2Hi)));
    r = e.fbinary(spv::OpFSub, r, e.fbinary(spv::OpFMul, k, b.c_float(f, kLn2Lo)));
  }
  Value p = b.ext(base2 ? GLSLstd450Exp2 : GLSLstd450Exp, f, {r});
  Value scaled =
      b.ext(GLSLstd450Ldexp, f, {p, b.convert(spv::OpConvertFToS, b.t_int(32, true), k)});
  return b.select(b.op(spv::OpIsNan, b.t_bool(), {x}), x, scaled);  // NaN's k converts to junk
}

/// exp and exp2 where GLSL Fma is fused (Cap::FusedFma: NVIDIA), from the driver's Exp2 (the
/// hardware's 2^x, within 2 ulp there, where Exp and Ldexp cost several times as much): exp2 is
/// Exp2 itself; exp is 2^hi (1 + lo ln 2) with hi = x log2(e) rounded and lo its rounding error,
/// the correction applied by one fma (as the PTX target's exp: within 2.5 ulp when Exp2 is within
/// 2). An infinite 2^hi makes the fma NaN (inf * -t + inf): a NaN from a non-NaN 2^hi takes 2^hi.
Value exp_f32_fused(Emitter& e, Value x, bool base2) {
  Builder& b = e.b;
  uint32_t f = x.type;
  if (base2) return b.ext(GLSLstd450Exp2, f, {x});
  Value xc = clamp(b, x, -104, 89);
  const float log2e_hi = 0x1.715476p+0f, log2e_lo = 0x1.4ae0cp-26f;
  Value hi = e.fbinary(spv::OpFMul, xc, b.c_float(f, log2e_hi));
  Value lo = b.ext(GLSLstd450Fma, f, {xc, b.c_float(f, log2e_hi), b.unary(spv::OpFNegate, hi)});
  lo = e.fbinary(spv::OpFAdd, lo, e.fbinary(spv::OpFMul, xc, b.c_float(f, log2e_lo)));
  Value p = b.ext(GLSLstd450Exp2, f, {hi});
  Value t = e.fbinary(spv::OpFMul, lo, b.c_float(f, 0x1.62e43p-1f));  // ln 2
  Value y = b.ext(GLSLstd450Fma, f, {p, t, p});
  return b.select(b.op(spv::OpIsNan, b.t_bool(), {y}), p, y);
}

}  // namespace

void Emitter::emit_math(const ir::Op& op) {
  DType dtype = op.result()->type.dtype;
  const MathRow row = kRows[op.kind];  // every kMath kind has one (static_assert above)
  Value x = get(op.operand(0));
  if (op.operands.size() == 2) {  // pow, atan2, hypot: the library at f32 (narrow) or f64
    Value y = get(op.operand(1));
    if (dtype == DType::f64) return set(op.result(), library_math(*this, op.kind, x, y));
    Value r = library_math(*this, op.kind, widen_to_f32(x, dtype), widen_to_f32(y, dtype));
    return set(op.result(), narrow_from_f32(r, dtype));
  }
  if (dtype == DType::f64) {  // the target has f64 (check_support refuses the dtype otherwise)
    if (row.glsl_f64) return set(op.result(), b.ext(row.instruction, x.type, {x}));
    return set(op.result(), library_math(*this, op.kind, x));
  }
  Value x32 = widen_to_f32(x, dtype);
  Value r;
  if (row.f32 == F32::Library)
    r = library_math(*this, op.kind, x32);
  else if (op.kind == OpKind::Erf)
    r = erf_f32(*this, x32);
  else if (op.kind == OpKind::Tanh)
    r = tanh_f32(*this, x32);
  else if (op.kind == OpKind::Exp || op.kind == OpKind::Exp2)
    r = target.has(target::Cap::FusedFma) ? exp_f32_fused(*this, x32, op.kind == OpKind::Exp2)
                                          : exp_f32(*this, x32, op.kind == OpKind::Exp2);
  else
    r = b.ext(row.instruction, x32.type, {x32});
  set(op.result(), narrow_from_f32(r, dtype));
}

/// f32 and f64: GLSL Fma. f16 and bf16: the product is exact in f32, the sum is rounded to odd
/// there, and the one rounding to the narrow format is then correct.
void Emitter::emit_fma(const ir::Op& op) {
  DType dtype = op.result()->type.dtype;
  Value a = float_operand(op.operand(0)), c = float_operand(op.operand(1)),
        d = float_operand(op.operand(2));
  if (dtype == DType::f32 || dtype == DType::f64)
    return set(op.result(), b.ext(GLSLstd450Fma, a.type, {a, c, d}));
  Value product = fbinary(spv::OpFMul, widen_to_f32(a, dtype), widen_to_f32(c, dtype));
  set(op.result(), narrow_from_f32(odd_sum_f32(product, widen_to_f32(d, dtype)), dtype));
}

}  // namespace tessera::spirv::impl
