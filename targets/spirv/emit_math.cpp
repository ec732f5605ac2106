/// \file Math functions (GLSL.std.450, in f32 for the narrow floats), erf (which GLSL lacks) and
/// fma with one rounding for every float dtype.
#include <iterator>

#include "core/support/math_coefficients.h"
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;
using ir::OpKind;

namespace {

/// One row per math op: its GLSL.std.450 instruction and whether a 64-bit form exists.
struct MathRow {
  OpKind kind;
  GLSLstd450 instruction;
  bool has_f64;
};
constexpr MathRow kMath[] = {
    {OpKind::Exp, GLSLstd450Exp, false},    {OpKind::Exp2, GLSLstd450Exp2, false},
    {OpKind::Log, GLSLstd450Log, false},    {OpKind::Log2, GLSLstd450Log2, false},
    {OpKind::Sqrt, GLSLstd450Sqrt, true},   {OpKind::Rsqrt, GLSLstd450InverseSqrt, true},
    {OpKind::Sin, GLSLstd450Sin, false},    {OpKind::Cos, GLSLstd450Cos, false},
    {OpKind::Tanh, GLSLstd450Tanh, false},  {OpKind::Erf, GLSLstd450Bad, false},
    {OpKind::Floor, GLSLstd450Floor, true}, {OpKind::Ceil, GLSLstd450Ceil, true},
};

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

/// 2*pi in three parts: kTwoPi1 has 8 significant bits and kTwoPi2 12, so k * kTwoPi1 is exact
/// for |k| < 2^16 and k * kTwoPi2 for |k| < 2^12, with or without a fused multiply-add.
constexpr float kTwoPi1 = 0x1.92p+2f, kTwoPi2 = 0x1.fb6p-10f, kTwoPi3 = -0x1.777a5cp-23f;
constexpr float kInvTwoPi = 0x1.45f306p-3f;

/// sin/cos: Vulkan specifies GLSL Sin and Cos only on [-pi, pi] (lavapipe returns +-1 beyond),
/// so the argument is reduced there first (Cody-Waite; accurate while |x| < 2^16 * 2pi, a value
/// in [-1, 1] without accuracy beyond).
Value sin_cos_f32(Emitter& e, GLSLstd450 instruction, Value x) {
  Builder& b = e.b;
  uint32_t f = x.type;
  Value k = b.ext(GLSLstd450RoundEven, f, {e.fbinary(spv::OpFMul, x, b.c_float(f, kInvTwoPi))});
  Value r = x;
  for (float part : {kTwoPi1, kTwoPi2, kTwoPi3})
    r = e.fbinary(spv::OpFSub, r, e.fbinary(spv::OpFMul, k, b.c_float(f, part)));
  return b.ext(instruction, f, {r});
}

/// sin/cos where GLSL Fma is fused (Cap::FusedFma): the argument is reduced to [-pi/4, pi/4]
/// with three fma steps of pi/2, and the quadrant's polynomial is evaluated here, with the PTX
/// target's coefficients (core/support/math_coefficients.h), so the result does not depend on the
/// driver's Sin and Cos (NVIDIA's differ from the correctly rounded value by up to ~2e-7
/// absolute, which Vulkan allows). Beyond |x| = 105615 (where PTX switches to Payne-Hanek) this
/// falls back to sin_cos_f32.
Value sin_cos_f32_fused(Emitter& e, GLSLstd450 instruction, Value x) {
  namespace pm = tessera::math;
  Builder& b = e.b;
  const uint32_t f = x.type;
  const bool cosine = instruction == GLSLstd450Cos;
  auto c = [&](double v) { return b.c_float(f, v); };
  auto mul = [&](Value a, Value d) { return e.fbinary(spv::OpFMul, a, d); };
  auto add = [&](Value a, Value d) { return e.fbinary(spv::OpFAdd, a, d); };
  auto sub = [&](Value a, Value d) { return e.fbinary(spv::OpFSub, a, d); };
  auto fma = [&](Value a, Value d, Value g) { return b.ext(GLSLstd450Fma, f, {a, d, g}); };
  auto poly = [&](const float* coeffs, size_t n, Value z) {
    Value r = c(coeffs[n - 1]);
    for (size_t k = n - 1; k-- > 0;) r = fma(r, z, c(coeffs[k]));
    return r;
  };
  Value k = b.ext(GLSLstd450RoundEven, f, {mul(x, c(2 / 3.14159265358979323846))});
  Value nk = b.unary(spv::OpFNegate, k);
  Value r = x;
  for (float part : pm::kPio2F32) r = fma(nk, c(part), r);
  Value z = mul(r, r);
  Value s = add(r, mul(mul(r, z), poly(pm::kSinF32, std::size(pm::kSinF32), z)));
  Value hz = mul(c(0.5), z), w = sub(c(1), hz);
  Value cz = add(w, add(sub(sub(c(1), w), hz),
                        mul(mul(z, z), poly(pm::kCosF32, std::size(pm::kCosF32), z))));
  // The quadrant (k of NaN or inf converts to junk, but s and cz are NaN then anyway).
  uint32_t i32 = b.t_int(32, true);
  Value q = b.convert(spv::OpConvertFToS, i32, k);
  if (cosine) q = b.binary(spv::OpIAdd, q, b.c_int(i32, 1));
  auto bit_clear = [&](uint64_t bit) {
    return b.op(spv::OpIEqual, b.t_bool(), {b.binary(spv::OpBitwiseAnd, q, b.c_int(i32, bit)),
                                            b.c_int(i32, 0)});
  };
  Value v = b.select(bit_clear(1), s, cz);
  Value y = b.select(bit_clear(2), v, b.unary(spv::OpFNegate, v));
  if (!cosine) y = b.select(b.op(spv::OpFOrdEqual, b.t_bool(), {x, c(0)}), x, y);  // sin(-0) = -0
  Value a = b.ext(GLSLstd450FAbs, f, {x});
  Value far = b.op(spv::OpLogicalAnd, b.t_bool(),
                   {b.op(spv::OpFOrdGreaterThan, b.t_bool(), {a, c(105615.0)}),
                    b.op(spv::OpFOrdLessThan, b.t_bool(), {a, b.c_float_bits(f, 0x7f800000u)})});
  return b.select(far, sin_cos_f32(e, instruction, x), y);
}

}  // namespace

void Emitter::emit_math(const ir::Op& op) {
  DType dtype = op.result()->type.dtype;
  const MathRow* row = nullptr;
  for (const MathRow& r : kMath)
    if (r.kind == op.kind) row = &r;
  TESSERA_CHECK(row, "SPIR-V: no math row for '", op.name(), "'");
  Value x = get(op.operand(0));
  if (dtype == DType::f64) {
    if (!row->has_f64)
      unsupported(&op, "'" + std::string(op.name()) +
                           "' on f64 is not supported (GLSL.std.450 has no 64-bit form)");
    return set(op.result(), b.ext(row->instruction, x.type, {x}));
  }
  Value x32 = widen_to_f32(x, dtype);
  Value r;
  if (op.kind == OpKind::Erf)
    r = erf_f32(*this, x32);
  else if (op.kind == OpKind::Tanh)
    r = tanh_f32(*this, x32);
  else if (op.kind == OpKind::Exp || op.kind == OpKind::Exp2)
    r = target.has(target::Cap::FusedFma) ? exp_f32_fused(*this, x32, op.kind == OpKind::Exp2)
                                          : exp_f32(*this, x32, op.kind == OpKind::Exp2);
  else if (op.kind == OpKind::Sin || op.kind == OpKind::Cos)
    r = target.has(target::Cap::FusedFma) ? sin_cos_f32_fused(*this, row->instruction, x32)
                                          : sin_cos_f32(*this, row->instruction, x32);
  else
    r = b.ext(row->instruction, x32.type, {x32});
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
