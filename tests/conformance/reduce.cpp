/// \file Reductions: sum, min, max, argmin, argmax (ties to the lowest index, NaN the extreme)
/// over every axis of 1-D, 2-D and 3-D tiles in several dtypes (with Triton's accumulation
/// dtypes for sums), keep_dims, negative axes, prod, xor_sum, masked rows, chained reductions,
/// and generic combines (Welford's mean and variance; an (value, index) argmax).
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/kernel_util.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

/// MinNan and MaxNan are tl::min/tl::max with PropagateNan::All; Min and Max the default
/// (Triton's: NaN elements ignored).
enum class RK { Sum, Min, Max, ArgMin, ArgMax, Prod, XorSum, MinNan, MaxNan };
const char* kind_name(RK k) {
  constexpr const char* kNames[] = {"sum",  "min",     "max",         "argmin",     "argmax",
                                    "prod", "xor_sum", "min_nan_all", "max_nan_all"};
  return kNames[static_cast<int>(k)];
}
bool is_min_max(RK k) {
  return k == RK::Min || k == RK::Max || k == RK::MinNan || k == RK::MaxNan;
}
bool is_max_like(RK k) {
  return k == RK::Max || k == RK::MaxNan || k == RK::ArgMax;
}

tl::tensor apply(RK k, const tl::tensor& t, int axis, bool keep) {
  switch (k) {
    case RK::Sum:
      return tl::sum(t, axis, keep);
    case RK::Min:
      return tl::min(t, axis, keep);
    case RK::Max:
      return tl::max(t, axis, keep);
    case RK::ArgMin:
      return tl::argmin(t, axis, keep);
    case RK::ArgMax:
      return tl::argmax(t, axis, keep);
    case RK::Prod:
      return tl::prod(t, axis, keep);
    case RK::XorSum:
      return tl::xor_sum(t, axis, keep);
    case RK::MinNan:
      return tl::min(t, axis, keep, tl::PropagateNan::All);
    case RK::MaxNan:
      return tl::max(t, axis, keep, tl::PropagateNan::All);
  }
  return t;
}

std::vector<int64_t> dims(int d0, int d1, int d2) {
  std::vector<int64_t> s = {d0};
  if (d1) s.push_back(d1);
  if (d2) s.push_back(d2);
  return s;
}

void reduce_kernel(tl::pointer x, tl::pointer out, RK KIND, int AXIS, bool KEEP, tl::DType EXPECT,
                   int D0, int D1, int D2) {
  const std::vector<int64_t> shape = dims(D0, D1, D2);
  auto r = apply(KIND, tl::load(x + offsets(shape)), AXIS, KEEP);
  expect_dtype(r, EXPECT, std::string("the dtype of ") + kind_name(KIND));
  if (r.rank() == 0) return tl::store(out, r);
  tl::store(out + offsets(r.shape()), r);
}

/// The accumulation dtype Triton gives sums: narrow integers in 32 bits, narrow floats in f32.
DType sum_dtype(DType t) {
  switch (t) {
    case DType::i1:
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

DType result_dtype(RK k, DType t) {
  if (k == RK::ArgMin || k == RK::ArgMax) return DType::i32;
  if (k == RK::Sum) return sum_dtype(t);
  if (k == RK::Prod && t == DType::i1) return DType::i32;
  if (is_min_max(k) && ir::dtype_bits(t) < 32)  // Triton's tl.max/tl.min widen narrow dtypes
    return ir::is_float(t) ? DType::f32 : DType::i32;
  return t;
}

/// Is a "more extreme" than b for argmax (max = true) or argmin? NaN is the extreme of both,
/// or (ignore_nan, tl::max/tl::min's default) below every number.
bool more_extreme(double a, double b, bool max, bool ignore_nan = false) {
  if (std::isnan(a) || std::isnan(b))
    return ignore_nan ? !std::isnan(a) : std::isnan(a) && !std::isnan(b);
  if (a == b)
    return max ? (!std::signbit(a) && std::signbit(b)) : (std::signbit(a) && !std::signbit(b));
  return max ? a > b : a < b;
}

/// Reference reduction of every line along `axis`; floats also get scale = sum |x|.
void reference(RK k, const HostArray& x, const std::vector<int64_t>& shape, int axis, DType rt,
               HostArray& want, std::vector<double>& fwant, std::vector<double>& scale) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t len = shape[axis];
  want = HostArray(rt, outer * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t r = o * inner + in;
      auto at = [&](int64_t j) { return (o * len + j) * inner + in; };
      double s = 0, mag = 0, pr = 1;
      uint64_t is = 0, ip = 1, ix = 0;
      int64_t best = 0;
      for (int64_t j = 0; j < len; ++j) {
        const size_t e = at(j);
        s += x.f(e), mag += std::fabs(x.f(e)), pr *= x.f(e);
        is += static_cast<uint64_t>(x.i(e)), ip *= static_cast<uint64_t>(x.i(e)),
            ix ^= static_cast<uint64_t>(x.i(e));
        const bool fl = ir::is_float(x.dtype());
        const bool better =
            fl ? more_extreme(x.f(e), x.f(at(best)), is_max_like(k), k == RK::Max || k == RK::Min)
            : is_max_like(k)
                ? (ir::is_signed_int(x.dtype()) ? x.i(e) > x.i(at(best)) : x.u(e) > x.u(at(best)))
                : (ir::is_signed_int(x.dtype()) ? x.i(e) < x.i(at(best)) : x.u(e) < x.u(at(best)));
        if (better) best = j;
      }
      const bool fl = ir::is_float(rt);
      switch (k) {
        case RK::Sum:
          fl ? want.set_f(r, s) : want.set_int(r, static_cast<int64_t>(is));
          break;
        case RK::Prod:
          fl ? want.set_f(r, pr) : want.set_int(r, static_cast<int64_t>(ip));
          break;
        case RK::XorSum:
          want.set_int(r, static_cast<int64_t>(ix));
          break;
        case RK::Min:
        case RK::Max:
        case RK::MinNan:
        case RK::MaxNan:
          if (rt == x.dtype())
            want.set_bits(r, x.bits(at(best)));
          else if (fl)
            want.set_f(r, x.f(at(best)));  // widened exactly (the sign of a zero kept)
          else
            want.set_int(r, ir::is_signed_int(x.dtype()) ? x.i(at(best))
                                                         : static_cast<int64_t>(x.u(at(best))));
          break;
        case RK::ArgMin:
        case RK::ArgMax:
          want.set_int(r, best);
          break;
      }
      fwant.push_back(k == RK::Prod ? pr : s);
      scale.push_back(k == RK::Prod ? std::fabs(pr) : mag);
    }
  }
}

/// Inputs with ties (few distinct values) so argmin/argmax must pick the lowest index.
HostArray reduce_inputs(Context& ctx, RK k, DType t, int64_t n) {
  const bool arg = k == RK::ArgMin || k == RK::ArgMax;
  if (k == RK::Prod) return ir::is_float(t) ? ctx.random(t, n, 0.5, 1.5) : ctx.random(t, n, -3, 3);
  if (arg || is_min_max(k)) {
    HostArray a = ctx.random(t, n, -4, 4);
    if (ir::is_float(t))
      for (int64_t i = 0; i < n; ++i) a.set_f(i, std::round(a.f(i)));  // ties
    return a;
  }
  return ir::is_float(t) ? ctx.random(t, n, -1, 1) : ctx.random_full(t, n);
}

void run_reduce(Context& ctx, RK k, DType t, const std::vector<int64_t>& shape, int axis,
                bool keep) {
  auto kern = TESSERA_KERNEL(reduce_kernel, x, out, KIND, AXIS, KEEP, EXPECT, D0, D1, D2);
  const int64_t n = ir::num_elements(shape);
  const int rank = static_cast<int>(shape.size());
  const int ax = axis < 0 ? axis + rank : axis;
  const DType rt = result_dtype(k, t);
  HostArray x = reduce_inputs(ctx, k, t, n);
  HostArray want;
  std::vector<double> fwant, scale;
  reference(k, x, shape, ax, rt, want, fwant, scale);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(rt, want.size());
  std::vector<int> d(3, 0);
  for (int i = 0; i < rank; ++i) d[i] = static_cast<int>(shape[i]);
  kern[{1}](dx.buf, o.buf, k, axis, keep, rt, d[0], d[1], d[2]);
  const std::string what = std::string(kind_name(k)) + " " + dname(t) + " " + ir::shape_str(shape) +
                           " axis " + std::to_string(axis) + (keep ? " keep_dims" : "");
  const bool float_acc = ir::is_float(rt) && (k == RK::Sum || k == RK::Prod);
  if (!float_acc) return ctx.check_exact(what, ctx.download(o), want);
  const Tol tl_ = k == RK::Sum ? tol::sum(rt, rt, shape[ax]) : tol::product(rt, shape[ax]);
  ctx.check_close(what, ctx.download(o), fwant, tl_, &scale);
}

void masked_row_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto row = x + tl::program_id(0) * n;
  auto mx = tl::max(tl::load(row + offs, offs < n, -INFINITY), 0);
  auto sm = tl::sum(tl::load(row + offs, offs < n, 0.0f), 0);
  tl::store(out + 2 * tl::program_id(0), mx);
  tl::store(out + 2 * tl::program_id(0) + 1, sm);
}

void chained_kernel(tl::ptr<float> x, tl::ptr<float> out, int A, int B, int C) {
  auto t = tl::load(x + offsets({A, B, C}));
  auto s = tl::sum(tl::max(t, 2), 0);  // [B]
  auto p = tl::permute(t, {2, 0, 1});  // [C, A, B]
  auto q = tl::min(tl::sum(p, 1), 0);  // [B]
  tl::store(out + tl::arange(0, B), s);
  tl::store(out + B + tl::arange(0, B), q);
}

void welford_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  auto m = offs < n;
  auto v = tl::load(x + tl::program_id(0) * n + offs, m, 0.0f);
  auto count = tl::where(m, 1.0f, 0.0f);
  auto m2 = tl::zeros<float>({BLOCK});
  auto r = tl::reduce(
      {v, m2, count}, 0, [](const std::vector<tl::tensor>& a, const std::vector<tl::tensor>& b) {
        auto cnt = a[2] + b[2];
        auto w = tl::where(cnt == 0.0f, 0.0f, tl::fdiv(b[2], tl::maximum(cnt, 1.0f)));
        auto delta = b[0] - a[0];
        return std::vector<tl::tensor>{a[0] + delta * w, a[1] + b[1] + delta * delta * a[2] * w,
                                       cnt};
      });
  tl::store(out + 2 * tl::program_id(0), r[0]);
  tl::store(out + 2 * tl::program_id(0) + 1, r[1] / r[2]);
}

void tuple_argmax_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, int M, int N) {
  auto v = tl::load(x + offsets({M, N}));
  auto idx = tl::broadcast_to(tl::arange(0, N)[{tl::None, tl::_}], {M, N});
  auto r = tl::reduce({v, idx}, 1,
                      [](const std::vector<tl::tensor>& a, const std::vector<tl::tensor>& b) {
                        auto take_b = b[0] > a[0];  // ties keep the left (lower-index) side
                        return std::vector<tl::tensor>{tl::where(take_b, b[0], a[0]),
                                                       tl::where(take_b, b[1], a[1])};
                      });
  tl::store(out + tl::arange(0, M), r[1]);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"reduce/" + std::move(name), std::move(needs), "", std::move(body)});
}

void keep_dims_negative_axis_case(Context& ctx) {
  for (RK k : {RK::Sum, RK::Max, RK::ArgMin}) {
    run_reduce(ctx, k, DType::f32, {16, 32}, -1, true);
    run_reduce(ctx, k, DType::i32, {4, 8, 16}, -2, true);
    run_reduce(ctx, k, DType::f32, {64}, -1, false);
  }
}

void prod_case(Context& ctx) {
  for (DType t : {DType::f32, DType::i32, DType::f64})
    run_reduce(ctx, RK::Prod, t, {8, 16}, 1, false);
}

void xor_sum_case(Context& ctx) {
  for (DType t : {DType::i32, DType::u8, DType::i64, DType::i1})
    run_reduce(ctx, RK::XorSum, t, {8, 32}, 1, false);
}

void nan_and_signed_zero_case(Context& ctx) {
  auto kern = TESSERA_KERNEL(reduce_kernel, x, out, KIND, AXIS, KEEP, EXPECT, D0, D1, D2);
  for (DType t : {DType::f32, DType::f16}) {
    for (RK k : {RK::Max, RK::Min, RK::MaxNan, RK::MinNan, RK::ArgMax, RK::ArgMin}) {
      HostArray x = ctx.random(t, 32, -4, 4);
      x.set_f(3, -0.0), x.set_f(5, 0.0);  // row 0: zeros only
      for (int i = 0; i < 8; ++i) x.set_f(i, i == 3 || i == 5 ? x.f(i) : -1.0);
      x.set_f(13, NAN);  // row 1: a NaN wins everything (is ignored by the default max/min)
      for (int i = 16; i < 24; ++i) x.set_f(i, NAN);  // row 2: only NaNs
      HostArray want;
      std::vector<double> fw, sc;
      reference(k, x, {4, 8}, 1, result_dtype(k, t), want, fw, sc);
      DevArray dx = ctx.upload(x), o = ctx.poisoned(result_dtype(k, t), 4);
      kern[{1}](dx.buf, o.buf, k, 1, false, result_dtype(k, t), 4, 8, 0);
      ctx.check_exact(std::string(kind_name(k)) + " " + dname(t), ctx.download(o), want);
    }
  }
  // 256 columns on two warps: each thread folds several registers of a row first (targets
  // without one-instruction NaN-propagating min/max test each register for NaN there).
  for (DType t : {DType::f32, DType::f16}) {
    for (RK k : {RK::Max, RK::Min, RK::MaxNan, RK::MinNan}) {
      HostArray x = ctx.random(t, 4 * 256, -4, 4);
      const double far = is_max_like(k) ? -1.0 : 1.0;
      for (int c = 0; c < 256; ++c) x.set_f(c, c == 77 ? 0.0 : c == 130 ? -0.0 : far);
      x.set_f(256 + 200, NAN);  // row 1: a NaN among a thread's registers
      x.set_f(512 + 0, NAN);    // row 2: first
      x.set_f(768 + 255, NAN);  // row 3: last
      HostArray want;
      std::vector<double> fw, sc;
      const DType rt = result_dtype(k, t);
      reference(k, x, {4, 256}, 1, rt, want, fw, sc);
      DevArray dx = ctx.upload(x), o = ctx.poisoned(rt, 4);
      kern[{Grid(1), {.num_warps = 2}}](dx.buf, o.buf, k, 1, false, rt, 4, 256, 0);
      ctx.check_exact(std::string(kind_name(k)) + " " + dname(t) + " 4x256 on two warps",
                      ctx.download(o), want);
    }
  }
}

void masked_rows_case(Context& ctx) {
  auto k = TESSERA_KERNEL(masked_row_kernel, x, out, n, BLOCK);
  for (int n : {1, 3, 100, 127, 128}) {
    const int rows = 3;
    HostArray x = ctx.random(DType::f32, rows * n, -10, 10);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 2 * rows);
    k[{rows}](dx.buf, o.buf, n, 128);
    std::vector<double> want, scale;
    for (int r = 0; r < rows; ++r) {
      double mx = -INFINITY, s = 0, mag = 0;
      for (int i = 0; i < n; ++i)
        mx = std::max(mx, x.f(r * n + i)), s += x.f(r * n + i), mag += std::fabs(x.f(r * n + i));
      want.insert(want.end(), {mx, s});
      scale.insert(scale.end(), {0.0, mag});
    }
    ctx.check_close("max and sum of " + std::to_string(n) + " of 128", ctx.download(o), want,
                    tol::sum(DType::f32, DType::f32, n), &scale);
  }
}

void chained_case(Context& ctx) {
  auto k = TESSERA_KERNEL(chained_kernel, x, out, A, B, C);
  const int A = 4, B = 8, C = 16;
  HostArray x = ctx.random(DType::f32, A * B * C, -1, 1);
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 2 * B);
  k[{1}](dx.buf, o.buf, A, B, C);
  std::vector<double> want(2 * B, 0), scale(2 * B, 0);
  for (int b = 0; b < B; ++b) {
    double mn = INFINITY;
    for (int c = 0; c < C; ++c) {
      double s = 0;
      for (int a = 0; a < A; ++a) s += x.f((a * B + b) * C + c);
      mn = std::min(mn, s);
    }
    for (int a = 0; a < A; ++a) {
      double mx = -INFINITY;
      for (int c = 0; c < C; ++c) mx = std::max(mx, x.f((a * B + b) * C + c));
      want[b] += mx, scale[b] += std::fabs(mx);
    }
    want[B + b] = mn, scale[B + b] = A;
  }
  ctx.check_close("sum(max(x, 2), 0) and min(sum(permute(x), 1), 0)", ctx.download(o), want,
                  tol::sum(DType::f32, DType::f32, A), &scale);
}

void welford_case(Context& ctx) {
  auto k = TESSERA_KERNEL(welford_kernel, x, out, n, BLOCK);
  for (int n : {1, 37, 256}) {
    const int rows = 4;
    HostArray x = ctx.random(DType::f32, rows * n, 2, 6);
    DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::f32, 2 * rows);
    k[{rows}](dx.buf, o.buf, n, 256);
    std::vector<double> want, scale;
    for (int r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int i = 0; i < n; ++i) mean += x.f(r * n + i) / n;
      for (int i = 0; i < n; ++i) var += (x.f(r * n + i) - mean) * (x.f(r * n + i) - mean) / n;
      want.insert(want.end(), {mean, var});
      scale.insert(scale.end(), {mean, 16.0});  // variance error is relative to the squared range
    }
    ctx.check_close("mean and variance, n=" + std::to_string(n), ctx.download(o), want,
                    tol::composite(DType::f32, 6 + 2 * 8), &scale);
  }
}

void generic_argmax_tuple_case(Context& ctx) {
  auto k = TESSERA_KERNEL(tuple_argmax_kernel, x, out, M, N);
  const int M = 16, N = 64;
  HostArray x = ctx.random(DType::i32, M * N, -5, 5);  // many ties
  DevArray dx = ctx.upload(x), o = ctx.poisoned(DType::i32, M);
  k[{1}](dx.buf, o.buf, M, N);
  std::vector<int64_t> want;
  for (int r = 0; r < M; ++r) {
    int best = 0;
    for (int j = 1; j < N; ++j)
      if (x.i(r * N + j) > x.i(r * N + best)) best = j;
    want.push_back(best);
  }
  ctx.check_ints("first index of the row maximum", ctx.download(o), want);
}

void register_builtin(std::vector<Case>& out) {
  const std::vector<std::vector<int64_t>> shapes = {{128}, {16, 32}, {4, 8, 16}};
  for (RK k : {RK::Sum, RK::Min, RK::Max, RK::ArgMin, RK::ArgMax, RK::MaxNan}) {
    for (const auto& shape : shapes) {
      const std::string name = std::string(kind_name(k)) + "/" + std::to_string(shape.size()) + "d";
      add(out, name, needs_of({DType::i8, DType::f16, DType::u16, DType::f64}),
          [k, shape](Context& ctx) {
            for (DType t : {DType::f32, DType::i32, DType::f16, DType::i8, DType::u16, DType::f64})
              for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
                run_reduce(ctx, k, t, shape, axis, false);
          });
    }
  }
  add(out, "keep_dims_negative_axis", {}, keep_dims_negative_axis_case);
  add(out, "prod", needs_of({DType::f64}), prod_case);
  add(out, "xor_sum", needs_of({DType::u8, DType::i64}), xor_sum_case);
  add(out, "nan_and_signed_zero", needs_of({DType::f16}), nan_and_signed_zero_case);
}

void register_composite(std::vector<Case>& out) {
  add(out, "masked_rows", {}, masked_rows_case);
  add(out, "chained", {}, chained_case);
  add(out, "welford", {}, welford_case);
  add(out, "generic_argmax_tuple", {}, generic_argmax_tuple_case);
}

}  // namespace

void register_reduce(std::vector<Case>& out) {
  register_builtin(out);
  register_composite(out);
}

}  // namespace tessera::conformance
