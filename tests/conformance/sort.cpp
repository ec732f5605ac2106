/// \file tl::sort, tl::histogram and tl::gather. sort: every dtype along the last dimension of
/// 1-D and 2-D tiles (ascending and descending) and along the first, against a host run of
/// Triton's bitonic network (the same compares, so the same permutation: checked bit for bit,
/// NaN, -0 and +0 included), itself checked to give the sorted sequence where there is no NaN.
/// histogram: every integer dtype, values below 0, past the bins and past 2^32, with and
/// without a mask. gather: every dtype along both axes of 2-D tiles and of 1-D tiles, i32 and
/// i64 indices, some out of range (0 bits). Inputs are masked loads of n elements that are not
/// a multiple of the tile (the tail reads 0).
#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

// --- host reference of Triton's bitonic network -------------------------------------------------

/// `a > b` as the kernel compares elements of dtype `t` given by their bits (i1 as 0 < 1).
bool greater(DType t, uint64_t a, uint64_t b) {
  HostArray h(t, 2);
  h.set_bits(0, a);
  h.set_bits(1, b);
  if (ir::is_float(t)) return h.f(0) > h.f(1);  // false when either is NaN
  if (ir::is_unsigned_int(t) || t == DType::i1) return h.u(0) > h.u(1);
  return h.i(0) > h.i(1);
}

/// Triton's sort (standard.py) on one lane of 2^n_dims elements' bits: stages 1..n_dims of
/// compare-and-swap steps; pairs 2^(n_dims - 1 - i) apart swap where (left > right) differs
/// from the direction (alternating with bit `stage` of the index before the last stage).
void bitonic(DType t, std::vector<uint64_t>& v, bool descending) {
  int n_dims = 0;
  while ((size_t{1} << n_dims) < v.size()) ++n_dims;
  for (int stage = 1; stage <= n_dims; ++stage) {
    for (int i = n_dims - stage; i < n_dims; ++i) {
      const size_t d = size_t{1} << (n_dims - 1 - i);
      for (size_t f = 0; f < v.size(); ++f) {
        if (f & d) continue;
        const bool flip = stage < n_dims ? ((f >> stage) & 1) != 0 : descending;
        if (greater(t, v[f], v[f + d]) != flip) std::swap(v[f], v[f + d]);
      }
    }
  }
}

/// A float with a few specials: NaN, -0, +0, +-inf and repeated values.
void add_specials(Context& ctx, HostArray& a) {
  const DType t = a.dtype();
  if (!ir::is_float(t)) {  // repeated integers
    for (size_t i = 0; i + 1 < a.size(); i += 5) a.set_bits(i + 1, a.bits(i));
    return;
  }
  const double specials[] = {
      std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0, std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(), 1.5,  1.5};
  for (size_t i = 0; i < a.size(); ++i) {
    if (ctx.uniform_int(0, 3) == 0) a.set_f(i, specials[ctx.uniform_int(0, 6)]);
  }
}

/// A [R, N] tile (R = 0: a 1-D [N] tile) of the n first elements (the tail reads 0), sorted
/// along DIM, stored whole.
void sort_kernel(tl::pointer a, tl::pointer out, tl::i32 n, int R, int N, int DIM, bool DESC) {
  if (R == 0) {
    auto offs = tl::arange(0, N);
    tl::store(out + offs, tl::sort(tl::load(a + offs, offs < n, 0), DIM, DESC));
    return;
  }
  auto offs = tl::arange(0, R)[{tl::_, tl::None}] * N + tl::arange(0, N)[{tl::None, tl::_}];
  tl::store(out + offs, tl::sort(tl::load(a + offs, offs < n, 0), DIM, DESC));
}

struct SortShape {
  int rows, cols, dim, n;
  bool descending, specials;
};

void sort_case(Context& ctx, DType t, SortShape s) {
  auto k = TESSERA_KERNEL(sort_kernel, a, out, n, R, N, DIM, DESC);
  const int rows = std::max(s.rows, 1), total = rows * s.cols;
  HostArray a = ctx.random_full(t, total);
  if (s.specials) add_specials(ctx, a);
  DevArray da = ctx.upload(a), o = ctx.poisoned(t, total);
  k[{1}](da.buf, o.buf, s.n, s.rows, s.cols, s.dim, s.descending);
  // Lanes: rows of the [rows, cols] tile for the last dimension, columns for dim 0.
  const bool along_rows = s.rows == 0 || s.dim == 1 || s.dim == -1;
  const int lanes = along_rows ? rows : s.cols, len = along_rows ? s.cols : rows;
  auto flat = [&](int lane, int j) { return along_rows ? lane * s.cols + j : j * s.cols + lane; };
  HostArray want(t, total);
  for (int lane = 0; lane < lanes; ++lane) {
    std::vector<uint64_t> v(static_cast<size_t>(len));
    bool has_nan = false;
    for (int j = 0; j < len; ++j) {
      const int f = flat(lane, j);
      v[static_cast<size_t>(j)] = f < s.n ? a.bits(f) : 0;
      if (ir::is_float(t) && f < s.n && std::isnan(a.f(f))) has_nan = true;
    }
    bitonic(t, v, s.descending);
    for (int j = 0; j < len; ++j) want.set_bits(flat(lane, j), v[static_cast<size_t>(j)]);
    if (has_nan) continue;
    // The reference itself: without NaN the network gives the sorted sequence.
    for (int j = 0; j + 1 < len; ++j) {
      const uint64_t lo = v[static_cast<size_t>(j)], hi = v[static_cast<size_t>(j + 1)];
      ctx.expect(!(s.descending ? greater(t, hi, lo) : greater(t, lo, hi)),
                 "the host bitonic network left lane " + std::to_string(lane) + " unsorted at " +
                     std::to_string(j));
    }
  }
  ctx.check_exact("sort " + dname(t) + (s.descending ? " descending" : ""), ctx.download(o), want);
}

// --- histogram ---------------------------------------------------------------------------------

/// The histogram of the N first elements of `a` (MASKED: of the n first, by mask) into BINS.
void histogram_kernel(tl::pointer a, tl::ptr<int32_t> out, tl::i32 n, int N, int BINS,
                      bool MASKED) {
  auto offs = tl::arange(0, N);
  auto x = tl::load(a + offs, offs < n, 0);
  auto h = MASKED ? tl::histogram(x, BINS, offs < n) : tl::histogram(x, BINS);
  expect_dtype(h, DType::i32, "histogram");
  tl::store(out + tl::arange(0, BINS), h);
}

void histogram_case(Context& ctx, DType t, bool masked) {
  auto k = TESSERA_KERNEL(histogram_kernel, a, out, n, N, BINS, MASKED);
  const int block = 128, bins = 32, n = masked ? 100 : 77;
  HostArray a(t, block);
  const int64_t top = ir::dtype_bits(t) == 8 && !ir::is_unsigned_int(t) ? 127 : bins + 3;
  for (int i = 0; i < block; ++i) {
    if (ir::dtype_bits(t) == 64 && ctx.uniform_int(0, 7) == 0)
      a.set_int(i, (int64_t{1} << 32) + ctx.uniform_int(0, bins));  // low bits in range
    else
      a.set_int(i, ctx.uniform_int(-3, top));  // unsigned: -3..-1 wrap past the bins
  }
  DevArray da = ctx.upload(a);
  DevArray o = ctx.poisoned(DType::i32, bins);
  k[{1}](da.buf, o.buf, n, block, bins, masked);
  std::vector<int64_t> want(bins, 0);
  for (int i = 0; i < block; ++i) {
    // Unmasked, the tail past n reads 0 and counts in bin 0.
    const bool signed_t = ir::is_signed_int(t);
    if (i >= n) {
      if (!masked) ++want[0];
      continue;
    }
    if (signed_t ? (a.i(i) >= 0 && a.i(i) < bins) : a.u(i) < static_cast<uint64_t>(bins))
      ++want[static_cast<size_t>(signed_t ? a.i(i) : static_cast<int64_t>(a.u(i)))];
  }
  ctx.check_ints("histogram " + dname(t) + (masked ? " masked" : ""), ctx.download(o), want);
}

// --- gather ------------------------------------------------------------------------------------

/// out = gather(src, index, AXIS): src [R, C] (R = 0: a 1-D [C] tile) of the n first elements,
/// index [IR, IC] (1-D: [IC]) read whole.
void gather_kernel(tl::pointer src, tl::pointer index, tl::pointer out, tl::i32 n, int R, int C,
                   int IR, int IC, int AXIS) {
  if (R == 0) {
    auto s = tl::arange(0, C);
    auto i = tl::arange(0, IC);
    tl::store(out + i, tl::gather(tl::load(src + s, s < n, 0), tl::load(index + i), AXIS));
    return;
  }
  auto s = tl::arange(0, R)[{tl::_, tl::None}] * C + tl::arange(0, C)[{tl::None, tl::_}];
  auto i = tl::arange(0, IR)[{tl::_, tl::None}] * IC + tl::arange(0, IC)[{tl::None, tl::_}];
  tl::store(out + i, tl::gather(tl::load(src + s, s < n, 0), tl::load(index + i), AXIS));
}

struct GatherShape {
  int rows, cols, irows, icols, axis;
};

void gather_case(Context& ctx, DType t, DType it, GatherShape g) {
  auto k = TESSERA_KERNEL(gather_kernel, src, index, out, n, R, C, IR, IC, AXIS);
  const int rows = std::max(g.rows, 1), irows = std::max(g.irows, 1);
  const int total = rows * g.cols, itotal = irows * g.icols, n = total - 5;
  HostArray a = ctx.random_full(t, total);
  add_specials(ctx, a);
  const int ax = g.rows == 0 ? 0 : (g.axis < 0 ? g.axis + 2 : g.axis);
  const int extent = g.rows == 0 ? g.cols : (ax == 0 ? rows : g.cols);
  HostArray idx(it, itotal);
  for (int i = 0; i < itotal; ++i) {
    const int64_t r = ctx.uniform_int(0, 15);  // 1 in 16 outside [0, extent)
    idx.set_int(i, r == 0 ? -1 : r == 1 ? extent : ctx.uniform_int(0, extent - 1));
  }
  DevArray da = ctx.upload(a), di = ctx.upload(idx), o = ctx.poisoned(t, itotal);
  k[{1}](da.buf, di.buf, o.buf, n, g.rows, g.cols, g.irows, g.icols, g.axis);
  HostArray want(t, itotal);
  for (int f = 0; f < itotal; ++f) {
    const int r = f / g.icols, c = f % g.icols;
    const int64_t j = idx.i(f);
    uint64_t w = 0;
    if (j >= 0 && j < extent) {
      const int src = g.rows == 0 ? static_cast<int>(j)
                      : ax == 0   ? static_cast<int>(j) * g.cols + c
                                  : r * g.cols + static_cast<int>(j);
      w = src < n ? a.bits(src) : 0;
    }
    want.set_bits(f, w);
  }
  ctx.check_exact("gather " + dname(t) + " axis " + std::to_string(g.axis), ctx.download(o), want);
}

}  // namespace

void register_sort(std::vector<Case>& out) {
  for (DType t : kAllDTypes) {
    out.push_back({"sort/1d/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { sort_case(ctx, t, {0, 64, -1, 45, false, true}); }});
    out.push_back({"sort/rows_descending/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { sort_case(ctx, t, {4, 32, 1, 100, true, true}); }});
  }
  for (DType t : {DType::i8, DType::u32, DType::i64, DType::f16, DType::f32}) {
    out.push_back({"sort/dim0/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { sort_case(ctx, t, {16, 4, 0, 61, false, false}); }});
  }
  for (DType t : kFloatDTypes) {  // without specials: the plain sorted sequence
    out.push_back({"sort/plain/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { sort_case(ctx, t, {2, 16, -1, 29, false, false}); }});
  }
  for (DType t : kIntDTypes) {
    for (bool masked : {false, true}) {
      out.push_back({std::string("histogram/") + (masked ? "masked/" : "all/") + dname(t),
                     needs_of({t}), "",
                     [t, masked](Context& ctx) { histogram_case(ctx, t, masked); }});
    }
  }
  for (DType t : kAllDTypes) {
    out.push_back({"gather/axis0/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { gather_case(ctx, t, DType::i32, {8, 16, 4, 16, 0}); }});
    out.push_back({"gather/axis1/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { gather_case(ctx, t, DType::i32, {8, 16, 8, 32, -1}); }});
  }
  for (DType t : {DType::f32, DType::i16}) {
    out.push_back({"gather/1d_i64_index/" + dname(t), needs_of({t, DType::i64}), "",
                   [t](Context& ctx) { gather_case(ctx, t, DType::i64, {0, 32, 0, 64, 0}); }});
  }
}

}  // namespace tessera::conformance
