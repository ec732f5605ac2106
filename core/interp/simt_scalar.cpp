/// \file The SIMT interpreter's pure scalar ops (program ids, elementwise arithmetic, compares,
/// math, fma, where, casts, ptr_add): one typed loop over the workgroup's threads per (op, dtype),
/// each element computed by the tile interpreter's rules (numeric.h, convert.h, math_fn).
/// Inactive threads are computed too: their values are never read (simt_exec.h).
#include <cstring>
#include <functional>

#include "core/interp/convert.h"
#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"
#include "core/ir/op_table.h"

namespace tessera::interp::simt {
namespace {

using ir::OpKind;

// One functor per binary rule: `apply<T>(x, y)` on elements of dtype T.
#define TESSERA_SIMT_RULE(Name, expr)                     \
  struct Name {                                           \
    template <class T>                                    \
    static auto apply(typename T::S x, typename T::S y) { \
      return expr;                                        \
    }                                                     \
  }
TESSERA_SIMT_RULE(AddRule, num::add<T>(x, y));
TESSERA_SIMT_RULE(SubRule, num::sub<T>(x, y));
TESSERA_SIMT_RULE(MulRule, num::mul<T>(x, y));
TESSERA_SIMT_RULE(DivRule, num::div<T>(x, y));
TESSERA_SIMT_RULE(RemRule, num::rem<T>(x, y));
TESSERA_SIMT_RULE(MaxRule, num::max<T>(x, y, true));
TESSERA_SIMT_RULE(MinRule, num::min<T>(x, y, true));
TESSERA_SIMT_RULE(MaxNumRule, num::max<T>(x, y, false));
TESSERA_SIMT_RULE(MinNumRule, num::min<T>(x, y, false));
TESSERA_SIMT_RULE(AndRule, num::bit_and<T>(x, y));
TESSERA_SIMT_RULE(OrRule, num::bit_or<T>(x, y));
TESSERA_SIMT_RULE(XorRule, num::bit_xor<T>(x, y));
TESSERA_SIMT_RULE(ShlRule, num::int_shl<T>(x, y));
TESSERA_SIMT_RULE(ShrRule, num::int_shr<T>(x, y));
TESSERA_SIMT_RULE(EqRule, num::compare<T>([](auto a, auto b) { return a == b; }, x, y));
TESSERA_SIMT_RULE(NeRule, num::compare<T>([](auto a, auto b) { return !(a == b); }, x, y));
TESSERA_SIMT_RULE(LtRule, num::compare<T>([](auto a, auto b) { return a < b; }, x, y));
TESSERA_SIMT_RULE(LeRule, num::compare<T>([](auto a, auto b) { return a <= b; }, x, y));
TESSERA_SIMT_RULE(GtRule, num::compare<T>([](auto a, auto b) { return a > b; }, x, y));
TESSERA_SIMT_RULE(GeRule, num::compare<T>([](auto a, auto b) { return a >= b; }, x, y));
#undef TESSERA_SIMT_RULE

template <class T, class Rule>
void binary(Machine& m, const Instr& in, const Mask&) {
  using S = typename T::S;
  using R = decltype(Rule::template apply<T>(S{}, S{}));
  const S* a = in.in[0].as<S>();
  const S* b = in.in[1].as<S>();
  R* r = in.out[0].as<R>();
  for (uint32_t t = 0, n = m.threads; t < n; ++t) r[t] = Rule::template apply<T>(a[t], b[t]);
}

/// The binary handler of `Rule` for the operands' storage dtype; null for a float dtype when
/// the rule is integer-only (the verifier rejects it first).
template <class Rule, bool kIntOnly = false>
Handler binary_for(ir::DType dtype) {
  return dispatch(dtype, [](auto t) -> Handler {
    using T = decltype(t);
    if constexpr (kIntOnly && T::kFloat)
      return nullptr;
    else
      return &binary<T, Rule>;
  });
}

Handler select_binary(const Instr& in, ir::DType dtype) {
  const bool propagate = ir::propagates_nan(in.op);
  switch (in.op->kind) {
    case OpKind::Add:
      return binary_for<AddRule>(dtype);
    case OpKind::Sub:
      return binary_for<SubRule>(dtype);
    case OpKind::Mul:
      return binary_for<MulRule>(dtype);
    case OpKind::Div:
      return binary_for<DivRule>(dtype);
    case OpKind::Rem:
      return binary_for<RemRule>(dtype);
    case OpKind::Max:
      return propagate ? binary_for<MaxRule>(dtype) : binary_for<MaxNumRule>(dtype);
    case OpKind::Min:
      return propagate ? binary_for<MinRule>(dtype) : binary_for<MinNumRule>(dtype);
    case OpKind::And:
      return binary_for<AndRule, true>(dtype);
    case OpKind::Or:
      return binary_for<OrRule, true>(dtype);
    case OpKind::Xor:
      return binary_for<XorRule, true>(dtype);
    case OpKind::Shl:
      return binary_for<ShlRule, true>(dtype);
    case OpKind::Shr:
      return binary_for<ShrRule, true>(dtype);
    case OpKind::CmpEq:
      return binary_for<EqRule>(dtype);
    case OpKind::CmpNe:
      return binary_for<NeRule>(dtype);
    case OpKind::CmpLt:
      return binary_for<LtRule>(dtype);
    case OpKind::CmpLe:
      return binary_for<LeRule>(dtype);
    case OpKind::CmpGt:
      return binary_for<GtRule>(dtype);
    case OpKind::CmpGe:
      return binary_for<GeRule>(dtype);
    default:
      return nullptr;
  }
}

/// neg, abs, not: imm[0] is the op kind.
template <class T>
void sign_or_not(Machine& m, const Instr& in, const Mask&) {
  using S = typename T::S;
  const S* a = in.in[0].as<S>();
  S* r = in.out[0].as<S>();
  const auto kind = static_cast<OpKind>(in.imm[0]);
  const uint32_t n = m.threads;
  if constexpr (!T::kFloat) {
    if (kind == OpKind::Not) {
      for (uint32_t t = 0; t < n; ++t) r[t] = num::bit_not<T>(a[t]);
      return;
    }
  }
  if (kind == OpKind::Neg) {
    for (uint32_t t = 0; t < n; ++t) r[t] = num::neg<T>(a[t]);
    return;
  }
  for (uint32_t t = 0; t < n; ++t) r[t] = num::abs<T>(a[t]);
}

/// A math function, computed in double and rounded once (the tile interpreter's math_fn).
template <class T>
void math(Machine& m, const Instr& in, const Mask&) {
  using S = typename T::S;
  const S* a = in.in[0].as<S>();
  S* r = in.out[0].as<S>();
  for (uint32_t t = 0, n = m.threads; t < n; ++t)
    r[t] = T::from_double(in.math(T::to_double(a[t])));
}

template <class T>
void fma(Machine& m, const Instr& in, const Mask&) {
  using S = typename T::S;
  const S *a = in.in[0].as<S>(), *b = in.in[1].as<S>(), *c = in.in[2].as<S>();
  S* r = in.out[0].as<S>();
  for (uint32_t t = 0, n = m.threads; t < n; ++t) r[t] = num::float_fma<T>(a[t], b[t], c[t]);
}

/// Handlers defined for float dtypes only (null otherwise: the verifier rejects those).
template <template <class> class H>
Handler float_only(ir::DType dtype) {
  return dispatch(dtype, [](auto t) -> Handler {
    using T = decltype(t);
    if constexpr (T::kFloat)
      return &H<T>::run;
    else
      return nullptr;
  });
}
template <class T>
struct MathH {
  static void run(Machine& m, const Instr& in, const Mask& k) { math<T>(m, in, k); }
};
/// A binary math function, computed in double and rounded once (the tile interpreter's math_fn2).
template <class T>
struct Math2H {
  static void run(Machine& m, const Instr& in, const Mask&) {
    using S = typename T::S;
    const S* a = in.in[0].as<S>();
    const S* b = in.in[1].as<S>();
    S* r = in.out[0].as<S>();
    for (uint32_t t = 0, n = m.threads; t < n; ++t)
      r[t] = T::from_double(in.math2(T::to_double(a[t]), T::to_double(b[t])));
  }
};
template <class T>
struct FmaH {
  static void run(Machine& m, const Instr& in, const Mask& k) { fma<T>(m, in, k); }
};

/// cond ? a : b, moving N-byte elements.
template <int N>
void where(Machine& m, const Instr& in, const Mask&) {
  const uint8_t* c = in.in[0].as<uint8_t>();
  const std::byte *a = in.in[1].data, *b = in.in[2].data;
  std::byte* r = in.out[0].data;
  for (uint32_t t = 0, n = m.threads; t < n; ++t) std::memcpy(r + t * N, (c[t] ? a : b) + t * N, N);
}

Handler where_for(int bytes) {
  Handler h = nullptr;
  with_elem_size(bytes, [&](auto size) { h = &where<decltype(size)::value>; });
  return h;
}

template <class To, class From>
void cast(Machine& m, const Instr& in, const Mask&) {
  const auto* a = in.in[0].as<typename From::S>();
  auto* r = in.out[0].as<typename To::S>();
  for (uint32_t t = 0, n = m.threads; t < n; ++t) r[t] = convert_element<To, From>(a[t]);
}

/// p + off * imm[0] (the pointee's size), wrapping; the offset of integer dtype T.
template <class T>
void ptr_add(Machine& m, const Instr& in, const Mask&) {
  const uint64_t* p = in.in[0].as<uint64_t>();
  const auto* off = in.in[1].as<typename T::S>();
  uint64_t* r = in.out[0].as<uint64_t>();
  const auto scale = static_cast<uint64_t>(in.imm[0]);
  for (uint32_t t = 0, n = m.threads; t < n; ++t) r[t] = p[t] + num::widen<T>(off[t]) * scale;
}

/// program_id or num_programs along axis imm[0] (imm[1] = 1 for num_programs), as i32.
void program_value(Machine& m, const Instr& in, const Mask&) {
  const auto axis = static_cast<size_t>(in.imm[0]);
  const uint32_t sizes[3] = {m.grid.x, m.grid.y, m.grid.z};
  const auto v = static_cast<int32_t>(in.imm[1] ? sizes[axis] : m.pid[axis]);
  int32_t* r = in.out[0].as<int32_t>();
  for (uint32_t t = 0, n = m.threads; t < n; ++t) r[t] = v;
}

ir::DType storage(const ir::Value* v) {
  return v->type.is_ptr ? ir::DType::u64 : v->type.dtype;
}

Handler select_cast(const Instr& in) {
  const ir::DType from = storage(in.op->operand(0)), to = storage(in.op->result());
  return dispatch(from, [&](auto f) -> Handler {
    return dispatch(to, [](auto t) -> Handler { return &cast<decltype(t), decltype(f)>; });
  });
}

Handler select_unary(Instr& in, ir::DType dtype) {
  switch (in.op->kind) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Not:
      in.imm[0] = static_cast<int64_t>(in.op->kind);
      if (in.op->kind == OpKind::Not && ir::is_float(dtype)) return nullptr;
      return dispatch(dtype, [](auto t) -> Handler { return &sign_or_not<decltype(t)>; });
    case OpKind::Fma:
      return float_only<FmaH>(dtype);
    default:
      in.math = math_fn(in.op->kind);
      return float_only<MathH>(dtype);
  }
}

}  // namespace

Handler select_scalar(Instr& in) {
  const ir::Op& op = *in.op;
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      in.imm[0] = op.int_attr(attr::kAxis);
      in.imm[1] = op.kind == OpKind::NumPrograms;
      TESSERA_CHECK(in.imm[0] >= 0 && in.imm[0] < 3 && in.out[0].bytes == 4, "bad '", op.name(),
                    "'");
      return program_value;
    case OpKind::Where:
      return where_for(in.out[0].bytes);
    case OpKind::Cast:
      return select_cast(in);
    case OpKind::PtrAdd:
      in.imm[0] = ir::dtype_bytes(op.operand(0)->type.dtype);
      return dispatch(storage(op.operand(1)), [](auto t) -> Handler {
        using T = decltype(t);
        if constexpr (T::kFloat)
          return nullptr;
        else
          return &ptr_add<T>;
      });
    default:
      break;
  }
  const ir::DType dtype = storage(op.operand(0));
  if (ir::is_binary_math(op.kind)) {
    in.math2 = math_fn2(op.kind);
    return float_only<Math2H>(dtype);
  }
  if (op.operands.size() == 2) return select_binary(in, dtype);
  return select_unary(in, dtype);
}

}  // namespace tessera::interp::simt
