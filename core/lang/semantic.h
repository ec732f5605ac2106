/// \file Internal: the typing rules of the kernel language (Triton's promotion, numpy
/// broadcasting, weakly typed literals) and small helpers shared by the op files.
#pragma once

#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "../ir/builder.h"
#include "../ir/ir.h"
#include "tensor.h"
#include "tracer.h"

namespace tessera::tl::detail {

/// The active tracer's builder, positioned at `loc`.
ir::Builder& builder_at(const Here& loc);
tensor wrap(ir::Value* v);

/// The value of a tensor operand; a user error for an undefined (empty) tensor.
ir::Value* value_of(const tensor& t, std::string_view op, const Here& loc);
ir::Value* value_of(const Operand& x, std::string_view op, const Here& loc);

/// Triton's promotion of two (strongly typed) dtypes.
DType promote(DType a, DType b);
/// The dtype a binary op computes in, given weakly typed literals.
DType computation_dtype(const Operand& a, const Operand& b, std::string_view op, const Here& loc);
/// A literal's own dtype when nothing else decides (i32/i64/u64, f32, i1).
DType natural_dtype(const Operand& literal);

/// The operand as a value of `dtype` (a constant for literals, a cast for tensors).
ir::Value* materialize(const Operand& x, DType dtype, std::string_view op, const Here& loc);
/// Converts a value's dtype (no-op when equal).
ir::Value* cast_to(ir::Value* v, DType dtype, const Here& loc);
/// A constant of `type` (scalar or tile) from a double or an int64.
ir::Value* constant(const ir::Type& type, double value, const Here& loc);
ir::Value* constant_int(const ir::Type& type, int64_t value, const Here& loc);

/// Numpy broadcasting of two shapes; a user error naming both shapes if they don't agree.
ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, std::string_view op,
                           const Here& loc);
/// Brings a value to `shape`: splat for scalars, expand_dims + broadcast for tiles.
ir::Value* broadcast_value(ir::Value* v, const ir::Shape& shape, std::string_view op,
                           const Here& loc);
/// Broadcasts the values to one common shape, in place.
void broadcast_all(std::vector<ir::Value*>& values, std::string_view op, const Here& loc);

/// Checks that every dimension is a positive power of two, and the tile size.
void check_shape(const ir::Shape& shape, std::string_view op, const Here& loc);
/// A user error if a tile of `shape` has more than ir::kMaxTileElements elements.
void check_tile_size(const ir::Shape& shape, std::string_view op, const Here& loc);
int normalize_axis(int axis, int rank, std::string_view op, const Here& loc);

/// A scalar operand used where a scalar is required (loop bounds, branch conditions): a user
/// error if it is a tile.
ir::Value* require_scalar(const Operand& x, std::string_view op, std::string_view what,
                          const Here& loc);
/// An integer scalar (a shape, stride or offset of a descriptor or block pointer); `what` names
/// it in the user error for anything else.
ir::Value* index_value(const Operand& x, std::string_view op, const std::string& what,
                       const Here& loc);
/// i64 if any of `values` needs more than i32 (a 64-bit integer, or u32), else i32.
DType index_dtype(const std::vector<ir::Value*>& values);
/// An i1 scalar condition (integers and floats compare != 0).
ir::Value* condition_value(const Operand& x, std::string_view op, const Here& loc);

std::string describe(const ir::Type& t);

/// \name Moving elements bit for bit (join, flip, sort, gather)
//@{
/// The unsigned integer dtype that holds the element bits of `t` (u8 for i1).
DType bits_dtype(DType t);
/// `x` as the unsigned integers of its bits (i1 as 0/1 in u8).
tensor as_bits(const tensor& x, const Here& loc);
/// The inverse of as_bits, for a tile whose dtype reductions may have widened.
tensor from_bits(const tensor& y, DType t, const Here& loc);
/// The value of `x`, a user error naming `op` for a pointer tile.
ir::Value* require_values(const tensor& x, std::string_view op, const Here& loc);
//@}

}  // namespace tessera::tl::detail
