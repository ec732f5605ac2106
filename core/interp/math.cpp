/// \file Unary elementwise ops (neg, not, abs and the math functions, which are computed in
/// double and rounded once to the dtype), fma, and where.
#include <array>
#include <cmath>
#include <cstring>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"
#include "core/interp/scalar.h"
#include "core/ir/op_table.h"

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

/// A binary float-only math function: r[i] = f(a[i], b[i]) in double, rounded once.
RuntimeValue math_function2(const Op& op, const RuntimeValue& a, const RuntimeValue& b) {
  TESSERA_CHECK(ir::is_float(a.dtype) && !a.is_ptr && a.dtype == b.dtype && a.shape == b.shape, "'",
                op.name(), "' on ", a.type().str(), " and ", b.type().str());
  const MathFn2 fn = math_fn2(op.kind);
  RuntimeValue r = RuntimeValue::make(a.dtype, false, a.shape);
  dispatch(a.storage_dtype(), [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    if constexpr (T::kFloat) {
      const S* pa = a.data<S>();
      const S* pb = b.data<S>();
      S* pr = r.data<S>();
      for (int64_t i = 0; i < r.numel(); ++i)
        pr[i] = T::from_double(fn(T::to_double(pa[i]), T::to_double(pb[i])));
    }
  });
  return r;
}

RuntimeValue fma(const Op& op, const RuntimeValue& a, const RuntimeValue& b, const RuntimeValue& c,
                 const ir::Shape& shape) {
  TESSERA_CHECK(ir::is_float(a.dtype) && !a.is_ptr, "'fma' on ", a.type().str());
  RuntimeValue r = RuntimeValue::of_type(op.result()->type);
  r.shape = elementwise_shape({&a, &b, &c}, shape);
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

/// cond ? a : b, moving whole elements (any dtype, pointers included).
RuntimeValue where(const Op& op, const RuntimeValue& cond, const RuntimeValue& a,
                   const RuntimeValue& b, const ir::Shape& shape) {
  RuntimeValue r = RuntimeValue::of_type(op.result()->type);
  r.shape = elementwise_shape({&cond, &a, &b}, shape);
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

RuntimeValue unary_value(const Op& op, std::span<const RuntimeValue* const> operands,
                         const ir::Shape& shape) {
  auto operand = [&](size_t i) -> const RuntimeValue& {
    TESSERA_CHECK(i < operands.size(), "'", op.name(), "' with ", operands.size(), " operands");
    return *operands[i];
  };
  if (op.kind == OpKind::Fma) return fma(op, operand(0), operand(1), operand(2), shape);
  if (op.kind == OpKind::Where) return where(op, operand(0), operand(1), operand(2), shape);
  if (ir::is_binary_math(op.kind)) return math_function2(op, operand(0), operand(1));
  const RuntimeValue& a = operand(0);
  RuntimeValue r = RuntimeValue::make(a.dtype, a.is_ptr, a.shape);
  if (op.kind == OpKind::Neg || op.kind == OpKind::Not || op.kind == OpKind::Abs)
    neg_not_abs(op, a, r);
  else
    math_function(op, a, r);
  return r;
}

void exec_unary(Exec& ex, const Op& op) {
  std::array<const RuntimeValue*, 3> operands{};  // fma and where have the most
  const size_t n = op.operands.size();
  TESSERA_CHECK(n >= 1 && n <= operands.size(), "'", op.name(), "' with ", n, " operands");
  for (size_t i = 0; i < n; ++i) operands[i] = &ex.get(op.operand(i));
  ex.set(op.result(), unary_value(op, std::span(operands.data(), n), op.result()->type.shape));
}

}  // namespace tessera::interp
