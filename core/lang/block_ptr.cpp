/// \file Block pointers (Triton's tl.make_block_ptr, tl.advance and their loads and stores),
/// composed as tiles of pointers with boundary masks: base + sum over d of
/// (offset_d + arange(block_d)) * stride_d, masked by 0 <= offset_d + i_d < shape_d along the
/// checked dimensions. No op of their own, so every target runs them.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::index_dtype;
using detail::index_value;

/// One integer scalar per dimension, or a user error naming the list.
std::vector<ir::Value*> index_list(std::initializer_list<Operand> xs, size_t rank,
                                   std::string_view op, const std::string& what, const Here& loc) {
  if (xs.size() != rank)
    user_error(loc, op,
               what + " has " + std::to_string(xs.size()) + " entries; the block pointer has " +
                   std::to_string(rank) + " dimensions");
  std::vector<ir::Value*> out;
  for (const Operand& x : xs)
    out.push_back(index_value(x, op, what + "[" + std::to_string(out.size()) + "]", loc));
  return out;
}

/// A user error unless every dimension of `checked` is one of the `rank` dimensions.
void check_dims(const std::vector<int>& checked, size_t rank, std::string_view op,
                const Here& loc) {
  for (int d : checked) {
    if (d < 0 || static_cast<size_t>(d) >= rank)
      user_error(loc, op,
                 "boundary_check names dimension " + std::to_string(d) +
                     " of a block pointer with " + std::to_string(rank) + " dimensions");
  }
}

}  // namespace

block_ptr& block_ptr::operator=(const block_ptr& o) {
  if (&o == this) return *this;
  if (o.block_ != block_ || o.dims_.size() != dims_.size())
    user_error(Here::current(), "block_ptr",
               "assigning a block pointer of block shape " + ir::shape_str(o.block_) +
                   " to one of block shape " + ir::shape_str(block_));
  // Element-wise, so that inside tl::range and tl::if_ each tensor is a carried variable.
  base_ = o.base_;
  for (size_t d = 0; d < dims_.size(); ++d) {
    dims_[d] = o.dims_[d];
    strides_[d] = o.strides_[d];
    offsets_[d] = o.offsets_[d];
  }
  order_ = o.order_;
  return *this;
}

block_ptr make_block_ptr(const tensor& base, std::initializer_list<Operand> shape,
                         std::initializer_list<Operand> strides,
                         std::initializer_list<Operand> offsets, const Shape& block_shape,
                         const std::vector<int64_t>& order, Here loc) {
  constexpr std::string_view op = "make_block_ptr";
  ir::Value* p = detail::value_of(base, op, loc);
  if (!p->type.is_ptr || p->type.is_tile())
    user_error(loc, op, "the base has type " + p->type.str() + ", expected one pointer");
  const size_t rank = block_shape.size();
  if (rank == 0) user_error(loc, op, "block_shape is empty");
  detail::check_shape(block_shape, op, loc);
  std::vector<ir::Value*> dims = index_list(shape, rank, op, "shape", loc);
  std::vector<ir::Value*> strs = index_list(strides, rank, op, "strides", loc);
  std::vector<ir::Value*> offs = index_list(offsets, rank, op, "offsets", loc);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    user_error(loc, op,
               "order " + ir::shape_str(order) + " is not a permutation of the " +
                   std::to_string(rank) + " dimensions");
  std::vector<ir::Value*> all = dims;
  all.insert(all.end(), strs.begin(), strs.end());
  all.insert(all.end(), offs.begin(), offs.end());
  const DType index = index_dtype(all);
  block_ptr b;
  b.base_ = base;
  for (size_t d = 0; d < rank; ++d) {
    b.dims_.push_back(detail::wrap(detail::cast_to(dims[d], index, loc)));
    b.strides_.push_back(detail::wrap(detail::cast_to(strs[d], index, loc)));
    b.offsets_.push_back(detail::wrap(detail::cast_to(offs[d], index, loc)));
  }
  b.block_ = block_shape;
  b.order_ = order;
  return b;
}

block_ptr advance(const block_ptr& p, std::initializer_list<Operand> offsets, Here loc) {
  std::vector<ir::Value*> offs = index_list(offsets, p.block_.size(), "advance", "offsets", loc);
  block_ptr out = p;
  for (size_t d = 0; d < offs.size(); ++d) {
    const DType index = p.offsets_[d].dtype();
    if (index == DType::i32 && index_dtype({offs[d]}) == DType::i64)
      user_error(loc, "advance",
                 "offsets[" + std::to_string(d) + "] has type " + offs[d]->type.str() +
                     " but the block pointer computes in i32: give make_block_ptr a 64-bit "
                     "shape, stride or offset");
    out.offsets_[d] = Operand(p.offsets_[d], loc) +
                      Operand(detail::wrap(detail::cast_to(offs[d], index, loc)), loc);
  }
  return out;
}

tensor block_ptr::pointers(const std::vector<int>& checked, tensor* mask, std::string_view op,
                           const Here& loc) const {
  const size_t rank = block_.size();
  check_dims(checked, rank, op, loc);
  tensor offset;  // (block) in the index dtype
  for (size_t d = 0; d < rank; ++d) {
    const DType index = offsets_[d].dtype();
    Shape lane(rank, 1);
    lane[d] = block_[d];
    tensor i = reshape(arange(0, block_[d], loc).to(index, loc), lane, loc);
    tensor at = Operand(offsets_[d], loc) + Operand(i, loc);  // (1, .., block_d, .., 1)
    tensor term = Operand(at, loc) * Operand(strides_[d], loc);
    offset = d == 0 ? term : Operand(offset, loc) + Operand(term, loc);
    if (mask && std::find(checked.begin(), checked.end(), static_cast<int>(d)) != checked.end()) {
      tensor in =
          (Operand(at, loc) >= Operand(0, loc)) & (Operand(at, loc) < Operand(dims_[d], loc));
      *mask = mask->defined() ? Operand(*mask, loc) & Operand(in, loc) : in;
    }
  }
  offset = broadcast_to(offset, block_, loc);
  if (mask && mask->defined()) *mask = broadcast_to(*mask, block_, loc);
  return Operand(base_, loc) + Operand(offset, loc);
}

tensor load(const block_ptr& p, const std::vector<int>& boundary_check, PaddingOption padding,
            Here loc) {
  const DType t = p.base_.dtype();
  if (padding == PaddingOption::Nan && !ir::is_float(t))
    user_error(loc, "load",
               "padding_option nan needs a floating-point pointee, the block pointer's is " +
                   std::string(ir::dtype_name(t)));
  tensor mask;
  tensor ptrs = p.pointers(boundary_check, &mask, "load", loc);
  if (!mask.defined()) return load(ptrs, loc);
  if (padding == PaddingOption::Nan)
    return load(ptrs, mask, Operand(std::numeric_limits<double>::quiet_NaN(), loc), {}, loc);
  return load(ptrs, mask, Operand(0, loc), {}, loc);
}

void store(const block_ptr& p, const Operand& value, const std::vector<int>& boundary_check,
           Here loc) {
  tensor mask;
  tensor ptrs = p.pointers(boundary_check, &mask, "store", loc);
  if (!mask.defined()) return store(ptrs, value, loc);
  store(ptrs, value, mask, loc);
}

}  // namespace tessera::tl
