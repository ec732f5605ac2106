/// \file Shape ops: arange with offsets, full/zeros, broadcast, expand_dims and `[{_, None}]`,
/// reshape, trans/permute (2-D, 3-D, 4-D), cat, where with broadcasting, pointer and mixed
/// operands, and size-1 tiles. Layout moves are exact.
#include <algorithm>
#include <numeric>

#include "tests/conformance/framework.h"
#include "tests/conformance/kernel_util.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

void arange_kernel(tl::ptr<int32_t> out, int START, int N) {
  tl::store(out + tl::arange(0, N), tl::arange(START, START + N));
}

void full_kernel(tl::pointer out, tl::scalar v, tl::DType T, int M, int N) {
  auto a = tl::full({M, N}, v, T);
  auto b = tl::full({M, N}, 3, T);
  auto z = tl::zeros({M, N}, T);
  auto off = offsets({M, N});
  tl::store(out + off, a);
  tl::store(out + M * N + off, b);
  tl::store(out + 2 * M * N + off, z);
}

void broadcast_kernel(tl::ptr<float> x, tl::ptr<float> out, int M, int N) {
  auto row = tl::load(x + tl::arange(0, N)[{None, _}]);      // [1, N]
  auto col = tl::load(x + N + tl::arange(0, M)[{_, None}]);  // [M, 1]
  auto s = tl::load(x + (M + N));                            // scalar
  auto off = offsets({M, N});
  tl::store(out + off, tl::broadcast_to(row, {M, N}));
  tl::store(out + M * N + off, tl::broadcast_to(col, {M, N}));
  tl::store(out + 2 * M * N + off, tl::broadcast_to(s, {M, N}));
}

void expand_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int N) {
  auto v = tl::load(x + tl::arange(0, N));              // [N]
  auto a = tl::expand_dims(v, 0);                       // [1, N]
  auto b = tl::expand_dims(v, 1);                       // [N, 1]
  auto c = tl::expand_dims(tl::expand_dims(v, -1), 0);  // [1, N, 1]
  auto d = v[{None, _, None}];                          // [1, N, 1]
  auto i = tl::arange(0, N);
  // Every form, brought back to [N, N] by broadcasting against its transpose.
  tl::store(out + offsets({N, N}), a + b * 100);
  tl::store(out + N * N + i, tl::reshape(c, {N}) - tl::reshape(d, {N}));
  tl::store(out + N * N + N + offsets({1, N}), a);
}

void reshape_kernel(tl::ptr<float> x, tl::ptr<float> out, int M, int N) {
  auto t = tl::load(x + offsets({M, N}));  // [M, N]
  auto flat = tl::reshape(t, {M * N});
  auto swapped = tl::reshape(t, {N, M});
  auto three = tl::reshape(t, {2, M / 2, N});
  tl::store(out + tl::arange(0, M * N), flat);
  tl::store(out + M * N + offsets({N, M}), swapped);
  tl::store(out + 2 * M * N + offsets({2, M / 2, N}), three);
}

void permute_kernel(tl::pointer x, tl::pointer out, int A, int B, int C, int D, int O0, int O1,
                    int O2, int O3) {
  std::vector<int64_t> shape = {A, B, C, D}, order = {O0, O1, O2, O3};
  while (shape.size() > 2 && shape.back() == 0) shape.pop_back(), order.pop_back();
  auto t = tl::load(x + offsets(shape));
  auto p = shape.size() == 2 && order[0] == 1 ? tl::trans(t) : tl::permute(t, order);
  std::vector<int64_t> out_shape;
  for (int64_t o : order) out_shape.push_back(shape[o]);
  tl::store(out + offsets(out_shape), p);
}

void cat_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int AXIS, int M, int N) {
  auto a = tl::load(x + offsets({M, N}));
  auto b = tl::load(x + M * N + offsets({M, N}));
  auto c = tl::cat(a, b, AXIS);
  tl::store(
      out + offsets(AXIS == 0 ? std::vector<int64_t>{2 * M, N} : std::vector<int64_t>{M, 2 * N}),
      c);
}

void where_kernel(tl::ptr<float> x, tl::ptr<int32_t> c, tl::ptr<float> out, int M, int N) {
  auto cond = tl::load(c + tl::arange(0, M)[{_, None}]) != 0;  // [M, 1]
  auto a = tl::load(x + tl::arange(0, N)[{None, _}]);          // [1, N]
  tl::store(out + offsets({M, N}), tl::where(cond, a, -1.5f));
  tl::store(out + M * N + offsets({M, N}), tl::where(cond, 2.0f, a));
}

void where_ptr_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                      int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto m = offs < n;
  auto p = tl::where(offs % 3 == 0, x + offs, y + offs);
  tl::store(out + offs, tl::load(p, m), m);
}

void where_mixed_kernel(tl::pointer a, tl::pointer b, tl::pointer out, tl::DType EXPECT, int N) {
  auto offs = tl::arange(0, N);
  auto r = tl::where(offs % 2 == 0, tl::load(a + offs), tl::load(b + offs));
  expect_dtype(r, EXPECT, "where's promotion");
  tl::store(out + offs, r);
}

void size1_kernel(tl::ptr<float> x, tl::ptr<float> out) {
  auto v = tl::load(x + tl::arange(0, 1));  // [1]
  auto m = tl::load(x + offsets({1, 1}));   // [1, 1]
  tl::store(out + tl::arange(0, 1), v * 2.0f);
  tl::store(out + 1 + offsets({1, 1}), m + tl::expand_dims(v, 0));
  tl::store(out + 2, tl::sum(v, 0) + tl::max(tl::reshape(m, {1}), 0));
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"shape/" + std::move(name), std::move(needs), "", std::move(body)});
}

/// Reference permutation of a row-major tile.
HostArray permuted(const HostArray& in, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& order) {
  HostArray out(in.dtype(), in.size());
  std::vector<int64_t> out_shape;
  for (int64_t o : order) out_shape.push_back(shape[o]);
  const size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (size_t lin = 0; lin < in.size(); ++lin) {
    size_t r = lin;
    for (size_t d = rank; d-- > 0;) idx[d] = r % out_shape[d], r /= out_shape[d];
    size_t src = 0;  // out index i_d sits on input axis order[d]
    std::vector<int64_t> in_idx(rank);
    for (size_t d = 0; d < rank; ++d) in_idx[order[d]] = idx[d];
    for (size_t d = 0; d < rank; ++d) src = src * shape[d] + in_idx[d];
    out.set_bits(lin, in.bits(src));
  }
  return out;
}

}  // namespace

namespace {

void arange_offsets_case(Context& ctx) {
  auto k = TESSERA_KERNEL(arange_kernel, out, START, N);
  for (auto [start, n] : std::vector<std::pair<int, int>>{
           {0, 1}, {0, 128}, {5, 16}, {-16, 32}, {1000, 64}, {-7, 8}}) {
    DevArray o = ctx.poisoned(DType::i32, n);
    k[{1}](o.buf, start, n);
    std::vector<int64_t> want(n);
    std::iota(want.begin(), want.end(), start);
    ctx.check_ints("arange(" + std::to_string(start) + ", " + std::to_string(start + n) + ")",
                   ctx.download(o), want);
  }
}

void broadcast_to_case(Context& ctx) {
  auto k = TESSERA_KERNEL(broadcast_kernel, x, out, M, N);
  const int M = 8, N = 16;
  HostArray x = ctx.random(DType::f32, M + N + 1, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 3 * M * N);
  k[{1}](dx.buf, o.buf, M, N);
  HostArray want(DType::f32, 3 * M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      want.set_bits(i * N + j, x.bits(j));
      want.set_bits(M * N + i * N + j, x.bits(N + i));
      want.set_bits(2 * M * N + i * N + j, x.bits(M + N));
    }
  ctx.check_exact("broadcasts", ctx.download(o), want);
}

void expand_dims_case(Context& ctx) {
  auto k = TESSERA_KERNEL(expand_kernel, x, out, N);
  const int N = 16;
  HostArray x = ctx.random(DType::i32, N, -1000, 1000);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i32, N * N + 2 * N);
  k[{1}](dx.buf, o.buf, N);
  std::vector<int64_t> want;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) want.push_back(x.i(j) + x.i(i) * 100);
  for (int i = 0; i < N; ++i) want.push_back(0);
  for (int i = 0; i < N; ++i) want.push_back(x.i(i));
  ctx.check_ints("expand_dims forms", ctx.download(o), want);
}

void size1_tiles_case(Context& ctx) {
  auto k = TESSERA_KERNEL(size1_kernel, x, out);
  HostArray x = ctx.random(DType::f32, 1, -3, 3);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 3);
  k[{1}](dx.buf, o.buf);
  const float v = static_cast<float>(x.f(0));
  ctx.check_close("size-1 tiles", ctx.download(o), {2.0 * v, 2.0 * v, 2.0 * v}, tol::kExact);
}

void reshape_case(Context& ctx) {
  auto k = TESSERA_KERNEL(reshape_kernel, x, out, M, N);
  const int M = 8, N = 4;
  HostArray x = ctx.random(DType::f32, M * N, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 3 * M * N);
  k[{1}](dx.buf, o.buf, M, N);
  HostArray want(DType::f32, 3 * M * N);
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < M * N; ++i)
      want.set_bits(r * M * N + i, x.bits(i));  // row-major order kept
  ctx.check_exact("reshapes", ctx.download(o), want);
}

void where_broadcast_case(Context& ctx) {
  auto k = TESSERA_KERNEL(where_kernel, x, c, out, M, N);
  const int M = 8, N = 16;
  HostArray x = ctx.random(DType::f32, N, -9, 9), c = ctx.random(DType::i32, M, 0, 1);
  DevArray dx = ctx.upload(x), dc = ctx.upload(c), o = ctx.poisoned(DType::f32, 2 * M * N);
  k[{1}](dx.buf, dc.buf, o.buf, M, N);
  std::vector<double> want(2 * M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      want[i * N + j] = c.i(i) ? x.f(j) : -1.5;
      want[M * N + i * N + j] = c.i(i) ? 2.0 : x.f(j);
    }
  ctx.check_close("where", ctx.download(o), want, tol::kExact);
}

void where_pointers_case(Context& ctx) {
  auto k = TESSERA_KERNEL(where_ptr_kernel, x, y, out, n, BLOCK);
  const int n = 29;
  HostArray x = ctx.random(DType::f32, 32, -9, 9), y = ctx.random(DType::f32, 32, -9, 9);
  DevArray dx = ctx.upload(x), dy = ctx.upload(y), o = ctx.poisoned(DType::f32, 32);
  k[{1}](dx.buf, dy.buf, o.buf, n, 32);
  HostArray got = ctx.download(o);
  std::vector<double> want;
  for (int i = 0; i < n; ++i) want.push_back(i % 3 == 0 ? x.f(i) : y.f(i));
  HostArray head(DType::f32, n);
  for (int i = 0; i < n; ++i) head.set_bits(i, got.bits(i));
  ctx.check_close("load through where(ptr, ptr)", head, want, tol::kExact);
  ctx.check_untouched("tail", got, n, 32);
}

void where_promotion_case(Context& ctx) {
  auto k = TESSERA_KERNEL(where_mixed_kernel, a, b, out, EXPECT, N);
  const int N = 32;
  const std::pair<DType, DType> pairs[] = {{DType::i8, DType::f16},
                                           {DType::u8, DType::i32},
                                           {DType::f16, DType::bf16},
                                           {DType::i1, DType::i32}};
  for (auto [ta, tb] : pairs) {
    const DType r = ref::promote(ta, tb);
    HostArray a = ctx.random(ta, N, -100, 100), b = ctx.random(tb, N, -100, 100);
    DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(r, N);
    k[{1}](da.buf, db.buf, o.buf, r, N);
    HostArray want(r, N);
    for (int i = 0; i < N; ++i) want.set_bits(i, ref::convert_bits(i % 2 == 0 ? a : b, i, r));
    ctx.check_exact("where(" + dname(ta) + ", " + dname(tb) + ")", ctx.download(o), want);
  }
}

void register_construction(std::vector<Case>& out) {
  add(out, "arange_offsets", {}, arange_offsets_case);
  add(out, "full_zeros",
      needs_of({DType::i8, DType::i16, DType::i64, DType::f16, DType::bf16, DType::f64}),
      [](Context& ctx) {
        auto k = TESSERA_KERNEL(full_kernel, out, v, T, M, N);
        const int M = 4, N = 8;
        for (DType t : kAllDTypes) {
          HostArray v = ctx.random_full(t, 1, 4);
          DevArray o = ctx.poisoned(t, 3 * M * N);
          with_ctype(t, [&](auto tag) { k[{1}](o.buf, host_value<decltype(tag)>(v, 0), t, M, N); });
          HostArray want(t, 3 * M * N);
          for (int i = 0; i < M * N; ++i) {
            want.set_bits(i, v.bits(0));
            want.set_int(M * N + i, t == DType::i1 ? 1 : 3);  // literal 3 converted (i1: nonzero)
            want.set_int(2 * M * N + i, 0);
          }
          ctx.check_exact("full/zeros " + dname(t), ctx.download(o), want);
        }
      });
  add(out, "broadcast_to", {}, broadcast_to_case);
  add(out, "expand_dims", {}, expand_dims_case);
  add(out, "size1_tiles", {}, size1_tiles_case);
}

/// Every order of a 3-D tile, five of a 4-D one, or the given 2-D one, in four dtypes.
void run_permutes(Context& ctx, const std::vector<int64_t>& shape, std::vector<int64_t> given) {
  auto k = TESSERA_KERNEL(permute_kernel, x, out, A, B, C, D, O0, O1, O2, O3);
  std::vector<std::vector<int64_t>> orders;
  std::vector<int64_t> o(shape.size());
  std::iota(o.begin(), o.end(), 0);
  if (!given.empty()) {
    orders.push_back(given);
  } else {
    do orders.push_back(o);
    while (std::next_permutation(o.begin(), o.end()));
  }
  if (orders.size() > 8)
    orders = {{3, 2, 1, 0}, {0, 2, 1, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 0, 1, 2}};
  const int64_t n = ir::num_elements(shape);
  for (const auto& order : orders) {
    for (DType t : {DType::f32, DType::f16, DType::i8, DType::f64}) {
      HostArray x = ctx.random_full(t, n);
      DevArray dx = ctx.upload(x), out_buf = ctx.poisoned(t, n);
      std::vector<int> s(4, 0), ord(4, 0);
      for (size_t d = 0; d < shape.size(); ++d)
        s[d] = static_cast<int>(shape[d]), ord[d] = static_cast<int>(order[d]);
      k[{1}](dx.buf, out_buf.buf, s[0], s[1], s[2], s[3], ord[0], ord[1], ord[2], ord[3]);
      ctx.check_exact(dname(t) + " order " + ir::shape_str(order), ctx.download(out_buf),
                      permuted(x, shape, order));
    }
  }
}

void run_cat(Context& ctx, int axis) {
  auto k = TESSERA_KERNEL(cat_kernel, x, out, AXIS, M, N);
  const int M = 4, N = 8;
  HostArray x = ctx.random(DType::i32, 2 * M * N, -500, 500);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i32, 2 * M * N);
  k[{1}](dx.buf, o.buf, axis, M, N);
  std::vector<int64_t> want;
  if (axis == 0) {
    for (int i = 0; i < 2 * M * N; ++i) want.push_back(x.i(i));
  } else {
    for (int r = 0; r < M; ++r) {
      for (int c = 0; c < N; ++c) want.push_back(x.i(r * N + c));
      for (int c = 0; c < N; ++c) want.push_back(x.i(M * N + r * N + c));
    }
  }
  ctx.check_ints("cat", ctx.download(o), want);
}

void register_layout(std::vector<Case>& out) {
  add(out, "reshape", {}, reshape_case);
  const std::vector<Need> needs = needs_of({DType::f16, DType::i8, DType::f64});
  add(out, "trans_2d", needs, [](Context& ctx) { run_permutes(ctx, {16, 8}, {1, 0}); });
  add(out, "permute_3d", needs, [](Context& ctx) { run_permutes(ctx, {2, 4, 8}, {}); });
  add(out, "permute_4d", needs, [](Context& ctx) { run_permutes(ctx, {2, 4, 2, 8}, {}); });
  add(out, "cat_axis0", {}, [](Context& ctx) { run_cat(ctx, 0); });
  add(out, "cat_axis1", {}, [](Context& ctx) { run_cat(ctx, 1); });
}

void register_where(std::vector<Case>& out) {
  add(out, "where_broadcast", {}, where_broadcast_case);
  add(out, "where_pointers", {}, where_pointers_case);
  add(out, "where_promotion", needs_of({DType::i8, DType::f16, DType::bf16}), where_promotion_case);
}

}  // namespace

void register_shape(std::vector<Case>& out) {
  register_construction(out);
  register_layout(out);
  register_where(out);
}

}  // namespace tessera::conformance
