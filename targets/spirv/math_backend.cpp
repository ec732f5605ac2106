/// \file The backend of targets/math/algorithms.h over the SPIR-V Builder: each operation of the
/// backend interface becomes one or a few instructions (float add, sub and mul NoContraction, so
/// the algorithms' error-free steps stay exact), if_else a selection construct and loop a loop
/// construct; fma is GLSL Fma only where the target fuses it. GLSL.std.450 has no 64-bit FindUMsb
/// and no table constant, so clz splits its u64 and the 2/pi words are a chain of selects (only the
/// Payne-Hanek branch reads them).
#include "targets/spirv/math_backend.h"

#include <array>
#include <iterator>

#include "core/support/math_coefficients.h"
#include "targets/math/library.h"
#include "targets/math/functions.h"

namespace tessera::spirv::impl {

namespace {

template <bool Single>
struct SpvMath;

/// A value of the backend: K = 0 float, 1 integer of the float's width, 2 u64, 3 bool.
template <bool Single, int K>
struct V {
  Value v;
  SpvMath<Single>* m = nullptr;
};

template <bool Single>
struct SpvMath {
  static constexpr bool kSingle = Single;
  using F = V<Single, 0>;
  using I = V<Single, 1>;
  using U = V<Single, 2>;
  using B = V<Single, 3>;

  explicit SpvMath(Emitter& emitter)
      : e(emitter),
        b(emitter.b),
        fty(b.t_float(Single ? 32 : 64)),
        ity(b.t_int(Single ? 32 : 64, true)),
        uty(b.t_uint(Single ? 32 : 64)),
        u64(b.t_uint(64)) {}

  Emitter& e;
  Builder& b;
  uint32_t fty, ity, uty, u64;

  template <int K>
  V<Single, K> wrap(Value v) {
    return {v, this};
  }
  B test(spv::Op opcode, Value x, Value y) { return wrap<3>(b.compare(opcode, x, y)); }

  F c(double v) { return wrap<0>(b.c_float(fty, v)); }
  I ci(int64_t v) { return wrap<1>(b.c_int(ity, static_cast<uint64_t>(v))); }
  U cu(uint64_t v) { return wrap<2>(b.c_int(u64, v)); }
  /// GLSL Fma where the target fuses it (Cap::FusedFma), else fma_from_products (Vulkan lets a
  /// driver round Fma twice, which would break the algorithms' exact steps).
  F fma(F x, F y, F z) {
    if (!e.target.has(target::Cap::FusedFma)) return math::fma_from_products(*this, x, y, z);
    return wrap<0>(b.ext(GLSLstd450Fma, fty, {x.v, y.v, z.v}));
  }
  /// GLSL RoundEven; f64 on a driver with Quirk::WideRoundUnrounded: x + 2^52 - 2^52 (with x's
  /// sign), which the addition rounds to the nearest even integer, for |x| < 2^52 (larger values
  /// are integers already); a zero takes x's sign (x * 0).
  F rint(F x) {
    if (Single || !e.target.has(target::Quirk::WideRoundUnrounded))
      return wrap<0>(b.ext(GLSLstd450RoundEven, fty, {x.v}));
    const double two52 = 4503599627370496.0;
    F shift = sel(x < c(0), c(-two52), c(two52));
    F r = (x + shift) - shift;
    return sel(abs(x) < c(two52), sel(r == c(0), x * c(0), r), x);
  }
  F abs(F x) { return wrap<0>(b.ext(GLSLstd450FAbs, fty, {x.v})); }
  /// GLSL Sqrt (Vulkan bounds it by 3 ulp at f32; the algorithms correct it by a Newton step).
  F sqrt(F x) { return wrap<0>(b.ext(GLSLstd450Sqrt, fty, {x.v})); }
  /// The driver's 2^x (exp_hw; GLSL Exp2 at f32 only).
  F ex2(F x) {
    static_assert(Single, "GLSL Exp2 is used at f32 only");
    return wrap<0>(b.ext(GLSLstd450Exp2, fty, {x.v}));
  }
  F copysign(F x, F y) {
    const uint64_t sign = uint64_t{1} << (Single ? 31 : 63);
    Value mag = b.binary(spv::OpBitwiseAnd, b.bitcast(uty, x.v), b.c_int(uty, sign - 1));
    Value sgn = b.binary(spv::OpBitwiseAnd, b.bitcast(uty, y.v), b.c_int(uty, sign));
    return wrap<0>(b.bitcast(fty, b.binary(spv::OpBitwiseOr, mag, sgn)));
  }
  B isnan(F x) { return wrap<3>(b.op(spv::OpIsNan, b.t_bool(), {x.v})); }
  template <int K>
  V<Single, K> sel(B c, V<Single, K> x, V<Single, K> y) {
    return wrap<K>(b.select(c.v, x.v, y.v));
  }
  B and_(B x, B y) { return wrap<3>(b.binary(spv::OpLogicalAnd, x.v, y.v)); }
  B or_(B x, B y) { return wrap<3>(b.binary(spv::OpLogicalOr, x.v, y.v)); }
  B not_(B x) { return wrap<3>(b.unary(spv::OpLogicalNot, x.v)); }
  I bits(F x) { return wrap<1>(b.bitcast(ity, x.v)); }
  F from_bits(I x) { return wrap<0>(b.bitcast(fty, x.v)); }
  /// An integral value in range; NaN and out-of-range values give 0 (OpConvertFToS would give an
  /// undefined value).
  I to_int(F x) {
    F limit = c(Single ? 2147483648.0 : 9223372036854775808.0);
    F safe = sel(abs(x) < limit, x, c(0));
    return wrap<1>(b.convert(spv::OpConvertFToS, ity, safe.v));
  }
  F to_float(I x) { return wrap<0>(b.convert(spv::OpConvertSToF, fty, x.v)); }
  I shl(I x, int n) { return wrap<1>(b.binary(spv::OpShiftLeftLogical, x.v, ci(n).v)); }
  I shr_s(I x, int n) { return wrap<1>(b.binary(spv::OpShiftRightArithmetic, x.v, ci(n).v)); }
  I shr_u(I x, int n) { return wrap<1>(b.binary(spv::OpShiftRightLogical, x.v, ci(n).v)); }
  B lt_s(I x, I y) { return test(spv::OpSLessThan, x.v, y.v); }
  B eq(I x, I y) { return test(spv::OpIEqual, x.v, y.v); }
  /// Shifts by >= 64 give 0 (SPIR-V leaves them undefined): the count is clamped, the result
  /// selected.
  U shift(spv::Op opcode, U x, U n) {
    B big = test(spv::OpUGreaterThanEqual, n.v, cu(64).v);
    Value safe = b.select(big.v, cu(0).v, n.v);
    return sel(big, cu(0), wrap<2>(b.binary(opcode, x.v, safe)));
  }
  U shl(U x, U n) { return shift(spv::OpShiftLeftLogical, x, n); }
  U shr(U x, U n) { return shift(spv::OpShiftRightLogical, x, n); }
  /// Leading zeros of a u64 (64 for 0) from 32-bit FindUMsb (-1 for 0) of each half.
  U clz(U x) {
    uint32_t i32 = b.t_int(32, true), u32 = b.t_uint(32);
    Value hi =
        b.convert(spv::OpUConvert, u32, b.binary(spv::OpShiftRightLogical, x.v, b.c_int(u64, 32)));
    Value lo = b.convert(spv::OpUConvert, u32, x.v);
    Value from_hi = b.binary(spv::OpISub, b.c_int(i32, 31), b.ext(GLSLstd450FindUMsb, i32, {hi}));
    Value from_lo = b.binary(spv::OpISub, b.c_int(i32, 63), b.ext(GLSLstd450FindUMsb, i32, {lo}));
    Value n = b.select(b.compare(spv::OpINotEqual, hi, b.c_int(u32, 0)), from_hi, from_lo);
    return wrap<2>(b.convert(spv::OpUConvert, u64, b.bitcast(u32, n)));
  }
  U urem(U x, U y) { return wrap<2>(b.binary(spv::OpUMod, x.v, y.v)); }
  B lt_u(U x, U y) { return test(spv::OpULessThan, x.v, y.v); }
  B eq(U x, U y) { return test(spv::OpIEqual, x.v, y.v); }
  U min_u(U x, U y) { return sel(lt_u(x, y), x, y); }
  U u_from_i(I x) {
    Value u = b.bitcast(uty, x.v);
    return wrap<2>(Single ? b.convert(spv::OpUConvert, u64, u) : u);
  }
  I i_from_u(U x) {
    Value u = Single ? b.convert(spv::OpUConvert, uty, x.v) : x.v;
    return wrap<1>(b.bitcast(ity, u));
  }
  F f_from_u(U x) { return wrap<0>(b.convert(spv::OpConvertUToF, fty, x.v)); }
  /// Word `index` of 2/pi (a chain of selects: SPIR-V indexes constant arrays only through a
  /// variable).
  U table(U index) {
    U out = cu(0);
    for (size_t i = 0; i < std::size(math::kTwoOverPiWords); ++i)
      out = sel(eq(index, cu(i)), cu(math::kTwoOverPiWords[i]), out);
    return out;
  }

  /// A selection construct whose merge block takes the value of the side that ran.
  template <class A, class Bf>
  F if_else(B cond, A then_fn, Bf else_fn) {
    uint32_t then_label = b.new_label(), else_label = b.new_label(), merge = b.new_label();
    b.selection_merge(merge);
    b.branch_cond(cond.v, then_label, else_label);
    b.begin_block(then_label);
    F a = then_fn();
    uint32_t then_end = b.current_label();
    b.branch(merge);
    b.begin_block(else_label);
    F z = else_fn();
    uint32_t else_end = b.current_label();
    b.branch(merge);
    b.begin_block(merge);
    PhiRef phi = b.phi(fty);
    b.add_incoming(phi, a.v, then_end);
    b.add_incoming(phi, z.v, else_end);
    return wrap<0>(phi.value);
  }

  /// A loop construct over N u64 values (counted like the emitter's own inner loops).
  template <size_t N, class C, class Bd>
  std::array<U, N> loop(std::array<U, N> init, C cond, Bd body) {
    uint32_t entry = b.current_label(), header = b.new_label(), body_label = b.new_label(),
             latch = b.new_label(), merge = b.new_label();
    b.branch(header);
    b.begin_block(header);
    std::array<PhiRef, N> phis;
    std::array<U, N> state;
    for (size_t i = 0; i < N; ++i) {
      phis[i] = b.phi(u64);
      b.add_incoming(phis[i], init[i].v, entry);
      state[i] = wrap<2>(phis[i].value);
    }
    B more = cond(state);
    e.count_inner_pass();
    b.loop_merge(merge, latch);
    b.branch_cond(more.v, body_label, merge);
    b.begin_block(body_label);
    std::array<U, N> next = body(state);
    b.branch(latch);
    b.begin_block(latch);
    for (size_t i = 0; i < N; ++i) b.add_incoming(phis[i], next[i].v, latch);
    b.branch(header);
    b.begin_block(merge);
    e.merge_inner_count();
    return state;
  }
};

// Operators of the backend's values.
template <bool S>
V<S, 0> operator-(V<S, 0> x) {
  return x.m->template wrap<0>(x.m->b.unary(spv::OpFNegate, x.v));
}

#define TESSERA_BINARY(op, fop, iop)                               \
  template <bool S, int K>                                         \
  V<S, K> operator op(V<S, K> x, V<S, K> y) {                      \
    if constexpr (K == 0)                                          \
      return x.m->template wrap<0>(x.m->e.fbinary(fop, x.v, y.v)); \
    else                                                           \
      return x.m->template wrap<K>(x.m->b.binary(iop, x.v, y.v));  \
  }
TESSERA_BINARY(+, spv::OpFAdd, spv::OpIAdd)
TESSERA_BINARY(-, spv::OpFSub, spv::OpISub)
TESSERA_BINARY(*, spv::OpFMul, spv::OpIMul)
#undef TESSERA_BINARY

template <bool S>
V<S, 0> operator/(V<S, 0> x, V<S, 0> y) {
  return x.m->template wrap<0>(x.m->e.fdiv(x.v, y.v));
}

#define TESSERA_BITWISE(op, iop)                                \
  template <bool S, int K>                                      \
    requires(K == 1 || K == 2)                                  \
  V<S, K> operator op(V<S, K> x, V<S, K> y) {                   \
    return x.m->template wrap<K>(x.m->b.binary(iop, x.v, y.v)); \
  }
TESSERA_BITWISE(&, spv::OpBitwiseAnd)
TESSERA_BITWISE(|, spv::OpBitwiseOr)
TESSERA_BITWISE(^, spv::OpBitwiseXor)
#undef TESSERA_BITWISE

#define TESSERA_COMPARE(op, opcode)           \
  template <bool S>                           \
  V<S, 3> operator op(V<S, 0> x, V<S, 0> y) { \
    return x.m->test(opcode, x.v, y.v);       \
  }
TESSERA_COMPARE(<, spv::OpFOrdLessThan)
TESSERA_COMPARE(<=, spv::OpFOrdLessThanEqual)
TESSERA_COMPARE(>, spv::OpFOrdGreaterThan)
TESSERA_COMPARE(>=, spv::OpFOrdGreaterThanEqual)
TESSERA_COMPARE(==, spv::OpFOrdEqual)
#undef TESSERA_COMPARE

/// `kind`'s library function of `x` (and `y`, for a two-operand one) in f32 or f64.
template <bool Single>
Value expand(Emitter& e, ir::OpKind kind, Value x, Value y) {
  const math::Fn f = math::function(kind);
  TESSERA_CHECK(f != math::Fn::None, "SPIR-V: the math library has no '", ir::op_name(kind), "'");
  SpvMath<Single> m(e);
  math::Algorithms<SpvMath<Single>> a(m);
  return math::apply(a, f, m.template wrap<0>(x), m.template wrap<0>(y)).v;
}

}  // namespace

Value library_math(Emitter& e, ir::OpKind kind, Value x) {
  return e.b.width(x.type) == 32 ? expand<true>(e, kind, x, x) : expand<false>(e, kind, x, x);
}

Value library_math(Emitter& e, ir::OpKind kind, Value x, Value y) {
  return e.b.width(x.type) == 32 ? expand<true>(e, kind, x, y) : expand<false>(e, kind, x, y);
}

}  // namespace tessera::spirv::impl
