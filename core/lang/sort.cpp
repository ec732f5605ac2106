/// \file tl::sort, tl::histogram and tl::gather composed of shape ops, comparisons, where and
/// the sum and xor_sum reductions: no target needs code of its own for them.
///
/// sort is Triton's bitonic network (triton/language/standard.py) step for step: the same
/// pairs are compared with the same `>` in the same order, so the result is the same
/// permutation of the input as Triton's, NaN and -0 included. Elements move by their bits
/// (xor of the pair), as tl::flip moves them.
#include <string>
#include <vector>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::as_bits;
using detail::from_bits;

int log2_exact(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

/// One compare-and-swap step of the network on the bits `y` of a [n_outer, 2^n_dims] tile:
/// the pairs lie `2^(n_dims - 1 - i)` apart (Triton's _compare_and_swap for dimension i). The
/// pair swaps where (left > right) differs from the direction: `order` 0 ascending, 1
/// descending, 2 alternating with bit `stage` of the element's index (Triton's flip).
tensor compare_and_swap(const tensor& y, DType t, int64_t n_outer, int n_dims, int i, int stage,
                        int order, const Here& loc) {
  const int64_t a = n_outer << i, b = int64_t{1} << (n_dims - 1 - i);
  const DType u = y.dtype();
  tensor view = reshape(y, {a, 2, b}, loc);                 // (A, 2, B)
  tensor pos = reshape(arange(0, 2, loc), {1, 2, 1}, loc);  // (1, 2, 1)
  tensor both = xor_sum(view, 1, true, loc).to(u, loc);     // (A, 1, B) left ^ right
  tensor left = xor_sum(where(Operand(pos, loc) == Operand(0, loc), view, 0, loc), 1, true, loc)
                    .to(u, loc);                           // (A, 1, B)
  tensor right = Operand(left, loc) ^ Operand(both, loc);  // (A, 1, B)
  // i1 compares as its 0/1 bits; every other dtype as itself (floats: IEEE `>`).
  tensor gt = t == DType::i1 ? Operand(left, loc) > Operand(right, loc)
                             : Operand(from_bits(left, t, loc), loc) >
                                   Operand(from_bits(right, t, loc), loc);  // (A, 1, B) i1
  tensor swap;
  if (order == 2) {
    // Bit `stage` of the flat index a * 2B + k * B + j is bit stage - (n_dims - i) of a.
    const int shift = stage - (n_dims - i);
    tensor flip = reshape((Operand(arange(0, a, loc), loc) >> Operand(shift, loc)) & 1, {a, 1, 1},
                          loc);  // (A, 1, 1) i32
    swap = (Operand(gt.to(DType::i32, loc), loc) ^ Operand(flip, loc)) != Operand(0, loc);
  } else {
    swap = order == 1 ? !gt : gt;
  }
  return Operand(view, loc) ^ Operand(where(swap, both, 0, loc), loc);  // (A, 2, B)
}

}  // namespace

tensor sort(const tensor& x, int dim, bool descending, Here loc) {
  ir::Value* v = detail::require_values(x, "sort", loc);
  if (!v->type.is_tile()) user_error(loc, "sort", "operand is a scalar (" + v->type.str() + ")");
  const int rank = v->type.rank();
  const int ax = detail::normalize_axis(dim, rank, "sort", loc);
  if (ax != rank - 1) {  // sort along the last dimension of the transposed tile
    std::vector<int64_t> order(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) order[static_cast<size_t>(d)] = d;
    std::swap(order[static_cast<size_t>(ax)], order.back());
    return permute(sort(permute(x, order, loc), -1, descending, loc), order, loc);
  }
  const Shape shape = v->type.shape;
  const int n_dims = log2_exact(shape.back());
  if (n_dims == 0) return x;
  const int64_t n_outer = v->type.numel() >> n_dims;
  const DType t = v->type.dtype;
  tensor y = as_bits(x, loc);
  // Bitonic stages 1..n_dims: the first n_dims - 1 build alternating runs, the last merges in
  // the asked direction (Triton's sort and _bitonic_merge).
  for (int stage = 1; stage <= n_dims; ++stage) {
    const int order = stage < n_dims ? 2 : (descending ? 1 : 0);
    for (int k = 0; k < stage; ++k)
      y = compare_and_swap(y, t, n_outer, n_dims, k + n_dims - stage, stage, order, loc);
    y = reshape(y, shape, loc);
  }
  return from_bits(y, t, loc);
}

namespace {

tensor histogram_impl(const tensor& x, int64_t num_bins, const tensor* mask, const Here& loc) {
  ir::Value* v = detail::value_of(x, "histogram", loc);
  if (v->type.rank() != 1 || !v->type.is_int() || v->type.dtype == DType::i1)
    user_error(loc, "histogram", "needs a 1-D tile of integers, got " + v->type.str());
  if (num_bins < 1 || (num_bins & (num_bins - 1)) != 0)
    user_error(loc, "histogram",
               "num_bins must be a power of two (a tile size), got " + std::to_string(num_bins));
  const int64_t n = v->type.shape[0];
  detail::check_tile_size({n, num_bins}, "histogram", loc);
  tensor xs = expand_dims(x, 1, loc);                                         // (N, 1)
  tensor bins = expand_dims(arange(0, num_bins, loc), 0, loc);                // (1, BINS)
  tensor hit = (Operand(xs, loc) == Operand(bins, loc)).to(DType::i32, loc);  // (N, BINS)
  if (mask) {
    ir::Value* m = detail::value_of(*mask, "histogram", loc);
    if (m->type.is_ptr || m->type.dtype != DType::i1 ||
        (m->type.is_tile() && m->type.shape != v->type.shape))
      user_error(loc, "histogram",
                 "the mask must be an i1 scalar or a tile of the input's shape " +
                     ir::shape_str(v->type.shape) + ", got " + m->type.str());
    tensor me = m->type.is_tile() ? expand_dims(*mask, 1, loc) : *mask;  // (N, 1)
    hit = where(me, hit, 0, loc);
  }
  return sum(hit, 0, false, loc);  // (BINS) i32
}

}  // namespace

tensor histogram(const tensor& x, int64_t num_bins, Here loc) {
  return histogram_impl(x, num_bins, nullptr, loc);
}

tensor histogram(const tensor& x, int64_t num_bins, const tensor& mask, Here loc) {
  return histogram_impl(x, num_bins, &mask, loc);
}

tensor gather(const tensor& src, const tensor& index, int axis, Here loc) {
  ir::Value* vs = detail::require_values(src, "gather", loc);
  ir::Value* vi = detail::value_of(index, "gather", loc);
  if (!vs->type.is_tile()) user_error(loc, "gather", "src is a scalar (" + vs->type.str() + ")");
  if (!vi->type.is_int() || vi->type.dtype == DType::i1)
    user_error(loc, "gather", "index must be a tile of integers, got " + vi->type.str());
  const int rank = vs->type.rank();
  if (vi->type.rank() != rank)
    user_error(
        loc, "gather",
        "index " + vi->type.str() + " and src " + vs->type.str() + " must have the same rank");
  const int ax = detail::normalize_axis(axis, rank, "gather", loc);
  const Shape& ss = vs->type.shape;
  const Shape& is = vi->type.shape;
  for (int d = 0; d < rank; ++d) {
    if (d != ax && ss[static_cast<size_t>(d)] != is[static_cast<size_t>(d)])
      user_error(loc, "gather",
                 "index " + ir::shape_str(is) + " and src " + ir::shape_str(ss) +
                     " differ outside axis " + std::to_string(ax));
  }
  const int64_t n = ss[static_cast<size_t>(ax)];
  Shape wide = is;  // index's shape with src's axis inserted after `ax`
  wide.insert(wide.begin() + ax + 1, n);
  detail::check_tile_size(wide, "gather", loc);
  tensor bits = expand_dims(as_bits(src, loc), ax, loc);  // src with a 1 at ax
  tensor idx = expand_dims(index, ax + 1, loc);           // index with a 1 at ax + 1
  Shape lane(static_cast<size_t>(rank + 1), 1);
  lane[static_cast<size_t>(ax + 1)] = n;
  tensor pos = reshape(arange(0, n, loc), lane, loc);
  tensor hit = Operand(idx, loc) == Operand(pos, loc);  // wide, one true per row (in range)
  tensor picked = xor_sum(where(hit, bits, 0, loc), ax + 1, false, loc);  // index's shape
  return from_bits(picked, vs->type.dtype, loc);
}

}  // namespace tessera::tl
