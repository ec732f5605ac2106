/// \file Tile construction and shape ops: arange, full, broadcast, expand_dims, reshape,
/// permute, cat and `[{_, None}]` indexing.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;
using ir::Type;

tensor program_id(int axis, Here loc) {
  if (axis < 0 || axis > 2)
    user_error(loc, "program_id", "axis must be 0, 1 or 2, got " + std::to_string(axis));
  return wrap(builder_at(loc).create_value(OpKind::ProgramId, {}, Type::scalar(DType::i32),
                                           {{attr::kAxis, int64_t{axis}}}));
}

tensor num_programs(int axis, Here loc) {
  if (axis < 0 || axis > 2)
    user_error(loc, "num_programs", "axis must be 0, 1 or 2, got " + std::to_string(axis));
  return wrap(builder_at(loc).create_value(OpKind::NumPrograms, {}, Type::scalar(DType::i32),
                                           {{attr::kAxis, int64_t{axis}}}));
}

tensor arange(int64_t start, int64_t end, Here loc) {
  int64_t n = end - start;
  if (n <= 0 || (n & (n - 1)) != 0)
    user_error(loc, "arange",
               "range [" + std::to_string(start) + ", " + std::to_string(end) + ") has " +
                   std::to_string(n) + " elements, which is not a power of two");
  if (start < INT32_MIN || end - 1 > INT32_MAX) user_error(loc, "arange", "bounds must fit in i32");
  detail::check_tile_size({n}, "arange", loc);
  return wrap(builder_at(loc).create_value(OpKind::Arange, {}, Type::tile(DType::i32, {n}),
                                           {{attr::kEnd, end}, {attr::kStart, start}}));
}

tensor full(const Shape& shape, const Operand& value, DType dtype, Here loc) {
  detail::check_shape(shape, "full", loc);
  if (!value.is_tensor()) {
    Type t = Type::tile(dtype, shape);
    if (value.kind() == Operand::Kind::Float && ir::is_float(dtype))
      return wrap(detail::constant(t, value.float_value(), loc));
    if (dtype == DType::i1) {
      bool nonzero = value.kind() == Operand::Kind::Float ? value.float_value() != 0.0
                                                          : value.int_value() != 0;
      return wrap(detail::constant_int(t, nonzero ? 1 : 0, loc));
    }
    if (value.kind() == Operand::Kind::Float)
      return wrap(detail::constant_int(t, static_cast<int64_t>(value.float_value()), loc));
    if (ir::is_float(dtype))
      return wrap(detail::constant(t, static_cast<double>(value.int_value()), loc));
    return wrap(detail::constant_int(t, value.int_value(), loc));
  }
  ir::Value* v = detail::require_scalar(value, "full", "the fill value", loc);
  v = detail::cast_to(v, dtype, loc);
  return wrap(builder_at(loc).create_value(OpKind::Splat, {v}, v->type.with_shape(shape)));
}

tensor zeros(const Shape& shape, DType dtype, Here loc) {
  return full(shape, 0, dtype, loc);
}

tensor broadcast_to(const tensor& x, const Shape& shape, Here loc) {
  detail::check_shape(shape, "broadcast", loc);
  return wrap(
      detail::broadcast_value(detail::value_of(x, "broadcast", loc), shape, "broadcast", loc));
}

tensor expand_dims(const tensor& x, int axis, Here loc) {
  ir::Value* v = detail::value_of(x, "expand_dims", loc);
  int rank = v->type.rank();
  int a = axis < 0 ? axis + rank + 1 : axis;
  if (a < 0 || a > rank)
    user_error(loc, "expand_dims",
               "axis " + std::to_string(axis) + " is out of range for a rank-" +
                   std::to_string(rank) + " value");
  if (rank == 0)
    return wrap(builder_at(loc).create_value(OpKind::Splat, {v}, v->type.with_shape({1})));
  Shape s = v->type.shape;
  s.insert(s.begin() + a, 1);
  return wrap(builder_at(loc).create_value(OpKind::ExpandDims, {v}, v->type.with_shape(s),
                                           {{attr::kAxis, int64_t{a}}}));
}

tensor reshape(const tensor& x, const Shape& shape, Here loc) {
  ir::Value* v = detail::value_of(x, "reshape", loc);
  detail::check_shape(shape, "reshape", loc);
  if (!v->type.is_tile()) user_error(loc, "reshape", "operand is a scalar (" + v->type.str() + ")");
  if (ir::num_elements(shape) != v->type.numel())
    user_error(loc, "reshape",
               "cannot reshape " + ir::shape_str(v->type.shape) + " (" +
                   std::to_string(v->type.numel()) + " elements) to " + ir::shape_str(shape) +
                   " (" + std::to_string(ir::num_elements(shape)) + " elements)");
  if (shape == v->type.shape) return x;
  return wrap(builder_at(loc).create_value(OpKind::Reshape, {v}, v->type.with_shape(shape)));
}

tensor permute(const tensor& x, const std::vector<int64_t>& order, Here loc) {
  ir::Value* v = detail::value_of(x, "permute", loc);
  const Shape& in = v->type.shape;
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(in.size());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    user_error(loc, "permute",
               "order " + ir::shape_str(order) + " is not a permutation of the " +
                   std::to_string(in.size()) + " dimensions of " + ir::shape_str(in));
  if (order == iota) return x;
  Shape out;
  for (int64_t d : order) out.push_back(in[static_cast<size_t>(d)]);
  return wrap(builder_at(loc).create_value(OpKind::Permute, {v}, v->type.with_shape(out),
                                           {{attr::kOrder, order}}));
}

tensor trans(const tensor& x, Here loc) {
  ir::Value* v = detail::value_of(x, "permute", loc);
  int rank = v->type.rank();
  if (rank < 2) user_error(loc, "trans", "needs a tile of rank >= 2, got " + v->type.str());
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[static_cast<size_t>(rank - 1)], order[static_cast<size_t>(rank - 2)]);
  return permute(x, order, loc);
}

tensor cat(const tensor& a, const tensor& b, int axis, Here loc) {
  ir::Value* va = detail::value_of(a, "cat", loc);
  ir::Value* vb = detail::value_of(b, "cat", loc);
  if (va->type.dtype != vb->type.dtype || va->type.is_ptr != vb->type.is_ptr)
    user_error(loc, "cat", "element types differ: " + va->type.str() + " and " + vb->type.str());
  if (va->type.rank() != vb->type.rank() || !va->type.is_tile())
    user_error(
        loc, "cat",
        "ranks differ: " + ir::shape_str(va->type.shape) + " and " + ir::shape_str(vb->type.shape));
  int ax = detail::normalize_axis(axis, va->type.rank(), "cat", loc);
  Shape out = va->type.shape;
  for (int i = 0; i < va->type.rank(); ++i) {
    if (i != ax && va->type.shape[i] != vb->type.shape[i])
      user_error(loc, "cat",
                 "shapes " + ir::shape_str(va->type.shape) + " and " +
                     ir::shape_str(vb->type.shape) + " differ outside axis " + std::to_string(ax));
  }
  out[static_cast<size_t>(ax)] += vb->type.shape[static_cast<size_t>(ax)];
  detail::check_shape(out, "cat", loc);
  return wrap(builder_at(loc).create_value(OpKind::Cat, {va, vb}, va->type.with_shape(out),
                                           {{attr::kAxis, int64_t{ax}}}));
}

tensor tensor::operator[](const Index& idx) const {
  // Triton's x[:, None]: `_` keeps a dimension, `None` inserts a size-1 one.
  const std::initializer_list<Slice>& index = idx.slices;
  const Here& loc = idx.loc;
  ir::Value* v = value_;
  if (!v) user_error(loc, "expand_dims", "indexing an empty tl::tensor");
  check_trace(&loc, "expand_dims");
  int kept = 0;
  for (const Slice& s : index) kept += s.new_axis ? 0 : 1;
  if (kept != v->type.rank())
    user_error(loc, "expand_dims",
               "index has " + std::to_string(kept) + " ':' entries but the value has rank " +
                   std::to_string(v->type.rank()) + " (" + v->type.str() + ")");
  ir::Builder& b = Tracer::current(loc).at(loc);
  tensor out = *this;
  int pos = 0;
  for (const Slice& s : index) {
    if (s.new_axis) {
      ir::Value* cur = out.value();
      Shape shape = cur->type.shape;
      shape.insert(shape.begin() + pos, 1);
      ir::Value* r = cur->type.is_tile()
                         ? b.create_value(OpKind::ExpandDims, {cur}, cur->type.with_shape(shape),
                                          {{attr::kAxis, int64_t{pos}}})
                         : b.create_value(OpKind::Splat, {cur}, cur->type.with_shape(shape));
      out = wrap(r);
    }
    ++pos;
  }
  return out;
}

}  // namespace tessera::tl
