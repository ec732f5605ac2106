/// \file The fuzzer's generator, part 1: constants, index tiles, the value pool, and the
/// straight-line ops (arithmetic, bitwise, compares, math, casts, reductions, scans, layouts).
#include "tools/fuzz_builder.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/ir/builder.h"
#include "core/ir/op_table.h"
#include "core/ir/ops.h"
#include "core/support/error.h"

namespace tessera::tools::fuzz::detail {

Value* Gen::random_constant(Type t) {
  if (t.dtype == DType::i1) return constant(t, static_cast<double>(uniform(0, 1)));
  if (is_i(t.dtype)) {
    if (chance(15))
      return b_.constant_int(t, chance(50) ? INT64_MIN : INT64_MAX);  // wrapped to the dtype
    return b_.constant_int(t, uniform(-9, 9));
  }
  static const double kFloats[] = {0.5, -1.5, 2.0, 0.0, -0.0, 3.25, 1000.0, -0.125, INFINITY, NAN};
  return constant(t, kFloats[uniform(0, chance(90) ? 7 : 9)]);
}

Value* Gen::linear(const Shape& s) {
  if (s.empty()) return b_.constant_int(Type::scalar(DType::i32), 0);
  auto range = [&](int64_t n) {
    return make(OpKind::Arange, {}, Type::tile(DType::i32, {n}),
                {{attr::kEnd, n}, {attr::kStart, int64_t{0}}});
  };
  Value* lin = range(s[0]);
  Shape cur = {s[0]};
  for (size_t d = 1; d < s.size(); ++d) {  // lin = lin[..., None] * s[d] + arange(s[d])[None.., :]
    Shape next = cur, ones = cur, lead(d, 1);
    next.push_back(s[d]);
    ones.push_back(1);
    lead.push_back(s[d]);
    const Type t = Type::tile(DType::i32, next);
    Value* hi = make(OpKind::ExpandDims, {lin}, Type::tile(DType::i32, ones),
                     {{attr::kAxis, static_cast<int64_t>(d)}});
    Value* lo = make(OpKind::Reshape, {range(s[d])}, Type::tile(DType::i32, lead));
    hi = make(OpKind::Mul, {make(OpKind::Broadcast, {hi}, t), b_.constant_int(t, s[d])}, t);
    lin = make(OpKind::Add, {hi, make(OpKind::Broadcast, {lo}, t)}, t);
    cur = next;
  }
  return lin;
}

Value* Gen::offsets(const Shape& s) {
  Type i32 = Type::scalar(DType::i32);
  Value* base = make(OpKind::Mul, {pid_, b_.constant_int(i32, ir::num_elements(s))}, i32);
  Value* lin = linear(s);
  return s.empty() ? make(OpKind::Add, {base, lin}, i32)
                   : make(OpKind::Add, {splat(base, s), lin}, lin->type);
}

Value* Gen::partner(Value* v) {
  const Type t = v->type;
  if (Value* same = chance(70) ? find([&](Value* w) { return w->type == t && w != v; }) : nullptr)
    return same;
  if (Value* shaped =
          chance(60) ? find([&](Value* w) { return w->type.shape == t.shape; }) : nullptr)
    return convert(shaped, t.dtype);
  return random_constant(t);
}

Value* Gen::convert(Value* v, DType to) {
  if (v->type.dtype == to) return v;
  // Comparing with a tolerance, a float -> int conversion would turn a last-bit difference into
  // a whole step: use a constant instead.
  if (!o_.exact && is_f(v->type.dtype) && is_i(to)) return random_constant(v->type.with_dtype(to));
  if (is_f(v->type.dtype) && is_i(to) && to != DType::i1) {  // NaN -> 0, then into [lo, 100]
    const Type t = v->type;
    Value* nan = make(OpKind::CmpNe, {v, v}, t.with_dtype(DType::i1));
    v = make(OpKind::Where, {nan, constant(t, 0.0), v}, t);
    v = make(OpKind::Max, {v, constant(t, ir::is_signed_int(to) ? -100.0 : 0.0)}, t);
    v = make(OpKind::Min, {v, constant(t, 100.0)}, t);
  }
  return make(OpKind::Cast, {v}, v->type.with_dtype(to));
}

Value* Gen::emit_arith() {
  Value* a = find([](Value* v) { return v->type.dtype != DType::i1; });
  if (!a) return nullptr;
  static const OpKind kKinds[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Min, OpKind::Max};
  const OpKind k = kKinds[uniform(0, 4)];
  Value* b = partner(a);
  std::vector<ir::Attribute> attrs;
  if ((k == OpKind::Min || k == OpKind::Max) && is_f(a->type.dtype) && chance(50))
    attrs.push_back({attr::kNan, std::string("ignore")});
  return chance(50) ? make(k, {a, b}, a->type, attrs) : make(k, {b, a}, a->type, attrs);
}

Value* Gen::emit_divrem() {
  Value* a = find([](Value* v) { return v->type.dtype != DType::i1; });
  if (!a) return nullptr;
  Value* d = partner(a);
  const Type t = a->type;
  if (is_i(t.dtype))  // a divisor in [1, 8]: never zero, never -1
    d = make(OpKind::Add, {make(OpKind::And, {d, b_.constant_int(t, 7)}, t), b_.constant_int(t, 1)},
             t);
  const bool rem_ok = o_.exact || is_i(t.dtype);  // a float remainder amplifies rounding errors
  return make(chance(50) || !rem_ok ? OpKind::Div : OpKind::Rem, {a, d}, t);
}

Value* Gen::emit_bitwise() {
  Value* a = find([](Value* v) { return is_i(v->type.dtype); });
  if (!a) return nullptr;
  const Type t = a->type;
  const int64_t kind = uniform(0, 4);
  if (kind < 3) {
    static const OpKind kKinds[] = {OpKind::And, OpKind::Or, OpKind::Xor};
    return make(kKinds[kind], {a, partner(a)}, t);
  }
  if (t.dtype == DType::i1) return make(OpKind::Not, {a}, t);
  Value* count =
      make(OpKind::And, {partner(a), b_.constant_int(t, ir::dtype_bits(t.dtype) - 1)}, t);
  return make(kind == 3 ? OpKind::Shl : OpKind::Shr, {a, count}, t);
}

Value* Gen::emit_compare_where() {
  // With a tolerance, float compares would flip on last-bit differences: compare integers then.
  Value* a = find([&](Value* v) { return o_.exact || is_i(v->type.dtype); });
  static const OpKind kKinds[] = {OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt,
                                  OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe};
  // One draw per statement (see uniform()): the kind, then the partner.
  const OpKind k = kKinds[uniform(0, 5)];
  Value* b = partner(a);
  Value* c = make(k, {a, b}, a->type.with_dtype(DType::i1));
  if (chance(30)) return c;
  Value* x = find([&](Value* v) { return v->type.shape == c->type.shape; });
  Value* y = partner(x);
  return make(OpKind::Where, {c, x, y}, x->type);
}

Value* Gen::emit_unary() {
  if (chance(60)) {
    Value* a = find([](Value* v) { return is_f(v->type.dtype); });
    if (!a) return nullptr;
    // Every math row of ops.def, unary or binary; step functions (floor, ceil: a 1-ulp input
    // difference moves the result a whole unit) only when the comparison is exact.
    static const std::vector<OpKind> kAll =
        ir::kinds_where([](OpKind k) { return ir::is_unary_math(k) || ir::is_binary_math(k); });
    static const std::vector<OpKind> kSmooth = ir::kinds_where([](OpKind k) {
      return ir::row_has(k, ir::kMath) && !ir::row_has(k, ir::kStep) &&
             (ir::is_unary_math(k) || ir::is_binary_math(k));
    });
    if (chance(15)) {
      Value* b = partner(a);
      Value* c = partner(a);
      return make(OpKind::Fma, {a, b, c}, a->type);
    }
    const std::vector<OpKind>& pool = o_.exact ? kAll : kSmooth;
    const OpKind k = pool[uniform(0, static_cast<int>(pool.size()) - 1)];
    if (ir::is_binary_math(k)) return make(k, {a, partner(a)}, a->type);
    if ((k == OpKind::Sin || k == OpKind::Cos) && o_.trig_range > 0) {
      const Type t = a->type, b1 = t.with_dtype(DType::i1);
      Value* mag = make(OpKind::Abs, {a}, t);
      Value* big = make(OpKind::And,
                        {make(OpKind::CmpGt, {mag, constant(t, o_.trig_range)}, b1),
                         make(OpKind::CmpLt, {mag, constant(t, INFINITY)}, b1)},
                        b1);
      a = make(OpKind::Where, {big, constant(t, 0.0), a}, t);
    }
    return make(k, {a}, a->type);
  }
  Value* a = find([](Value* v) { return v->type.dtype != DType::i1; });
  return make(chance(50) ? OpKind::Neg : OpKind::Abs, {a}, a->type);
}

Value* Gen::emit_cast() {
  Value* a = find([](Value*) { return true; });
  const DType from = a->type.dtype;
  if (!chance(25) || from == DType::i1) return convert(a, any_dtype());
  // A bitcast to another dtype of the same width; float -> int only when comparing bitwise on
  // the host (NaN payloads are unspecified) and int -> float only there too (subnormals).
  std::vector<DType> same;
  for (DType t : o_.dtypes)
    if (t != from && t != DType::i1 && ir::dtype_bits(t) == ir::dtype_bits(from) &&
        (o_.exact || (is_i(t) && is_i(from))))
      same.push_back(t);
  if (same.empty()) return convert(a, any_dtype());
  return make(OpKind::Bitcast, {a}, a->type.with_dtype(same[uniform(0, same.size() - 1)]));
}

Value* Gen::emit_reduce() {
  Value* a = find([](Value* v) { return v->type.is_tile(); });
  if (!a) return nullptr;
  const Type t = a->type;
  const int axis = static_cast<int>(uniform(0, t.rank() - 1));
  static const char* kKinds[] = {"sum",  "max",     "min", "argmax", "argmin",
                                 "prod", "xor_sum", "and", "or"};
  // Float argmax/argmin flip on near ties and products overflow: not under a tolerance.
  const char* kind = kKinds[uniform(0, is_i(t.dtype) ? 8 : o_.exact ? 5 : 2)];
  Shape rs = t.shape;
  rs.erase(rs.begin() + axis);
  const bool arg = kind[0] == 'a' && kind[1] == 'r';
  Value* r = make(OpKind::Reduce, {a}, Type{arg ? DType::i32 : t.dtype, false, rs},
                  {{attr::kAxis, int64_t{axis}}, {attr::kKind, std::string(kind)}});
  if (chance(50)) return r;
  // Broadcast the result back to the input's shape.
  if (rs.empty()) return splat(r, t.shape);
  Shape ks = t.shape;
  ks[axis] = 1;
  Value* e = make(OpKind::ExpandDims, {r}, r->type.with_shape(ks), {{attr::kAxis, int64_t{axis}}});
  return make(OpKind::Broadcast, {e}, r->type.with_shape(t.shape));
}

Value* Gen::emit_scan() {
  Value* a = find([](Value* v) { return v->type.is_tile() && v->type.dtype != DType::i1; });
  if (!a) return nullptr;
  static const char* kKinds[] = {"sum", "max", "min", "prod"};  // no float products unless exact
  const char* kind = kKinds[uniform(0, o_.exact || is_i(a->type.dtype) ? 3 : 2)];
  std::vector<ir::Attribute> attrs = {{attr::kAxis, int64_t{uniform(0, a->type.rank() - 1)}},
                                      {attr::kKind, std::string(kind)}};
  if (chance(40)) attrs.push_back({attr::kReverse, int64_t{1}});
  return make(OpKind::Scan, {a}, a->type, attrs);
}

Value* Gen::emit_layout() {
  Value* a = find([](Value* v) { return v->type.is_tile(); });
  if (!a) return nullptr;
  const Type t = a->type;
  const int64_t n = t.numel();
  switch (uniform(0, 3)) {
    case 0:
      if (t.rank() == 2)
        return make(OpKind::Permute, {a}, t.with_shape({t.shape[1], t.shape[0]}),
                    {{attr::kOrder, std::vector<int64_t>{1, 0}}});
      return n >= 2 ? make(OpKind::Reshape, {a}, t.with_shape({2, n / 2})) : nullptr;
    case 1:
      return make(OpKind::Reshape, {a}, t.with_shape(t.rank() == 2 ? Shape{n} : Shape{n, 1}));
    case 2: {
      if (n > 256) return nullptr;
      const int axis = static_cast<int>(uniform(0, t.rank() - 1));
      Shape s = t.shape;
      s[axis] *= 2;
      return make(OpKind::Cat, {a, partner(a)}, t.with_shape(s), {{attr::kAxis, int64_t{axis}}});
    }
    default: {  // a new leading dimension
      Shape s = t.shape;
      s.insert(s.begin(), 1);
      Value* e = make(OpKind::ExpandDims, {a}, t.with_shape(s), {{attr::kAxis, int64_t{0}}});
      s[0] = 2;
      return t.rank() < 2 ? make(OpKind::Broadcast, {e}, t.with_shape(s)) : e;
    }
  }
}

}  // namespace tessera::tools::fuzz::detail
