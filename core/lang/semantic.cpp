/// \file The typing rules: promotion, literal typing, broadcasting, casts and constants.
#include "core/lang/semantic.h"

#include <bit>
#include <limits>

#include "core/ir/limits.h"

namespace tessera::tl::detail {

using ir::Type;

ir::Builder& builder_at(const Here& loc) {
  return Tracer::current(loc).at(loc);
}

tensor wrap(ir::Value* v) {
  return tensor(v);
}

ir::Value* value_of(const tensor& t, std::string_view op, const Here& loc) {
  if (!t.defined()) user_error(loc, op, "operand is an empty tl::tensor (it was never assigned)");
  t.check_trace(&loc, op);
  return t.value();
}

ir::Value* value_of(const Operand& x, std::string_view op, const Here& loc) {
  if (x.is_tensor()) return value_of(x.as_tensor(), op, loc);
  return materialize(x, natural_dtype(x), op, loc);
}

std::string describe(const Type& t) {
  return t.str();
}

DType promote(DType a, DType b) {
  using ir::is_float;
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    if (a == DType::f64 || b == DType::f64) return DType::f64;
    return DType::f32;  // f32 with a narrower float, or f16 with bf16
  }
  if (a == DType::i1) return b;
  if (b == DType::i1) return a;
  int wa = ir::dtype_bits(a), wb = ir::dtype_bits(b);
  bool sa = ir::is_signed_int(a), sb = ir::is_signed_int(b);
  if (sa == sb) return wa >= wb ? a : b;
  DType s = sa ? a : b, u = sa ? b : a;
  // Mixed signedness (Triton): the unsigned type wins unless the signed one is wider.
  return ir::dtype_bits(s) > ir::dtype_bits(u) ? s : u;
}

DType natural_dtype(const Operand& x) {
  switch (x.kind()) {
    case Operand::Kind::Tensor:
      return x.as_tensor().dtype();
    case Operand::Kind::Bool:
      return DType::i1;
    case Operand::Kind::Float:
      return DType::f32;
    case Operand::Kind::Int:
      if (x.unsigned64()) return DType::u64;
      if (x.int_value() >= INT32_MIN && x.int_value() <= INT32_MAX) return DType::i32;
      return DType::i64;
  }
  return DType::i32;
}

namespace {

bool int_fits(int64_t v, bool unsigned64, DType t) {
  if (t == DType::i1) return v == 0 || v == 1;
  int bits = ir::dtype_bits(t);
  if (ir::is_signed_int(t)) {
    if (unsigned64) return false;
    if (bits == 64) return true;
    return v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
  }
  if (unsigned64) return bits == 64;
  if (v < 0) return false;
  return bits == 64 || v < (int64_t{1} << bits);
}

/// The dtype a weak literal takes next to a tensor of dtype `t`.
DType literal_with(const Operand& lit, DType t) {
  if (lit.kind() == Operand::Kind::Float) return ir::is_float(t) ? t : DType::f32;
  if (ir::is_float(t)) return t;
  if (lit.kind() == Operand::Kind::Bool) return t;
  if (t != DType::i1 && int_fits(lit.int_value(), lit.unsigned64(), t)) return t;
  return promote(natural_dtype(lit), t);
}

}  // namespace

DType computation_dtype(const Operand& a, const Operand& b, std::string_view op, const Here& loc) {
  (void)op;
  (void)loc;
  if (a.is_tensor() && b.is_tensor()) return promote(a.as_tensor().dtype(), b.as_tensor().dtype());
  if (a.is_tensor()) return literal_with(b, a.as_tensor().dtype());
  if (b.is_tensor()) return literal_with(a, b.as_tensor().dtype());
  return promote(natural_dtype(a), natural_dtype(b));
}

ir::Value* constant(const Type& type, double value, const Here& loc) {
  return builder_at(loc).constant(type, value);
}

ir::Value* constant_int(const Type& type, int64_t value, const Here& loc) {
  if (type.is_float()) return builder_at(loc).constant_float(type, static_cast<double>(value));
  return builder_at(loc).constant_int(type, value);
}

ir::Value* cast_to(ir::Value* v, DType dtype, const Here& loc) {
  if (v->type.dtype == dtype) return v;
  if (v->type.is_ptr)
    user_error(loc, "cast",
               "cannot convert a pointer (" + describe(v->type) + ") to " +
                   std::string(ir::dtype_name(dtype)));
  return builder_at(loc).create_value(ir::OpKind::Cast, {v}, v->type.with_dtype(dtype));
}

ir::Value* materialize(const Operand& x, DType dtype, std::string_view op, const Here& loc) {
  switch (x.kind()) {
    case Operand::Kind::Tensor:
      return cast_to(value_of(x.as_tensor(), op, loc), dtype, loc);
    case Operand::Kind::Float:
      if (dtype == DType::i1)
        return constant_int(Type::scalar(dtype), x.float_value() != 0.0 ? 1 : 0, loc);
      if (!ir::is_float(dtype))
        return constant_int(Type::scalar(dtype), static_cast<int64_t>(x.float_value()), loc);
      return constant(Type::scalar(dtype), x.float_value(), loc);
    case Operand::Kind::Bool:
    case Operand::Kind::Int: {
      Type t = Type::scalar(dtype);
      if (ir::is_float(dtype)) {
        double v = x.unsigned64() ? static_cast<double>(static_cast<uint64_t>(x.int_value()))
                                  : static_cast<double>(x.int_value());
        return constant(t, v, loc);
      }
      // Like a cast: any nonzero number is true.
      if (dtype == DType::i1) return constant_int(t, x.int_value() != 0 ? 1 : 0, loc);
      return constant_int(t, x.int_value(), loc);
    }
  }
  return nullptr;
}

void check_shape(const ir::Shape& shape, std::string_view op, const Here& loc) {
  for (int64_t d : shape) {
    if (d <= 0 || !std::has_single_bit(static_cast<uint64_t>(d)))
      user_error(loc, op,
                 "shape " + ir::shape_str(shape) + " has a dimension that is not a power of two (" +
                     std::to_string(d) + ")");
  }
  check_tile_size(shape, op, loc);
}

void check_tile_size(const ir::Shape& shape, std::string_view op, const Here& loc) {
  if (ir::capped_elements(shape) <= ir::kMaxTileElements) return;
  user_error(loc, op,
             "a tile of shape " + ir::shape_str(shape) + " is over the limit of " +
                 std::to_string(ir::kMaxTileElements) + " (2^20) elements per tile");
}

int normalize_axis(int axis, int rank, std::string_view op, const Here& loc) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    user_error(loc, op,
               "axis " + std::to_string(axis) + " is out of range for a rank-" +
                   std::to_string(rank) + " tile");
  return a;
}

ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, std::string_view op,
                           const Here& loc) {
  size_t rank = std::max(a.size(), b.size());
  ir::Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      user_error(
          loc, op,
          "shapes " + ir::shape_str(a) + " and " + ir::shape_str(b) + " are not broadcastable");
    out[i] = std::max(da, db);
  }
  check_tile_size(out, op, loc);
  return out;
}

ir::Value* broadcast_value(ir::Value* v, const ir::Shape& shape, std::string_view op,
                           const Here& loc) {
  const Type& t = v->type;
  if (t.shape == shape) return v;
  ir::Builder& b = builder_at(loc);
  if (!t.is_tile()) return b.create_value(ir::OpKind::Splat, {v}, t.with_shape(shape));
  ir::Shape common = broadcast_shapes(t.shape, shape, op, loc);
  if (common != shape)
    user_error(loc, op,
               "cannot broadcast shape " + ir::shape_str(t.shape) + " to " + ir::shape_str(shape));
  while (static_cast<size_t>(v->type.rank()) < shape.size()) {
    ir::Shape s = v->type.shape;
    s.insert(s.begin(), 1);
    v = b.create_value(ir::OpKind::ExpandDims, {v}, v->type.with_shape(s),
                       {{attr::kAxis, int64_t{0}}});
  }
  return b.create_value(ir::OpKind::Broadcast, {v}, v->type.with_shape(shape));
}

void broadcast_all(std::vector<ir::Value*>& values, std::string_view op, const Here& loc) {
  ir::Shape shape;
  for (ir::Value* v : values) shape = broadcast_shapes(shape, v->type.shape, op, loc);
  for (ir::Value*& v : values) v = broadcast_value(v, shape, op, loc);
}

ir::Value* require_scalar(const Operand& x, std::string_view op, std::string_view what,
                          const Here& loc) {
  ir::Value* v = value_of(x, op, loc);
  if (v->type.is_tile())
    user_error(loc, op,
               std::string(what) + " is a tile (" + describe(v->type) + ") but must be a scalar");
  return v;
}

ir::Value* index_value(const Operand& x, std::string_view op, const std::string& what,
                       const Here& loc) {
  ir::Value* v = require_scalar(x, op, what, loc);
  if (v->type.is_ptr || !ir::is_int(v->type.dtype) || v->type.dtype == DType::i1)
    user_error(loc, op, what + " has type " + v->type.str() + ", expected an integer scalar");
  return v;
}

DType index_dtype(const std::vector<ir::Value*>& values) {
  for (const ir::Value* v : values)
    if (ir::dtype_bytes(v->type.dtype) == 8 || v->type.dtype == DType::u32) return DType::i64;
  return DType::i32;
}

ir::Value* condition_value(const Operand& x, std::string_view op, const Here& loc) {
  ir::Value* v = require_scalar(x, op, "the condition", loc);
  if (v->type.is_ptr) user_error(loc, op, "the condition is a pointer (" + describe(v->type) + ")");
  if (v->type.dtype == DType::i1) return v;
  ir::Value* zero = constant_int(v->type, 0, loc);
  return builder_at(loc).create_value(ir::OpKind::CmpNe, {v, zero}, Type::scalar(DType::i1));
}

}  // namespace tessera::tl::detail
