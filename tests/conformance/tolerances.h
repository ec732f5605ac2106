/// \file Every tolerance of the conformance suite, in one place, with the reason for each.
///
/// A float result passes when ANY of its bounds holds:
///   ulp distance(got, round(ref)) <= ulps     (round(ref): the reference rounded to the dtype)
///   |got - ref| <= abs + rel * scale          (scale: |ref|, or a case's own scale such as
///                                              sum |x_i| for a sum or sum |a_ik b_kj| for a dot)
/// NaN must meet NaN (any payload) and an infinity the same infinity. Everything exact (integers,
/// bitwise ops, casts, min/max, argmin/argmax, layout moves, integer reductions and scans) uses
/// kExact: bit for bit, any NaN matching any NaN.
///
/// Narrow formats: fp16/bf16 references are computed in fp64 and rounded once to the dtype the
/// way the device rounds (f16_from_double/bf16_from_double, nearest-even); TF32 dot inputs are
/// pre-rounded with round_to_tf32 (nearest, ties away) before the fp64 reference is formed.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/ir/types.h"

namespace tessera::conformance {

using ir::DType;

struct Tol {
  int64_t ulps = 0;  ///< allowed distance from the rounded reference, in units in the last place
  double rel = 0;    ///< allowed |got - ref| / scale
  double abs = 0;    ///< allowed |got - ref| regardless of scale
  bool exact() const { return ulps == 0 && rel == 0 && abs == 0; }
  std::string str() const;
};

namespace tol {

/// Machine epsilon (2^-p) of a float dtype's significand.
inline double eps(DType t) {
  switch (t) {
    case DType::f16:
      return 0x1p-10;
    case DType::bf16:
      return 0x1p-7;
    case DType::f32:
      return 0x1p-23;
    case DType::f64:
      return 0x1p-52;
    case DType::f8e4m3:
      return 0x1p-3;
    case DType::f8e5m2:
      return 0x1p-2;
    default:
      return 0;
  }
}

/// The smallest normal number: GPUs may flush subnormal results to zero (Vulkan allows it for
/// f32 by default), so elementwise float checks accept an error of one smallest normal.
inline double min_normal(DType t) {
  switch (t) {
    case DType::f16:
      return 0x1p-14;
    case DType::bf16:
      return 0x1p-126;
    case DType::f32:
      return 0x1p-126;
    case DType::f64:
      return 0x1p-1022;
    case DType::f8e4m3:
      return 0x1p-6;
    case DType::f8e5m2:
      return 0x1p-14;
    default:
      return 0;
  }
}

/// Integers, bitwise ops, casts, min/max, argmin/argmax, shape ops, loads and stores.
inline constexpr Tol kExact{};

/// + - * fma: IEEE requires correct rounding on every target (SPIR-V too), so 0 ulp; the
/// absolute floor covers flushed subnormals.
inline Tol arith(DType t) {
  return Tol{0, 0, min_normal(t)};
}

/// fma: one rounding (ops.h). The fp64 reference of a*b+c rounds once in double and again to the
/// dtype, which may land one ulp off at a tie; fp64 itself uses the host's fused fma.
inline Tol fma(DType t) {
  return Tol{t == DType::f64 ? 0 : 1, 0, min_normal(t)};
}

/// Division: SPIR-V's OpFDiv is within 2.5 ulp (not correctly rounded), CUDA's div.full 2 ulp.
inline Tol division(DType t) {
  return Tol{3, 0, min_normal(t)};
}

/// fmod-style float remainder: GPUs compute x - trunc(x / y) * y, whose error is relative to |x|
/// (pass scale = |x|), not to the (possibly tiny) result.
inline Tol remainder(DType t) {
  return Tol{0, 8 * eps(t), min_normal(t)};
}

/// sqrt: correctly rounded on CUDA (sqrt.rn), 3 ulp in SPIR-V (GLSL.std.450 Sqrt as 1/rsqrt).
inline Tol sqrt(DType t) {
  return Tol{3, 0, min_normal(t)};
}

/// exp exp2 log log2 rsqrt sin cos tanh erf (and sigmoid, built from exp and a division): GPU
/// math is not correctly rounded (SPIR-V allows 3 + 2|x| ulp for exp, 3 ulp for log away from 1,
/// 2^-21 absolute for log near 1 and 2^-11 for sin/cos on [-pi, pi]). Tessera asks for 4 ulp of
/// f32/f64 results, plus eps absolute (one ulp at magnitude 1) for results near a zero crossing
/// (sin near pi, log near 1, tanh and erf near 0). f16/bf16 math is computed in f32 and rounded
/// once, so it is within 1 ulp of the correctly rounded value; 2 ulp are allowed.
inline Tol math(DType t) {
  if (t == DType::f16 || t == DType::bf16) return Tol{2, 0, min_normal(t)};
  return Tol{4, 0, eps(t)};
}

/// floor, ceil, abs, neg, minimum, maximum: exact operations.
inline Tol exact_float() {
  return kExact;
}

/// Float sums (reductions, cumsum) over n terms in accumulator dtype `acc`: any summation order
/// is allowed, so the bound is the worst case of a pairwise/sequential sum relative to
/// scale = sum |x_i|, plus the rounding of the result to the output dtype `out`.
inline Tol sum(DType acc, DType out, int64_t n) {
  return Tol{1, (static_cast<double>(n) + 1) * eps(acc) + eps(out), min_normal(out)};
}

/// Float products (cumprod, prod) of n terms: relative to |ref|.
inline Tol product(DType acc, int64_t n) {
  return Tol{0, (static_cast<double>(n) + 1) * eps(acc), min_normal(acc)};
}

/// dot with K terms accumulated in `acc`, relative to scale = |acc0| + sum_k |a_ik b_kj|. The
/// inputs are exact in the reference (TF32 inputs pre-rounded), so only accumulation errs; fp16
/// accumulators also round every partial sum.
inline Tol dot(DType acc, int64_t k) {
  return Tol{1, (static_cast<double>(k) + 2) * eps(acc), min_normal(acc)};
}

/// dot of f32 inputs at TF32 precision: the reference rounds each input to nearest; Hopper's
/// wgmma reads f32 from shared memory and drops the low 13 bits (ops.h), which moves each input
/// by up to one TF32 unit (2^-10 relative), each product by up to 2^-9.
inline Tol dot_tf32(int64_t k) {
  Tol t = dot(DType::f32, k);
  t.rel += 0x1p-9;
  return t;
}

/// dot of fp8 inputs on tensor cores (wgmma e4m3/e5m2): the products are exact, but the hardware
/// keeps about 14 bits of the running sum (as Triton's default max_num_imprecise_acc does not
/// promote it to f32), so each of the k additions is rounded at about 2^-13 relative.
inline Tol dot_fp8_tensor_cores(int64_t k) {
  return Tol{1, (static_cast<double>(k) + 2) * 0x1p-13, min_normal(DType::f32)};
}

/// Float atomic add of n contributions in arbitrary order: relative to sum |x_i|.
inline Tol atomic_add(DType t, int64_t n) {
  return Tol{1, (static_cast<double>(n) + 1) * eps(t), min_normal(t)};
}

/// Multi-step float kernels (softmax, gelu, Welford, epilogues): each element passes through
/// `steps` rounded operations or math functions, each within 4 ulp.
inline Tol composite(DType t, int steps) {
  return Tol{0, steps * 4 * eps(t), min_normal(t)};
}

}  // namespace tol
}  // namespace tessera::conformance
