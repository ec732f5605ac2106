/// \file Scans: cumsum and cumprod along either axis, forward and reverse, with Triton's
/// accumulation dtypes; custom associative scans (a linear recurrence over a tuple, a running
/// maximum with its index, the non-commutative "first element" in both directions); num_warps.
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/kernel_util.h"

namespace tessera::conformance {
namespace {

void scan_kernel(tl::pointer x, tl::pointer out, bool PROD, int AXIS, bool REVERSE,
                 tl::DType EXPECT, int M, int N) {
  std::vector<int64_t> shape = {M};
  if (N) shape.push_back(N);
  auto t = tl::load(x + offsets(shape));
  auto r = PROD ? tl::cumprod(t, AXIS, REVERSE) : tl::cumsum(t, AXIS, REVERSE);
  expect_dtype(r, EXPECT, "the scan's dtype");
  tl::store(out + offsets(shape), r);
}

/// Prefix sums (or products) along `axis` of an [M, N] (or [M]) array, with sum |x| scales.
void reference(const HostArray& x, int M, int N, int axis, bool prod, bool reverse,
               HostArray& iwant, std::vector<double>& fwant, std::vector<double>& scale) {
  const int rows = N ? M : 1, cols = N ? N : M;
  const int len = (axis == 0 && N) ? M : cols, lines = (axis == 0 && N) ? cols : rows;
  fwant.assign(x.size(), 0);
  scale.assign(x.size(), 0);
  for (int l = 0; l < lines; ++l) {
    double acc = prod ? 1 : 0, mag = 0;
    uint64_t iacc = prod ? 1 : 0;
    for (int s = 0; s < len; ++s) {
      const int j = reverse ? len - 1 - s : s;
      const size_t e =
          (axis == 0 && N) ? static_cast<size_t>(j) * cols + l : static_cast<size_t>(l) * cols + j;
      acc = prod ? acc * x.f(e) : acc + x.f(e);
      mag += std::fabs(x.f(e));
      iacc = prod ? iacc * static_cast<uint64_t>(x.i(e)) : iacc + static_cast<uint64_t>(x.i(e));
      fwant[e] = acc, scale[e] = prod ? std::fabs(acc) : mag;
      iwant.set_int(e, static_cast<int64_t>(iacc));
    }
  }
}

DType scan_dtype(bool prod, DType t) {
  if (prod) return t == DType::bf16 ? DType::f32 : t;  // Triton's cumprod widens bf16 only
  switch (t) {
    case DType::i8:
    case DType::i16:
      return DType::i32;
    case DType::u8:
    case DType::u16:
      return DType::u32;
    case DType::f16:
    case DType::bf16:
      return DType::f32;
    default:
      return t;
  }
}

void run_scan(Context& ctx, DType t, int M, int N, int axis, bool prod, bool reverse,
              int warps = 4) {
  auto k = TESSERA_KERNEL(scan_kernel, x, out, PROD, AXIS, REVERSE, EXPECT, M, N);
  const int64_t n = static_cast<int64_t>(M) * (N ? N : 1);
  const DType rt = scan_dtype(prod, t);
  HostArray x = prod ? (ir::is_float(t) ? ctx.random(t, n, 0.8, 1.25) : ctx.random(t, n, -2, 2))
                     : (ir::is_float(t) ? ctx.random(t, n, -1, 1) : ctx.random_full(t, n));
  HostArray iwant(rt, n);
  std::vector<double> fwant, scale;
  reference(x, M, N, axis, prod, reverse, iwant, fwant, scale);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(rt, n);
  k[{1, {.num_warps = warps}}](dx.buf, o.buf, prod, axis, reverse, rt, M, N);
  const std::string what = std::string(prod ? "cumprod " : "cumsum ") + dname(t) + " [" +
                           std::to_string(M) + (N ? ", " + std::to_string(N) : "") + "] axis " +
                           std::to_string(axis) + (reverse ? " reverse" : "") + " num_warps " +
                           std::to_string(warps);
  if (!ir::is_float(rt)) return ctx.check_exact(what, ctx.download(o), iwant);
  const int len = (axis == 0 && N) ? M : (N ? N : M);
  ctx.check_close(what, ctx.download(o), fwant,
                  prod ? tol::product(rt, len) : tol::sum(rt, rt, len), &scale);
}

void recurrence_kernel(tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> out, int N) {
  auto offs = tl::arange(0, N);
  auto r =
      tl::associative_scan({tl::load(a + offs), tl::load(b + offs)}, 0,
                           [](const std::vector<tl::tensor>& l, const std::vector<tl::tensor>& r) {
                             // (a1, b1) then (a2, b2): h -> a2 * (a1 * h + b1) + b2
                             return std::vector<tl::tensor>{l[0] * r[0], r[0] * l[1] + r[1]};
                           });
  tl::store(out + offs, r[1]);
}

void cummax_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int N) {
  auto offs = tl::arange(0, N);
  auto r =
      tl::associative_scan({tl::load(x + offs), offs}, 0,
                           [](const std::vector<tl::tensor>& l, const std::vector<tl::tensor>& r) {
                             auto take_r = r[0] > l[0];
                             return std::vector<tl::tensor>{tl::where(take_r, r[0], l[0]),
                                                            tl::where(take_r, r[1], l[1])};
                           });
  tl::store(out + offs, r[0]);
  tl::store(out + N + offs, r[1]);
}

void first_kernel(tl::ptr<float> x, tl::ptr<float> out, bool REVERSE, int M, int N) {
  auto t = tl::load(x + offsets({M, N}));
  auto r =
      tl::associative_scan(t, 1, [](const tl::tensor& l, const tl::tensor&) { return l; }, REVERSE);
  tl::store(out + offsets({M, N}), r);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"scan/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

namespace {

void cumsum_1d_case(Context& ctx) {
  for (DType t : {DType::f32, DType::i32, DType::i8, DType::f16, DType::u16})
    run_scan(ctx, t, 256, 0, 0, false, false);
}

void cumprod_case(Context& ctx) {
  for (DType t : {DType::f32, DType::i32, DType::f64}) {
    run_scan(ctx, t, 64, 0, 0, true, false);
    run_scan(ctx, t, 8, 16, 1, true, true);
  }
}

void linear_recurrence_case(Context& ctx) {
  auto k = TESSERA_KERNEL(recurrence_kernel, a, b, out, N);
  const int N = 128;
  HostArray a = ctx.random(DType::f32, N, 0.5, 1.0), b = ctx.random(DType::f32, N, -1, 1);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f32, N);
  k[{1}](da.buf, db.buf, o.buf, N);
  std::vector<double> want, scale;
  double h = 0, mag = 0;
  for (int i = 0; i < N; ++i) {
    h = a.f(i) * h + b.f(i), mag = a.f(i) * mag + std::fabs(b.f(i));
    want.push_back(h), scale.push_back(mag);
  }
  ctx.check_close("h = a * h + b", ctx.download(o), want, tol::sum(DType::f32, DType::f32, 2 * N),
                  &scale);
}

void cummax_with_index_case(Context& ctx) {
  auto k = TESSERA_KERNEL(cummax_kernel, x, out, N);
  const int N = 256;
  HostArray x = ctx.random(DType::i32, N, -50, 50);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i32, 2 * N);
  k[{1}](dx.buf, o.buf, N);
  std::vector<int64_t> want(2 * N);
  int best = 0;
  for (int i = 0; i < N; ++i) {
    if (x.i(i) > x.i(best)) best = i;
    want[i] = x.i(best), want[N + i] = best;
  }
  ctx.check_ints("running max and its first index", ctx.download(o), want);
}

}  // namespace

void register_scan(std::vector<Case>& out) {
  add(out, "cumsum_1d", needs_of({DType::i8, DType::f16, DType::u16}), cumsum_1d_case);
  for (int axis : {0, 1}) {
    for (bool reverse : {false, true}) {
      add(out, "cumsum_2d/axis" + std::to_string(axis) + (reverse ? "_reverse" : ""),
          needs_of({DType::i64}), [axis, reverse](Context& ctx) {
            for (DType t : {DType::f32, DType::i32, DType::i64})
              run_scan(ctx, t, 16, 32, axis, false, reverse);
          });
    }
  }
  add(out, "cumprod", needs_of({DType::f64}), cumprod_case);
  // One case per num_warps (see plumbing/num_warps_*: 1 and 16 warps may not fit a device).
  for (int w : {1, 2, 4, 8, 16}) {
    const std::string maybe = w == 16  ? "512 threads per program"
                              : w == 1 ? "32 threads per program"
                                       : "";
    out.push_back({"scan/num_warps_" + std::to_string(w), {}, maybe, [w](Context& ctx) {
                     run_scan(ctx, DType::f32, 32, 64, 1, false, false, w);
                     run_scan(ctx, DType::i32, 32, 64, 0, false, true, w);
                   }});
  }
  add(out, "linear_recurrence", {}, linear_recurrence_case);
  add(out, "cummax_with_index", {}, cummax_with_index_case);
  for (bool reverse : {false, true}) {
    add(out, std::string("first_element") + (reverse ? "_reverse" : ""), {},
        [reverse](Context& ctx) {
          // combine(l, r) = l: the left operand is the lower index going forward and the carry
          // (the higher indices) in reverse, so every element becomes the row's first (last).
          auto k = TESSERA_KERNEL(first_kernel, x, out, REVERSE, M, N);
          const int M = 4, N = 32;
          HostArray x = ctx.random(DType::f32, M * N, -9, 9), want(DType::f32, M * N);
          DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, M * N);
          k[{1}](dx.buf, o.buf, reverse, M, N);
          for (int r = 0; r < M; ++r)
            for (int c = 0; c < N; ++c)
              want.set_bits(r * N + c, x.bits(r * N + (reverse ? N - 1 : 0)));
          ctx.check_exact("first element scan", ctx.download(o), want);
        });
  }
}

}  // namespace tessera::conformance
