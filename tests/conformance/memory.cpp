/// \file Memory: masked loads with `other` for every dtype and tail sizes 0-4, masked stores that
/// leave masked-off elements untouched, stores of constants, strided, gathered and scattered
/// accesses, scalar pointers, broadcast and scalar masks, pointer arithmetic, cache hints and
/// the multiple_of / max_contiguous / assume hints (which must not change results).
#include <algorithm>
#include <numeric>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

void masked_load_kernel(tl::pointer x, tl::pointer out, tl::i32 n, tl::scalar other, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::load(x + offs, offs < n, other));  // every lane stored
}

void masked_store_kernel(tl::pointer x, tl::pointer out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + offs, tl::load(x + offs, m), m);
}

void constants_kernel(tl::pointer a, tl::pointer b, tl::pointer c, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  tl::store(a + offs, 7);
  tl::store(b + offs, 2.5f);
  tl::store(c + offs, true);
}

void gather_kernel(tl::pointer x, tl::ptr<int32_t> idx, tl::pointer out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto i = tl::load(idx + offs, m, 0);
  tl::store(out + offs, tl::load(x + i, m), m);
}

void scatter_kernel(tl::pointer x, tl::ptr<int64_t> idx, tl::pointer out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + tl::load(idx + offs, m, int64_t{0}), tl::load(x + offs, m), m);
}

void gather_rows_kernel(tl::ptr<float> x, tl::ptr<int32_t> rows, tl::ptr<float> out, tl::i32 ncols,
                        int R, int C) {
  auto r = tl::load(rows + tl::arange(0, R));
  auto c = tl::arange(0, C);
  auto m = c[{None, _}] < ncols;
  auto v = tl::load(x + r[{_, None}] * ncols + c[{None, _}], m, 0.0f);
  tl::store(out + tl::arange(0, R)[{_, None}] * C + c[{None, _}], v);
}

void strided_2d_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 sr, tl::i32 sc, tl::i32 rows,
                       tl::i32 cols, int BR, int BC) {
  auto r = tl::program_id(0) * BR + tl::arange(0, BR);
  auto c = tl::program_id(1) * BC + tl::arange(0, BC);
  auto m = (r[{_, None}] < rows) & (c[{None, _}] < cols);
  auto v = tl::load(x + r[{_, None}] * sr + c[{None, _}] * sc, m);
  tl::store(out + r[{_, None}] * cols + c[{None, _}], v, m);  // the transposed view, densely
}

/// Rows of x at a run-time stride (no masks): each row is contiguous, but only as aligned as the
/// stride makes it.
void row_stride_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 sr, int BR, int BC) {
  auto r = tl::arange(0, BR);
  auto c = tl::arange(0, BC);
  auto v = tl::load(x + r[{_, None}] * sr + c[{None, _}]);
  tl::store(out + r[{_, None}] * BC + c[{None, _}], v);
}

void same_pointer_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto v = tl::load(x + offs);
  tl::store(x + offs, v * 3 + 1);
  auto w = tl::load(x + offs);  // reads this program's own store, element by element
  auto rev = tl::program_id(0) * BLOCK + (BLOCK - 1) - tl::arange(0, BLOCK);
  // Storing w back into x at other positions would race with other lanes' loads of x (ops.h:
  // accesses at different tile positions are unordered, as in Triton): use another buffer.
  tl::store(out + rev, w);
}

void scalar_ptr_kernel(tl::ptr<double> x, tl::ptr<double> out, tl::i32 k) {
  auto a = tl::load(x + k);
  auto b = tl::load(x + 0);
  tl::store(out + tl::program_id(0), a * b);
  tl::store(out + 4 + tl::program_id(0), a, k > 2);  // scalar mask
}

void mask_forms_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::ptr<int32_t> rows_on, tl::i1 flag,
                       int M, int N) {
  auto r = tl::arange(0, M);
  auto c = tl::arange(0, N);
  auto ptrs = x + r[{_, None}] * N + c[{None, _}];
  auto on = tl::load(rows_on + r) != 0;  // [M], broadcast over columns
  auto a = tl::load(ptrs, on[{_, None}], -1.0f);
  auto b = tl::load(ptrs, flag, -2.0f);  // scalar runtime mask
  auto o = out + r[{_, None}] * N + c[{None, _}];
  tl::store(o, a);
  tl::store(o + M * N, b);
  tl::store(o + 2 * M * N, a + b, false);  // never stored
}

void tile_other_kernel(tl::ptr<int16_t> x, tl::ptr<int16_t> out, tl::i32 n, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto other = (offs * -3).to(tl::int16);
  tl::store(out + offs, tl::load(x + offs, offs < n, other));
}

void pointer_arith_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i64 base, int BLOCK) {
  auto p = x + base;                                // i64 scalar offset
  auto q = p - 3;                                   // negative step
  auto offs8 = tl::arange(0, BLOCK).to(tl::uint8);  // u8 offsets
  auto v = tl::load(q + offs8) + tl::load(p + tl::arange(0, BLOCK).to(tl::int64));
  auto o = out;
  for (auto i : tl::range(0, 2)) {
    o += BLOCK * i;  // pointer carried through a loop
  }
  tl::store(o + tl::arange(0, BLOCK), v);
}

void cache_hints_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int HINT, int BLOCK) {
  auto start = tl::multiple_of(tl::program_id(0) * BLOCK, BLOCK);
  auto offs = tl::max_contiguous(tl::multiple_of(start + tl::arange(0, BLOCK), BLOCK), BLOCK);
  tl::assume(n > 0);
  auto m = offs < n;
  const char* caches[] = {"", "ca", "cg", "cs", "cv"};
  tl::LoadOptions o{caches[HINT % 5], HINT == 5};
  tl::store(out + offs, tl::load(x + offs, m, 0.0f, o), m);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"memory/" + std::move(name), std::move(needs), "", std::move(body)});
}

void masked_store_case(Context& ctx) {
  auto k = TESSERA_KERNEL(masked_store_kernel, x, out, n, BLOCK);
  for (DType t : {DType::f32, DType::i8, DType::f16, DType::f64, DType::i1}) {
    for (int n : {0, 1, 31, 33, 67}) {
      const int cap = 96;
      HostArray x = ctx.random_full(t, cap);
      DevArray dx = ctx.upload(x), o = ctx.poisoned(t, cap);
      k[{cap / 32}](dx.buf, o.buf, n, 32);
      HostArray got = ctx.download(o), head(t, n), want(t, n);
      for (int i = 0; i < n; ++i) head.set_bits(i, got.bits(i)), want.set_bits(i, x.bits(i));
      ctx.check_exact(dname(t) + " n=" + std::to_string(n), head, want);
      ctx.check_untouched(dname(t) + " n=" + std::to_string(n), got, n, cap);
    }
  }
}

void mask_forms_case(Context& ctx) {
  auto k = TESSERA_KERNEL(mask_forms_kernel, x, out, rows_on, flag, M, N);
  const int M = 8, N = 4;
  HostArray x = ctx.random(DType::f32, M * N, -9, 9), on = ctx.random(DType::i32, M, 0, 1);
  DevArray dx = ctx.upload(x), don = ctx.upload(on);
  for (bool flag : {true, false}) {
    DevArray o = ctx.poisoned(DType::f32, 3 * M * N);
    k[{1}](dx.buf, o.buf, don.buf, flag, M, N);
    HostArray got = ctx.download(o);
    std::vector<double> want;
    for (int i = 0; i < M * N; ++i) want.push_back(on.i(i / N) ? x.f(i) : -1.0);
    for (int i = 0; i < M * N; ++i) want.push_back(flag ? x.f(i) : -2.0);
    HostArray head(DType::f32, 2 * M * N);
    for (int i = 0; i < 2 * M * N; ++i) head.set_bits(i, got.bits(i));
    ctx.check_close(std::string("row and scalar masks, flag=") + (flag ? "1" : "0"), head, want,
                    tol::kExact);
    ctx.check_untouched("store with mask false", got, 2 * M * N, 3 * M * N);
  }
}

void tile_other_case(Context& ctx) {
  auto k = TESSERA_KERNEL(tile_other_kernel, x, out, n, BLOCK);
  HostArray x = ctx.random_full(DType::i16, 32);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i16, 32);
  k[{1}](dx.buf, o.buf, 19, 32);
  std::vector<int64_t> want;
  for (int i = 0; i < 32; ++i) want.push_back(i < 19 ? x.i(i) : -3 * i);
  ctx.check_ints("per-lane other", ctx.download(o), want);
}

void gather_case(Context& ctx) {
  auto k = TESSERA_KERNEL(gather_kernel, x, idx, out, n, BLOCK);
  const int n = 333, size = 50;
  HostArray idx = ctx.random(DType::i32, n, 0, size - 1);  // duplicates on purpose
  for (DType t : {DType::f32, DType::i64, DType::f16}) {
    HostArray x = ctx.random_full(t, size);
    DevArray dx = ctx.upload(x), di = ctx.upload(idx), o = ctx.poisoned(t, n);
    k[{cdiv(n, 64)}](dx.buf, di.buf, o.buf, n, 64);
    HostArray want(t, n);
    for (int i = 0; i < n; ++i) want.set_bits(i, x.bits(idx.i(i)));
    ctx.check_exact("gather " + dname(t), ctx.download(o), want);
  }
}

void scatter_case(Context& ctx) {
  auto k = TESSERA_KERNEL(scatter_kernel, x, idx, out, n, BLOCK);
  const int n = 211;
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), ctx.rng());
  HostArray idx(DType::i64, n);
  for (int i = 0; i < n; ++i) idx.set_int(i, perm[i]);
  for (DType t : {DType::f32, DType::u8}) {
    HostArray x = ctx.random_full(t, n);
    DevArray dx = ctx.upload(x), di = ctx.upload(idx), o = ctx.poisoned(t, n);
    k[{cdiv(n, 32)}](dx.buf, di.buf, o.buf, n, 32);
    HostArray want(t, n);
    for (int i = 0; i < n; ++i) want.set_bits(perm[i], x.bits(i));
    ctx.check_exact("scatter " + dname(t), ctx.download(o), want);
  }
}

void gather_rows_case(Context& ctx) {
  auto k = TESSERA_KERNEL(gather_rows_kernel, x, rows, out, ncols, R, C);
  const int nrows = 13, ncols = 11, R = 8, C = 16;
  HostArray x = ctx.random(DType::f32, nrows * ncols, -9, 9),
            rows = ctx.random(DType::i32, R, 0, nrows - 1);
  DevArray dx = ctx.upload(x), dr = ctx.upload(rows), o = ctx.poisoned(DType::f32, R * C);
  k[{1}](dx.buf, dr.buf, o.buf, ncols, R, C);
  std::vector<double> want;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) want.push_back(c < ncols ? x.f(rows.i(r) * ncols + c) : 0.0);
  ctx.check_close("rows", ctx.download(o), want, tol::kExact);
}

void strided_2d_transpose_case(Context& ctx) {
  auto k = TESSERA_KERNEL(strided_2d_kernel, x, out, sr, sc, rows, cols, BR, BC);
  const int R = 37, C = 23;  // x is C x R row-major: reading it transposed
  HostArray x = ctx.random(DType::f32, R * C, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, R * C);
  k[{Grid(cdiv(R, 16), cdiv(C, 8))}](dx.buf, o.buf, 1, R, R, C, 16, 8);
  std::vector<double> want;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) want.push_back(x.f(c * R + r));
  ctx.check_close("transposed read", ctx.download(o), want, tol::kExact);
}

/// A row stride that is not a multiple of 4 elements: rows start 4-byte aligned only, so the
/// loads along a row may not be 16 bytes wide (axis info once claimed 16-byte rows here).
void row_stride_case(Context& ctx) {
  auto k = TESSERA_KERNEL(row_stride_kernel, x, out, sr, BR, BC);
  const int BR = 16, BC = 32;
  for (int sr : {33, 34, 36}) {
    HostArray x = ctx.random(DType::f32, BR * sr, -9, 9);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, BR * BC);
    k[{1}](dx.buf, o.buf, sr, BR, BC);
    std::vector<double> want;
    for (int r = 0; r < BR; ++r)
      for (int c = 0; c < BC; ++c) want.push_back(x.f(r * sr + c));
    ctx.check_close("rows at stride " + std::to_string(sr), ctx.download(o), want, tol::kExact);
  }
}

void same_pointer_case(Context& ctx) {
  auto k = TESSERA_KERNEL(same_pointer_kernel, x, out, BLOCK);
  const int BLOCK = 32, programs = 3;
  HostArray x = ctx.random(DType::i32, BLOCK * programs, -1000, 1000);
  DevArray dx = ctx.upload(x), dout = ctx.poisoned(DType::i32, BLOCK * programs);
  k[{programs}](dx.buf, dout.buf, BLOCK);
  std::vector<int64_t> want(BLOCK * programs);
  for (int p = 0; p < programs; ++p)
    for (int i = 0; i < BLOCK; ++i) want[p * BLOCK + (BLOCK - 1 - i)] = x.i(p * BLOCK + i) * 3 + 1;
  ctx.check_ints("x reversed after x = 3x + 1", ctx.download(dout), want);
}

void scalar_pointers_case(Context& ctx) {
  auto k = TESSERA_KERNEL(scalar_ptr_kernel, x, out, k);
  HostArray x = ctx.random(DType::f64, 8, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f64, 8);
  for (int kk = 1; kk <= 4; ++kk) k[{1}](dx.buf, Buffer<double>(o.buf).slice(kk - 1, 5), kk);
  HostArray got = ctx.download(o);
  std::vector<double> want = {x.f(1) * x.f(0), x.f(2) * x.f(0), x.f(3) * x.f(0), x.f(4) * x.f(0)};
  HostArray head(DType::f64, 4);
  for (int i = 0; i < 4; ++i) head.set_bits(i, got.bits(i));
  ctx.check_close("x[k] * x[0]", head, want, tol::arith(DType::f64));
  ctx.check_untouched("masked scalar stores (k = 1, 2)", got, 4, 6);
  HostArray stored(DType::f64, 2);
  for (int i = 0; i < 2; ++i) stored.set_bits(i, got.bits(6 + i));
  ctx.check_close("masked scalar stores (k = 3, 4)", stored, {x.f(3), x.f(4)}, tol::kExact);
}

void pointer_arith_case(Context& ctx) {
  auto k = TESSERA_KERNEL(pointer_arith_kernel, x, out, base, BLOCK);
  const int BLOCK = 16;
  HostArray x = ctx.random(DType::f32, 64, -9, 9);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 2 * BLOCK);
  k[{1}](dx.buf, o.buf, int64_t{20}, BLOCK);
  HostArray got = ctx.download(o), tail(DType::f32, BLOCK);
  std::vector<double> want;
  for (int i = 0; i < BLOCK; ++i) {
    want.push_back(static_cast<float>(x.f(17 + i) + x.f(20 + i)));
    tail.set_bits(i, got.bits(BLOCK + i));
  }
  ctx.check_close("x[17 + i] + x[20 + i] at out + BLOCK", tail, want, tol::arith(DType::f32));
  ctx.check_untouched("out[0, BLOCK)", got, 0, BLOCK);
}

void hints_and_cache_case(Context& ctx) {
  auto k = TESSERA_KERNEL(cache_hints_kernel, x, out, n, HINT, BLOCK);
  const int n = 200;
  HostArray x = ctx.random(DType::f32, n, -9, 9);
  DevArray dx = ctx.upload(x);
  for (int hint = 0; hint <= 5; ++hint) {
    DevArray o = ctx.poisoned(DType::f32, n);
    k[{cdiv(n, 64)}](dx.buf, o.buf, n, hint, 64);
    ctx.check_exact("hint " + std::to_string(hint), ctx.download(o), x);
  }
}

void register_masked(std::vector<Case>& out) {
  for (DType t : kAllDTypes) {
    add(out, "masked_load/" + dname(t), needs_of({t}), [t](Context& ctx) {
      auto k = TESSERA_KERNEL(masked_load_kernel, x, out, n, other, BLOCK);
      for (int block : {4, 32}) {
        for (int tail = 0; tail <= 4; ++tail) {
          const int n = (block == 4 ? 0 : 2 * block) + tail, programs = n / block + 1;
          HostArray x = ctx.random_full(t, std::max(n, 1)), other = ctx.random_full(t, 1);
          DevArray dx = ctx.upload(x), o = ctx.poisoned(t, programs * block);
          with_ctype(t, [&](auto tag) {
            k[{programs}](dx.buf, o.buf, n, host_value<decltype(tag)>(other, 0), block);
          });
          HostArray want(t, programs * block);
          for (int i = 0; i < programs * block; ++i)
            want.set_bits(i, i < n ? x.bits(i) : other.bits(0));
          ctx.check_exact("n=" + std::to_string(n) + " block=" + std::to_string(block),
                          ctx.download(o), want);
        }
      }
    });
  }
  add(out, "masked_store", needs_of({DType::i8, DType::f16, DType::f64}), masked_store_case);
  add(out, "store_constants",
      needs_of({DType::i8, DType::i16, DType::i64, DType::f16, DType::bf16, DType::f64}),
      [](Context& ctx) {
        auto k = TESSERA_KERNEL(constants_kernel, a, b, c, BLOCK);
        for (DType t : kAllDTypes) {
          DevArray a = ctx.poisoned(t, 16), b = ctx.poisoned(t, 16), c = ctx.poisoned(t, 16);
          k[{1}](a.buf, b.buf, c.buf, 16);
          HostArray wa(t, 16), wb(t, 16), wc(t, 16);
          for (int i = 0; i < 16; ++i) {
            wa.set_int(i, t == DType::i1 ? 1 : 7);  // 7 converted to i1 is true
            wb.set_f(i, t == DType::i1 ? 1.0 : ir::is_float(t) ? 2.5 : 2.0);
            wc.set_int(i, 1);
          }
          ctx.check_exact("7 -> " + dname(t), ctx.download(a), wa);
          ctx.check_exact("2.5 -> " + dname(t), ctx.download(b), wb);
          ctx.check_exact("true -> " + dname(t), ctx.download(c), wc);
        }
      });
  add(out, "mask_forms", {}, mask_forms_case);
  add(out, "tile_other", needs_of({DType::i16}), tile_other_case);
}

void register_addressing(std::vector<Case>& out) {
  add(out, "gather", needs_of({DType::i64, DType::f16}), gather_case);
  add(out, "scatter", needs_of({DType::i64, DType::u8}), scatter_case);
  add(out, "gather_rows", {}, gather_rows_case);
  add(out, "strided_2d_transpose", {}, strided_2d_transpose_case);
  add(out, "row_stride", {}, row_stride_case);
  add(out, "same_pointer", {}, same_pointer_case);
  add(out, "scalar_pointers", needs_of({DType::f64}), scalar_pointers_case);
  add(out, "pointer_arith", needs_of({DType::i64, DType::u8}), pointer_arith_case);
  add(out, "hints_and_cache", {}, hints_and_cache_case);
}

}  // namespace

void register_memory(std::vector<Case>& out) {
  register_masked(out);
  register_addressing(out);
}

}  // namespace tessera::conformance
