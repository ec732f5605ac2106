/// \file Unary elementwise ops (neg, not, abs and the math functions, which are computed in
/// double and rounded once to the dtype), the two-operand math functions, fma, and where.
#include <cmath>
#include <cstring>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"
#include "core/interp/scalar.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;

/// r[i] = f(T{}, a[i]) for the operand's dtype T.
template <class F>
void map1(const RuntimeValue& a, RuntimeValue& r, F&& f) {
  dispatch(a.storage_dtype(), [&](auto t) {
    using S = typename decltype(t)::S;
    const S* pa = a.data<S>();
    S* pr = r.data<S>();
    for (int64_t i = 0; i < r.numel(); ++i) pr[i] = f(t, pa[i]);
  });
}

/// A float-only math function: the double result rounded once to the operand's dtype.
template <class Fn>
void math(const Op& op, const RuntimeValue& a, RuntimeValue& r, Fn fn) {
  TESSERA_CHECK(ir::is_float(a.dtype) && !a.is_ptr, "'", op.name(), "' on ", a.type().str());
  map1(a, r, [&](auto t, auto x) -> decltype(x) {
    using T = decltype(t);
    if constexpr (T::kFloat)
      return T::from_double(fn(T::to_double(x)));
    else
      return x;  // unreachable: checked above
  });
}

void neg_not_abs(const Op& op, const RuntimeValue& a, RuntimeValue& r) {
  const OpKind kind = op.kind;
  TESSERA_CHECK(kind != OpKind::Not || !ir::is_float(a.dtype), "'not' on ", a.type().str());
  map1(a, r, [kind](auto t, auto x) -> decltype(x) {
    using T = decltype(t);
    if constexpr (!T::kFloat)
      if (kind == OpKind::Not) return num::bit_not<T>(x);
    return kind == OpKind::Neg ? num::neg<T>(x) : num::abs<T>(x);
  });
}

void math_function(const Op& op, const RuntimeValue& a, RuntimeValue& r) {
  math(op, a, r, math_fn(op.kind));
}

RuntimeValue fma(const Op& op, const RuntimeValue& a, const RuntimeValue& b,
                 const RuntimeValue& c) {
  TESSERA_CHECK(ir::is_float(a.dtype) && !a.is_ptr, "'fma' on ", a.type().str());
  RuntimeValue r = RuntimeValue::of_type(op.result()->type);
  r.shape = elementwise_shape({&a, &b, &c}, r.shape);
  r.bytes.resize(static_cast<size_t>(ir::num_elements(r.shape) * r.elem_bytes()));
  const int64_t sa = a.numel() == 1 ? 0 : 1, sb = b.numel() == 1 ? 0 : 1;
  const int64_t sc = c.numel() == 1 ? 0 : 1;
  dispatch(a.dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    if constexpr (T::kFloat) {
      const S *pa = a.data<S>(), *pb = b.data<S>(), *pc = c.data<S>();
      S* pr = r.data<S>();
      for (int64_t i = 0; i < r.numel(); ++i)
        pr[i] = num::float_fma<T>(pa[i * sa], pb[i * sb], pc[i * sc]);
    }
  });
  return r;
}

/// A two-operand math function (pow, atan2, hypot): the double result rounded once, operands
/// broadcast as fma's.
RuntimeValue math2(const Op& op, const RuntimeValue& a, const RuntimeValue& b) {
  TESSERA_CHECK(ir::is_float(a.dtype) && !a.is_ptr, "'", op.name(), "' on ", a.type().str());
  RuntimeValue r = RuntimeValue::of_type(op.result()->type);
  r.shape = elementwise_shape({&a, &b}, r.shape);
  r.bytes.resize(static_cast<size_t>(ir::num_elements(r.shape) * r.elem_bytes()));
  const int64_t sa = a.numel() == 1 ? 0 : 1, sb = b.numel() == 1 ? 0 : 1;
  const MathFn2 fn = math_fn2(op.kind);
  dispatch(a.dtype, [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    if constexpr (T::kFloat) {
      const S *pa = a.data<S>(), *pb = b.data<S>();
      S* pr = r.data<S>();
      for (int64_t i = 0; i < r.numel(); ++i)
        pr[i] = T::from_double(fn(T::to_double(pa[i * sa]), T::to_double(pb[i * sb])));
    }
  });
  return r;
}

/// cond ? a : b, moving whole elements (any dtype, pointers included).
RuntimeValue where(const Op& op, const RuntimeValue& cond, const RuntimeValue& a,
                   const RuntimeValue& b) {
  RuntimeValue r = RuntimeValue::of_type(op.result()->type);
  r.shape = elementwise_shape({&cond, &a, &b}, r.shape);
  r.bytes.resize(static_cast<size_t>(ir::num_elements(r.shape) * r.elem_bytes()));
  const int64_t sc = cond.numel() == 1 ? 0 : 1, sa = a.numel() == 1 ? 0 : 1;
  const int64_t sb = b.numel() == 1 ? 0 : 1;
  const uint8_t* pc = cond.data<uint8_t>();
  with_elem_size(r.elem_bytes(), [&](auto size) {
    constexpr int N = decltype(size)::value;
    for (int64_t i = 0; i < r.numel(); ++i) {
      const std::byte* src = pc[i * sc] ? a.raw() + i * sa * N : b.raw() + i * sb * N;
      std::memcpy(r.raw() + i * N, src, N);
    }
  });
  return r;
}

}  // namespace

MathFn math_fn(OpKind kind) {
  switch (kind) {
    case OpKind::Exp:
      return [](double x) { return std::exp(x); };
    case OpKind::Exp2:
      return [](double x) { return std::exp2(x); };
    case OpKind::Log:
      return [](double x) { return std::log(x); };
    case OpKind::Log2:
      return [](double x) { return std::log2(x); };
    case OpKind::Sqrt:
      return [](double x) { return std::sqrt(x); };
    case OpKind::Rsqrt:
      return [](double x) { return 1.0 / std::sqrt(x); };
    case OpKind::Sin:
      return [](double x) { return std::sin(x); };
    case OpKind::Cos:
      return [](double x) { return std::cos(x); };
    case OpKind::Tanh:
      return [](double x) { return std::tanh(x); };
    case OpKind::Erf:
      return [](double x) { return std::erf(x); };
    case OpKind::Log1p:
      return [](double x) { return std::log1p(x); };
    case OpKind::Expm1:
      return [](double x) { return std::expm1(x); };
    case OpKind::Log10:
      return [](double x) { return std::log10(x); };
    case OpKind::Sinh:
      return [](double x) { return std::sinh(x); };
    case OpKind::Cosh:
      return [](double x) { return std::cosh(x); };
    case OpKind::Asin:
      return [](double x) { return std::asin(x); };
    case OpKind::Acos:
      return [](double x) { return std::acos(x); };
    case OpKind::Atan:
      return [](double x) { return std::atan(x); };
    case OpKind::Cbrt:
      return [](double x) { return std::cbrt(x); };
    case OpKind::Floor:
      return [](double x) { return std::floor(x); };
    case OpKind::Ceil:
      return [](double x) { return std::ceil(x); };
    default:
      TESSERA_CHECK(false, "not a math function: ", ir::op_name(kind));
      return nullptr;
  }
}

MathFn2 math_fn2(OpKind kind) {
  switch (kind) {
    case OpKind::Pow:
      return [](double x, double y) { return std::pow(x, y); };
    case OpKind::Atan2:
      return [](double x, double y) { return std::atan2(x, y); };
    case OpKind::Hypot:
      return [](double x, double y) { return std::hypot(x, y); };
    default:
      return nullptr;
  }
}

void exec_unary(Exec& ex, const Op& op) {
  auto operand = [&](size_t i) -> const RuntimeValue& { return ex.get(op.operand(i)); };
  if (op.kind == OpKind::Fma)
    return ex.set(op.result(), fma(op, operand(0), operand(1), operand(2)));
  if (op.kind == OpKind::Where)
    return ex.set(op.result(), where(op, operand(0), operand(1), operand(2)));
  if (math_fn2(op.kind)) return ex.set(op.result(), math2(op, operand(0), operand(1)));
  const RuntimeValue& a = operand(0);
  RuntimeValue r = RuntimeValue::make(a.dtype, a.is_ptr, a.shape);
  if (op.kind == OpKind::Neg || op.kind == OpKind::Not || op.kind == OpKind::Abs)
    neg_not_abs(op, a, r);
  else
    math_function(op, a, r);
  ex.set(op.result(), std::move(r));
}

}  // namespace tessera::interp
