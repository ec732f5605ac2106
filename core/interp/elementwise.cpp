/// \file Binary elementwise ops: arithmetic, min/max, bitwise, shifts and comparisons, as one
/// typed loop per (op, dtype) over operands that are equal-sized or scalars.
#include "core/interp/exec.h"
#include "core/interp/numeric.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;

/// r[i] = f(a[i], b[i]) with scalar operands broadcast; R is the result's storage type.
template <class R, class A, class F>
void map2(const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r, F&& f) {
  const A* pa = a.data<A>();
  const A* pb = b.data<A>();
  R* pr = r.data<R>();
  const int64_t n = r.numel();
  const int64_t sa = a.numel() == 1 ? 0 : 1, sb = b.numel() == 1 ? 0 : 1;
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) pr[i] = f(pa[i], pb[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) pr[i] = f(pa[i * sa], pb[i * sb]);
}

/// Runs `f(T{}, x, y)` over the elements for the operands' dtype T; the result has dtype T.
template <class F>
void same_type(const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r, F&& f) {
  dispatch(a.storage_dtype(), [&](auto t) {
    using S = typename decltype(t)::S;
    map2<S, S>(a, b, r, [&](S x, S y) { return f(t, x, y); });
  });
}

/// Integer-only ops (bitwise, shifts): floats are a verifier bug.
template <class F>
void int_only(const Op& op, const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r, F&& f) {
  TESSERA_CHECK(!ir::is_float(a.dtype) || a.is_ptr, "'", op.name(), "' on ", a.type().str());
  same_type(a, b, r, [&](auto t, auto x, auto y) -> decltype(x) {
    using T = decltype(t);
    if constexpr (T::kFloat)
      return x;  // unreachable: checked above
    else
      return f(t, x, y);
  });
}

void arith(const Op& op, const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r) {
  const bool propagate = ir::propagates_nan(&op);
  auto loop = [&](auto fn) { same_type(a, b, r, fn); };
  switch (op.kind) {
    case OpKind::Add:
      return loop([](auto t, auto x, auto y) { return num::add<decltype(t)>(x, y); });
    case OpKind::Sub:
      return loop([](auto t, auto x, auto y) { return num::sub<decltype(t)>(x, y); });
    case OpKind::Mul:
      return loop([](auto t, auto x, auto y) { return num::mul<decltype(t)>(x, y); });
    case OpKind::Div:
      return loop([](auto t, auto x, auto y) { return num::div<decltype(t)>(x, y); });
    case OpKind::Rem:
      return loop([](auto t, auto x, auto y) { return num::rem<decltype(t)>(x, y); });
    case OpKind::Max:
      return loop([=](auto t, auto x, auto y) { return num::max<decltype(t)>(x, y, propagate); });
    case OpKind::Min:
      return loop([=](auto t, auto x, auto y) { return num::min<decltype(t)>(x, y, propagate); });
    default:
      TESSERA_CHECK(false, "not an arithmetic op: ", op.name());
  }
}

void bitwise(const Op& op, const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r) {
  auto loop = [&](auto fn) { int_only(op, a, b, r, fn); };
  switch (op.kind) {
    case OpKind::And:
      return loop([](auto t, auto x, auto y) { return num::bit_and<decltype(t)>(x, y); });
    case OpKind::Or:
      return loop([](auto t, auto x, auto y) { return num::bit_or<decltype(t)>(x, y); });
    case OpKind::Xor:
      return loop([](auto t, auto x, auto y) { return num::bit_xor<decltype(t)>(x, y); });
    case OpKind::Shl:
      return loop([](auto t, auto x, auto y) { return num::int_shl<decltype(t)>(x, y); });
    case OpKind::Shr:
      return loop([](auto t, auto x, auto y) { return num::int_shr<decltype(t)>(x, y); });
    default:
      TESSERA_CHECK(false, "not a bitwise op: ", op.name());
  }
}

/// One comparison loop per predicate, by num::compare's rules (only cmp_ne is true on NaN).
template <class Pred>
void compare_loop(const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r, Pred pred) {
  dispatch(a.storage_dtype(), [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    map2<uint8_t, S>(a, b, r, [&](S x, S y) { return num::compare<T>(pred, x, y); });
  });
}

void compare(const Op& op, const RuntimeValue& a, const RuntimeValue& b, RuntimeValue& r) {
  TESSERA_CHECK(r.dtype == ir::DType::i1, "comparison result of type ", r.type().str());
  auto loop = [&](auto pred) { compare_loop(a, b, r, pred); };
  switch (op.kind) {
    case OpKind::CmpEq:
      return loop([](auto x, auto y) { return x == y; });
    case OpKind::CmpNe:
      return loop([](auto x, auto y) { return !(x == y); });
    case OpKind::CmpLt:
      return loop([](auto x, auto y) { return x < y; });
    case OpKind::CmpLe:
      return loop([](auto x, auto y) { return x <= y; });
    case OpKind::CmpGt:
      return loop([](auto x, auto y) { return x > y; });
    case OpKind::CmpGe:
      return loop([](auto x, auto y) { return x >= y; });
    default:
      TESSERA_CHECK(false, "not a comparison: ", op.name());
  }
}

}  // namespace

RuntimeValue arith_value(const Op& op, std::span<const RuntimeValue* const> operands,
                         const ir::Shape& shape) {
  TESSERA_CHECK(operands.size() == 2, "'", op.name(), "' with ", operands.size(), " operands");
  const RuntimeValue& a = *operands[0];
  const RuntimeValue& b = *operands[1];
  TESSERA_CHECK(a.storage_dtype() == b.storage_dtype(), "'", op.name(), "' of ", a.type().str(),
                " and ", b.type().str());
  const ir::Type& type = op.result()->type;
  RuntimeValue r = RuntimeValue::make(type.dtype, type.is_ptr, elementwise_shape({&a, &b}, shape));
  if (op.has(ir::kCompare)) {
    compare(op, a, b, r);
  } else if (op.kind == OpKind::And || op.kind == OpKind::Or || op.kind == OpKind::Xor ||
             op.kind == OpKind::Shl || op.kind == OpKind::Shr) {
    bitwise(op, a, b, r);
  } else {
    arith(op, a, b, r);
  }
  return r;
}

void exec_arith(Exec& ex, const Op& op) {
  const RuntimeValue* operands[] = {&ex.get(op.operand(0)), &ex.get(op.operand(1))};
  ex.set(op.result(), arith_value(op, operands, op.result()->type.shape));
}

}  // namespace tessera::interp
