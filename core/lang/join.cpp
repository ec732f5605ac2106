/// \file tl::join, tl::split, tl::interleave and tl::flip composed of shape ops, bitcasts and
/// xor_sum: moving elements within a tile needs no op of its own, so every target runs them.
#include <array>
#include <string>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace detail {

/// The unsigned integer dtype that holds the element bits of `t` (u8 for i1).
DType bits_dtype(DType t) {
  switch (ir::dtype_bits(t)) {
    case 1:
    case 8:
      return DType::u8;
    case 16:
      return DType::u16;
    case 32:
      return DType::u32;
    default:
      return DType::u64;
  }
}

/// A user error for a pointer tile, which the ops that move elements by their bits refuse.
ir::Value* require_values(const tensor& x, std::string_view op, const Here& loc) {
  ir::Value* v = detail::value_of(x, op, loc);
  if (v->type.is_ptr)
    user_error(loc, op, "a tile of pointers is not supported (" + v->type.str() + ")");
  return v;
}

/// `x` as the unsigned integers of its bits (i1 as 0/1 in u8).
tensor as_bits(const tensor& x, const Here& loc) {
  const DType t = x.dtype(), u = bits_dtype(t);
  if (t == DType::i1) return x.to(u, loc);
  return x.bitcast(u, loc);
}

/// The inverse of as_bits, for a tile whose dtype reductions may have widened.
tensor from_bits(const tensor& y, DType t, const Here& loc) {
  tensor u = y.to(bits_dtype(t), loc);
  if (t == DType::i1) return u.to(DType::i1, loc);
  return u.bitcast(t, loc);
}

}  // namespace detail

namespace {

using detail::as_bits;
using detail::from_bits;
using detail::require_values;

/// Bits `y` with the two entries of dimension `axis` (size 2) swapped: y ^ (y0 ^ y1).
tensor swap_pairs(const tensor& y, int axis, const Here& loc) {
  tensor both = xor_sum(y, axis, true, loc).to(y.dtype(), loc);
  return Operand(y, loc) ^ Operand(both, loc);
}

}  // namespace

tensor join(const tensor& a, const tensor& b, Here loc) {
  ir::Value* va = detail::value_of(a, "join", loc);
  ir::Value* vb = detail::value_of(b, "join", loc);
  if (va->type.dtype != vb->type.dtype || va->type.is_ptr != vb->type.is_ptr)
    user_error(loc, "join", "element types differ: " + va->type.str() + " and " + vb->type.str());
  std::vector<ir::Value*> vs = {va, vb};
  detail::broadcast_all(vs, "join", loc);
  const int rank = vs[0]->type.rank();
  tensor x = expand_dims(detail::wrap(vs[0]), rank, loc);  // S + [1] ([1] for scalars)
  tensor y = expand_dims(detail::wrap(vs[1]), rank, loc);
  return cat(x, y, rank, loc);
}

std::array<tensor, 2> split(const tensor& x, Here loc) {
  ir::Value* v = require_values(x, "split", loc);
  const Shape& shape = v->type.shape;
  if (shape.empty() || shape.back() != 2)
    user_error(loc, "split", "the last dimension must be 2, got " + v->type.str());
  const int rank = v->type.rank();
  tensor bits = as_bits(x, loc);
  Shape lane(static_cast<size_t>(rank), 1);
  lane.back() = 2;
  tensor index = reshape(arange(0, 2, loc), lane, loc);  // [1, ..., 1, 2]
  std::array<tensor, 2> out;
  for (int k = 0; k < 2; ++k) {
    tensor only = where(Operand(index, loc) == Operand(k, loc), Operand(bits, loc), 0, loc);
    out[static_cast<size_t>(k)] =
        from_bits(xor_sum(only, rank - 1, false, loc), v->type.dtype, loc);
  }
  return out;
}

tensor interleave(const tensor& a, const tensor& b, Here loc) {
  tensor j = join(a, b, loc);
  Shape shape = j.type().shape;  // S + [2]
  shape.pop_back();
  if (shape.empty()) return j;
  shape.back() *= 2;
  return reshape(j, shape, loc);
}

tensor flip(const tensor& x, int axis, Here loc) {
  ir::Value* v = require_values(x, "flip", loc);
  if (!v->type.is_tile()) user_error(loc, "flip", "operand is a scalar (" + v->type.str() + ")");
  const int ax = detail::normalize_axis(axis, v->type.rank(), "flip", loc);
  const Shape shape = v->type.shape;
  const int64_t n = shape[static_cast<size_t>(ax)];
  if (n == 1) return x;
  // Reversing an index of log2(n) bits inverts each bit: swap the halves of every block of 2s
  // elements along the axis, viewed as [..., n / 2s, 2, s, ...].
  tensor y = as_bits(x, loc);
  for (int64_t s = 1; s < n; s *= 2) {
    Shape view(shape.begin(), shape.begin() + ax);
    view.insert(view.end(), {n / (2 * s), 2, s});
    view.insert(view.end(), shape.begin() + ax + 1, shape.end());
    y = reshape(swap_pairs(reshape(y, view, loc), ax + 1, loc), shape, loc);
  }
  return from_bits(y, v->type.dtype, loc);
}

}  // namespace tessera::tl
