/// \file tl::umulhi and Triton's random numbers (Philox 4x32-10, randint, rand, randn) composed
/// of elementwise IR ops, so that both interpreters and every target run them as they are.
#include <array>
#include <string>

#include "core/ir/ops.h"
#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// Elementwise ops on values of one type, recorded at the caller's line.
struct Ops {
  const Here& loc;

  Value* op(OpKind kind, Value* a, Value* b) const {
    return builder_at(loc).create_value(kind, {a, b}, a->type);
  }
  /// A constant of `like`'s type holding the bits of `v`.
  Value* c(const Value* like, uint64_t v) const {
    return detail::constant_int(like->type, static_cast<int64_t>(v), loc);
  }
  Value* cast(Value* v, DType t) const { return detail::cast_to(v, t, loc); }
  Value* bitcast(Value* v, DType t) const {
    if (v->type.dtype == t) return v;
    return builder_at(loc).create_value(OpKind::Bitcast, {v}, v->type.with_dtype(t));
  }
  Value* mul(Value* a, Value* b) const { return op(OpKind::Mul, a, b); }
  Value* add(Value* a, Value* b) const { return op(OpKind::Add, a, b); }
  Value* xor_(Value* a, Value* b) const { return op(OpKind::Xor, a, b); }
  Value* shr(Value* a, int n) const { return op(OpKind::Shr, a, c(a, static_cast<uint64_t>(n))); }
  Value* low32(Value* a) const { return op(OpKind::And, a, c(a, 0xFFFFFFFFu)); }

  /// The high half of the product of two unsigned values (u32 or u64).
  Value* mulhi_unsigned(Value* a, Value* b) const {
    if (a->type.dtype == DType::u32)  // one 64-bit product: NVPTX selects mul.hi.u32 for it
      return cast(shr(mul(cast(a, DType::u64), cast(b, DType::u64)), 32), DType::u32);
    // 64 bits: four 32x32 -> 64 partial products; `mid` gathers the carries into bit 32.
    Value *al = low32(a), *ah = shr(a, 32), *bl = low32(b), *bh = shr(b, 32);
    Value* ll = mul(al, bl);
    Value* hl = mul(ah, bl);
    Value* lh = mul(al, bh);
    Value* mid = add(add(shr(ll, 32), low32(hl)), lh);  // < 2^64: no carry is lost
    return add(add(mul(ah, bh), shr(hl, 32)), shr(mid, 32));
  }
};

DType unsigned_of(DType t) {
  return ir::dtype_bits(t) == 64 ? DType::u64 : DType::u32;
}

/// A user error unless `t` is a 32- or 64-bit integer dtype.
void require_word(const Type& t, std::string_view op, std::string_view what, const Here& loc) {
  const int bits = ir::dtype_bits(t.dtype);
  if (t.is_ptr || ir::is_float(t.dtype) || (bits != 32 && bits != 64))
    user_error(loc, op,
               std::string(what) + " must be a 32- or 64-bit integer, got " + detail::describe(t));
}

void require_rounds(int n_rounds, std::string_view op, const Here& loc) {
  if (n_rounds < 1 || n_rounds > 64)
    user_error(loc, op, "n_rounds must be in [1, 64], got " + std::to_string(n_rounds));
}

/// The seed as u64 (sign-extended from a signed dtype, as Triton's seed.to(tl.uint64)).
Value* seed_u64(const Operand& seed, std::string_view op, const Here& loc) {
  if (seed.kind() != Operand::Kind::Int && seed.kind() != Operand::Kind::Tensor)
    user_error(loc, op, "the seed must be an integer");
  Value* s = seed.is_tensor() ? detail::value_of(seed.as_tensor(), op, loc)
                              : detail::materialize(seed, detail::natural_dtype(seed), op, loc);
  if (s->type.is_ptr || ir::is_float(s->type.dtype) || s->type.dtype == DType::i1)
    user_error(loc, op, "the seed must be an integer, got " + detail::describe(s->type));
  if (!s->type.shape.empty())
    user_error(loc, op, "the seed must be a scalar, got " + detail::describe(s->type));
  return detail::cast_to(s, DType::u64, loc);
}

/// Rounds of Philox on unsigned counters c[0..3] (all u32 or all u64) with key (k0, k1).
std::array<Value*, 4> philox_rounds(const Ops& o, std::array<Value*, 4> c, Value* k0, Value* k1,
                                    int n_rounds) {
  const bool wide = c[0]->type.dtype == DType::u64;
  const uint64_t key_a = wide ? 0x9E3779B97F4A7C15u : 0x9E3779B9u;
  const uint64_t key_b = wide ? 0xBB67AE8584CAA73Bu : 0xBB67AE85u;
  const uint64_t round_a = wide ? 0xD2E7470EE14C6C93u : 0xD2511F53u;
  const uint64_t round_b = wide ? 0xCA5A826395121157u : 0xCD9E8D57u;
  Value* ra = o.c(c[0], round_a);
  Value* rb = o.c(c[0], round_b);
  for (int r = 0; r < n_rounds; ++r) {
    Value *c0 = c[0], *c2 = c[2];
    c[0] = o.xor_(o.xor_(o.mulhi_unsigned(rb, c2), c[1]), k0);
    c[2] = o.xor_(o.xor_(o.mulhi_unsigned(ra, c0), c[3]), k1);
    c[1] = o.mul(rb, c2);
    c[3] = o.mul(ra, c0);
    if (r + 1 == n_rounds) break;  // the last key is unused
    k0 = o.add(k0, o.c(k0, key_a));
    k1 = o.add(k1, o.c(k1, key_b));
  }
  return c;
}

std::array<tensor, 4> wrap4(const std::array<Value*, 4>& v) {
  return {wrap(v[0]), wrap(v[1]), wrap(v[2]), wrap(v[3])};
}

/// Box-Muller on two uniform f32 tiles: {r cos(th), r sin(th)}.
std::array<tensor, 2> box_muller(const tensor& u1, const tensor& u2, const Here& loc) {
  tensor a = maximum(Operand(u1, loc), 1.0e-7f, PropagateNan::None, loc);
  tensor th = Operand(6.283185307179586, loc) * Operand(u2, loc);
  tensor r = sqrt(Operand(-2.0, loc) * Operand(log(a, loc), loc), loc);
  return {Operand(r, loc) * Operand(cos(th, loc), loc),
          Operand(r, loc) * Operand(sin(th, loc), loc)};
}

}  // namespace

tensor umulhi(const Operand& a, const Operand& b, Here loc) {
  if ((a.is_tensor() && a.as_tensor().defined() && a.as_tensor().type().is_ptr) ||
      (b.is_tensor() && b.as_tensor().defined() && b.as_tensor().type().is_ptr))
    user_error(loc, "umulhi", "operands must be integers, got a pointer");
  const DType dtype = detail::computation_dtype(a, b, "umulhi", loc);
  require_word(Type::scalar(dtype), "umulhi", "the operands' dtype", loc);
  std::vector<Value*> vs = {detail::materialize(a, dtype, "umulhi", loc),
                            detail::materialize(b, dtype, "umulhi", loc)};
  detail::broadcast_all(vs, "umulhi", loc);
  const Ops o{loc};
  const DType u = unsigned_of(dtype);
  Value* hi = o.mulhi_unsigned(o.bitcast(vs[0], u), o.bitcast(vs[1], u));
  return wrap(o.bitcast(hi, dtype));
}

namespace {

std::array<tensor, 4> philox_named(const Operand& seed, const std::array<const Operand*, 4>& in,
                                   int n_rounds, std::string_view name, const Here& loc) {
  require_rounds(n_rounds, name, loc);
  const Ops o{loc};
  Value* s = seed_u64(seed, name, loc);
  std::array<Value*, 4> c{};
  DType word = DType::i1;
  for (int i = 0; i < 4; ++i) {
    Value* v = in[i]->is_tensor()
                   ? detail::value_of(in[i]->as_tensor(), name, loc)
                   : detail::materialize(*in[i], detail::natural_dtype(*in[i]), name, loc);
    require_word(v->type, name, "counter c" + std::to_string(i), loc);
    if (i > 0 && ir::dtype_bits(v->type.dtype) != ir::dtype_bits(word))
      user_error(loc, name,
                 "the counters must have one bit width, got " + std::string(ir::dtype_name(word)) +
                     " and " + detail::describe(v->type));
    word = v->type.dtype;
    c[i] = o.bitcast(v, unsigned_of(v->type.dtype));
  }
  std::vector<Value*> vs(c.begin(), c.end());
  detail::broadcast_all(vs, name, loc);
  for (int i = 0; i < 4; ++i) c[i] = vs[i];
  Value *k0, *k1;
  if (unsigned_of(word) == DType::u32) {  // key (low, high) halves of the seed
    k0 = o.cast(s, DType::u32);
    k1 = o.cast(o.shr(s, 32), DType::u32);
  } else {
    k0 = s;
    k1 = o.c(s, 0);
  }
  if (!c[0]->type.shape.empty()) {  // the keys follow the counters' shape
    k0 = detail::broadcast_value(k0, c[0]->type.shape, name, loc);
    k1 = detail::broadcast_value(k1, c[0]->type.shape, name, loc);
  }
  return wrap4(philox_rounds(o, c, k0, k1, n_rounds));
}

/// Triton's randint4x: counters (offset low 32 bits, offset high 32 bits or 0, 0, 0).
std::array<tensor, 4> randint4x_named(const Operand& seed, const tensor& offset, int n_rounds,
                                      std::string_view name, const Here& loc) {
  require_rounds(n_rounds, name, loc);
  Value* off = detail::value_of(offset, name, loc);
  if (off->type.is_ptr || ir::is_float(off->type.dtype) || off->type.dtype == DType::i1)
    user_error(loc, name, "the offset must be an integer, got " + detail::describe(off->type));
  const Ops o{loc};
  Value* lo = o.cast(off, DType::u32);
  Value* zero = o.c(lo, 0);
  Value* hi = ir::dtype_bits(off->type.dtype) > 32 ? o.cast(o.shr(off, 32), DType::u32) : zero;
  const Operand l(wrap(lo), loc), h(wrap(hi), loc), z(wrap(zero), loc);
  return philox_named(seed, {&l, &h, &z, &z}, n_rounds, name, loc);
}

}  // namespace

std::array<tensor, 4> philox(const Operand& seed, const Operand& c0, const Operand& c1,
                             const Operand& c2, const Operand& c3, int n_rounds, Here loc) {
  return philox_named(seed, {&c0, &c1, &c2, &c3}, n_rounds, "philox", loc);
}

std::array<tensor, 4> randint4x(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  return randint4x_named(seed, offset, n_rounds, "randint4x", loc);
}

tensor randint(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  return randint4x_named(seed, offset, n_rounds, "randint", loc)[0];
}

tensor uint_to_uniform_float(const tensor& x, Here loc) {
  Value* v = detail::value_of(x, "uint_to_uniform_float", loc);
  require_word(v->type, "uint_to_uniform_float", "the operand", loc);
  const Ops o{loc};
  const bool wide = ir::dtype_bits(v->type.dtype) == 64;
  Value* s = o.bitcast(v, wide ? DType::i64 : DType::i32);
  // -x - 1 for x < 0: the magnitudes fold onto [0, 2^31 - 1] without overflow.
  Value* folded = o.op(OpKind::Sub, o.c(s, ~uint64_t{0}), s);  // -1 - x == -x - 1
  Value* neg =
      builder_at(loc).create_value(OpKind::CmpLt, {s, o.c(s, 0)}, s->type.with_dtype(DType::i1));
  Value* pos = builder_at(loc).create_value(OpKind::Where, {neg, folded, s}, s->type);
  Value* f = o.cast(pos, DType::f32);
  const double scale = wide ? 1.0842020432385337e-19 : 4.6566127342e-10;
  return wrap(
      o.mul(f, detail::constant(f->type, static_cast<double>(static_cast<float>(scale)), loc)));
}

tensor rand(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  return uint_to_uniform_float(randint4x_named(seed, offset, n_rounds, "rand", loc)[0], loc);
}

std::array<tensor, 4> rand4x(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  std::array<tensor, 4> w = randint4x_named(seed, offset, n_rounds, "rand4x", loc);
  for (tensor& t : w) t = uint_to_uniform_float(t, loc);
  return w;
}

tensor randn(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  std::array<tensor, 4> w = randint4x_named(seed, offset, n_rounds, "randn", loc);
  return box_muller(uint_to_uniform_float(w[0], loc), uint_to_uniform_float(w[1], loc), loc)[0];
}

std::array<tensor, 4> randn4x(const Operand& seed, const tensor& offset, int n_rounds, Here loc) {
  std::array<tensor, 4> u = randint4x_named(seed, offset, n_rounds, "randn4x", loc);
  for (tensor& t : u) t = uint_to_uniform_float(t, loc);
  std::array<tensor, 2> a = box_muller(u[0], u[1], loc), b = box_muller(u[2], u[3], loc);
  return {a[0], a[1], b[0], b[1]};
}

}  // namespace tessera::tl
