/// \file Unary `-x` and abs on every numeric dtype (integers wrap: -MIN == MIN), minimum and
/// maximum with both NaN rules and Triton's default (NaN ignored) and -0 < +0, clamp with both
/// NaN rules, true division (truediv, Triton's `/`) beside `/` on integers (Triton's `//`), cdiv.
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

void neg_abs_kernel(tl::pointer x, tl::pointer out, tl::i32 n, bool ABS, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  tl::store(out + offs, ABS ? tl::abs(a) : -a, m);
}

/// How a min/max case spells the NaN rule: not at all (Triton's default), All or None.
enum class NanMode { Default, Propagate, Ignore };

void minmax_kernel(tl::pointer x, tl::pointer y, tl::pointer out, tl::i32 n, bool MAX, NanMode MODE,
                   int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  if (MODE == NanMode::Default)
    return tl::store(out + offs, MAX ? tl::maximum(a, b) : tl::minimum(a, b), m);
  auto nan = MODE == NanMode::Ignore ? tl::PropagateNan::None : tl::PropagateNan::All;
  tl::store(out + offs, MAX ? tl::maximum(a, b, nan) : tl::minimum(a, b, nan), m);
}

void clamp_kernel(tl::pointer x, tl::scalar lo, tl::scalar hi, tl::pointer out, tl::i32 n,
                  bool PROPAGATE, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto v = tl::load(x + offs, m);
  tl::store(out + offs,
            PROPAGATE ? tl::clamp(v, lo, hi, tl::PropagateNan::All) : tl::clamp(v, lo, hi), m);
}

void fdiv_kernel(tl::pointer x, tl::pointer y, tl::pointer out, tl::i32 n, tl::DType EXPECT,
                 int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = tl::truediv(tl::load(x + offs, m), tl::load(y + offs, m));
  expect_dtype(r, EXPECT, "truediv");
  tl::store(out + offs, r, m);
}

/// Triton's `a // b` and `a / b` of two int32 tiles, as a port spells them: `a / b` and
/// tl::truediv(a, b).
void int_division_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> y, tl::ptr<int32_t> quot,
                         tl::ptr<float> ratio, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  tl::store(quot + offs, a / b, m);
  auto r = tl::truediv(a, b);
  expect_dtype(r, tl::DType::f32, "truediv of i32 tiles");
  tl::store(ratio + offs, r, m);
}

void cdiv_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> out, tl::i32 n, tl::i32 d, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + offs, tl::cdiv(tl::load(x + offs, m), d), m);
  tl::store(out + n + tl::program_id(0), tl::cdiv(n, d));  // scalar form
}

/// Reference min/max of floats: NaN propagates (or is ignored), -0 orders below +0.
double ref_minmax(double a, double b, bool max, bool ignore) {
  if (std::isnan(a) || std::isnan(b)) {
    if (!ignore) return NAN;
    return std::isnan(a) ? b : a;
  }
  if (a == b) {  // only the signs of zeros can differ
    const bool pick_a = max ? !std::signbit(a) : std::signbit(a);
    return pick_a ? a : b;
  }
  return (a > b) == max ? a : b;
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"unary/" + std::move(name), std::move(needs), "", std::move(body)});
}

std::vector<Need> all_needs() {
  return needs_of({DType::i8, DType::i16, DType::i64, DType::f16, DType::bf16, DType::f64});
}

void register_neg_abs(std::vector<Case>& out) {
  for (bool is_abs : {false, true}) {
    add(out, is_abs ? "abs" : "neg", all_needs(), [is_abs](Context& ctx) {
      auto k = TESSERA_KERNEL(neg_abs_kernel, x, out, n, ABS, BLOCK);
      for (DType t : kNumericDTypes) {
        const int n = 150;
        HostArray a = ir::is_float(t) ? ctx.random_full(t, n, 6) : ctx.random_full(t, n);
        if (ir::is_float(t)) {
          const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN};
          for (int i = 0; i < 5; ++i) a.set_f(i, sp[i]);
        } else {
          a.set_int(0, ref::int_min(t)), a.set_int(1, ref::int_max(t)), a.set_int(2, 0);
        }
        DevArray da = ctx.upload(a), o = ctx.poisoned(t, n);
        k[{cdiv(n, 64)}](da.buf, o.buf, n, is_abs, 64);
        HostArray want(t, n);
        for (int i = 0; i < n; ++i) {
          if (ir::is_float(t)) {
            const int w = ir::dtype_bits(t);
            const uint64_t sign = uint64_t{1} << (w - 1);  // sign-bit flip/clear, NaN included
            want.set_bits(i, is_abs ? a.bits(i) & ~sign : a.bits(i) ^ sign);
          } else {
            const int64_t v = a.i(i);
            const bool negate = !is_abs || (ir::is_signed_int(t) && v < 0);
            want.set_int(i, negate ? ref::wrap(t, 0 - static_cast<uint64_t>(v)) : v);
          }
        }
        ctx.check_exact(std::string(is_abs ? "abs(" : "-(") + dname(t) + ")", ctx.download(o),
                        want);
      }
    });
  }
}

void clamp_case(Context& ctx) {
  auto k = TESSERA_KERNEL(clamp_kernel, x, lo, hi, out, n, PROPAGATE, BLOCK);
  const int n = 100;
  for (DType t : {DType::f32, DType::i32, DType::f16, DType::u32})
    for (bool propagate : {false, true}) {
      HostArray a = ctx.random(t, n, -50, 100);
      if (ir::is_float(t)) a.set_f(0, NAN), a.set_f(1, -INFINITY);
      DevArray da = ctx.upload(a), o = ctx.poisoned(t, n);
      HostArray want(t, n);
      with_ctype(t, [&](auto tag) {
        using T = decltype(tag);
        HostArray bounds(t, 2);
        bounds.set_f(0, 10), bounds.set_f(1, 40);
        k[{cdiv(n, 64)}](da.buf, host_value<T>(bounds, 0), host_value<T>(bounds, 1), o.buf, n,
                         propagate, 64);
      });
      for (int i = 0; i < n; ++i) {
        const double v = a.f(i);  // Triton's default: a NaN x gives lo (maxnum, then minnum)
        want.set_f(i, std::isnan(v) ? (propagate ? v : 10.0) : std::min(std::max(v, 10.0), 40.0));
      }
      ctx.check_exact("clamp(" + dname(t) + ", 10, 40" + (propagate ? ", All)" : ")"),
                      ctx.download(o), want);
    }
}

void fdiv_case(Context& ctx) {
  auto k = TESSERA_KERNEL(fdiv_kernel, x, y, out, n, EXPECT, BLOCK);
  const int n = 200;
  // Integers divide as f32 (Triton's `/`); floats keep their promoted dtype.
  const std::pair<DType, DType> pairs[] = {{DType::i32, DType::i32}, {DType::i8, DType::u8},
                                           {DType::f32, DType::f32}, {DType::f16, DType::f16},
                                           {DType::f64, DType::f64}, {DType::i32, DType::f16}};
  for (auto [ta, tb] : pairs) {
    const DType r = ir::is_float(ref::promote(ta, tb)) ? ref::promote(ta, tb) : DType::f32;
    HostArray a = ctx.random(ta, n, -100, 100), b = ctx.random(tb, n, 1, 50);
    DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(r, n);
    k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, r, 64);
    HostArray ca = ref::convert(a, r), cb = ref::convert(b, r);
    std::vector<double> want;
    for (int i = 0; i < n; ++i) want.push_back(ca.f(i) / cb.f(i));
    ctx.check_close(dname(ta) + " fdiv " + dname(tb), ctx.download(o), want, tol::division(r));
  }
}

void int_division_case(Context& ctx) {
  auto k = TESSERA_KERNEL(int_division_kernel, x, y, quot, ratio, n, BLOCK);
  const int n = 150;
  HostArray a = ctx.random(DType::i32, n, -1000, 1000), b = ctx.random(DType::i32, n, -40, 40);
  const int64_t sa[] = {7, -7, 7, -7, 0, 1 << 24, (1 << 24) + 1};
  const int64_t sb[] = {2, 2, -2, -2, 5, 3, 1};
  for (int i = 0; i < 7; ++i) a.set_int(i, sa[i]), b.set_int(i, sb[i]);
  for (int i = 0; i < n; ++i)
    if (b.i(i) == 0) b.set_int(i, 3);  // integer division by zero is undefined
  DevArray da = ctx.upload(a), db = ctx.upload(b), q = ctx.poisoned(DType::i32, n),
           r = ctx.poisoned(DType::f32, n);
  k[{cdiv(n, 64)}](da.buf, db.buf, q.buf, r.buf, n, 64);
  std::vector<int64_t> want_q;
  std::vector<double> want_r;
  for (int i = 0; i < n; ++i) {
    want_q.push_back(a.i(i) / b.i(i));  // C++ truncates toward zero, as Triton's `//`
    want_r.push_back(static_cast<double>(static_cast<float>(a.i(i))) /
                     static_cast<double>(static_cast<float>(b.i(i))));
  }
  ctx.check_ints("i32 / i32 (Triton's //: truncates toward zero)", ctx.download(q), want_q);
  ctx.check_close("truediv(i32, i32) (Triton's /: in f32)", ctx.download(r), want_r,
                  tol::division(DType::f32));
}

void cdiv_case(Context& ctx) {
  auto k = TESSERA_KERNEL(cdiv_kernel, x, out, n, d, BLOCK);
  const int n = 90, BLOCK = 32, programs = 3;
  for (int d : {1, 7, 32, 1000}) {
    HostArray a = ctx.random(DType::i32, n, 0, 5000);
    DevArray da = ctx.upload(a), o = ctx.poisoned(DType::i32, n + programs);
    k[{programs}](da.buf, o.buf, n, d, BLOCK);
    std::vector<int64_t> want;
    for (int i = 0; i < n; ++i) want.push_back((a.i(i) + d - 1) / d);
    for (int p = 0; p < programs; ++p) want.push_back((n + d - 1) / d);
    ctx.check_ints("cdiv by " + std::to_string(d), ctx.download(o), want);
  }
}

void register_minmax(std::vector<Case>& out) {
  constexpr const char* kModeNames[] = {"/nan_default", "/nan_propagate", "/nan_ignore"};
  for (bool is_max : {false, true}) {
    for (NanMode mode : {NanMode::Default, NanMode::Propagate, NanMode::Ignore}) {
      const std::string name =
          std::string(is_max ? "maximum" : "minimum") + kModeNames[static_cast<int>(mode)];
      const bool ignore = mode != NanMode::Propagate;  // the default is Triton's: NaN ignored
      add(out, name, all_needs(), [is_max, mode, ignore](Context& ctx) {
        auto k = TESSERA_KERNEL(minmax_kernel, x, y, out, n, MAX, MODE, BLOCK);
        const int n = 130;
        for (DType t : kNumericDTypes) {
          HostArray a = ctx.random_full(t, n), b = ctx.random_full(t, n);
          if (ir::is_float(t)) {
            const double sa[] = {NAN, 1.0, NAN, -0.0, 0.0, INFINITY, -INFINITY, 2.0};
            const double sb[] = {1.0, NAN, NAN, 0.0, -0.0, 3.0, -5.0, 2.0};
            for (int i = 0; i < 8; ++i) a.set_f(i, sa[i]), b.set_f(i, sb[i]);
          }
          DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(t, n);
          k[{cdiv(n, 64)}](da.buf, db.buf, o.buf, n, is_max, mode, 64);
          HostArray want(t, n);
          for (int i = 0; i < n; ++i) {
            if (ir::is_float(t))
              want.set_f(i, ref_minmax(a.f(i), b.f(i), is_max, ignore));
            else if (ir::is_signed_int(t))
              want.set_int(i, is_max ? std::max(a.i(i), b.i(i)) : std::min(a.i(i), b.i(i)));
            else
              want.set_bits(i, is_max ? std::max(a.u(i), b.u(i)) : std::min(a.u(i), b.u(i)));
          }
          ctx.check_exact(dname(t), ctx.download(o), want);
        }
      });
    }
  }
  add(out, "clamp", needs_of({DType::f16}), clamp_case);
}

void register_division(std::vector<Case>& out) {
  add(out, "truediv", needs_of({DType::i8, DType::f16, DType::f64}), fdiv_case);
  add(out, "int_division", {}, int_division_case);
  add(out, "cdiv", {}, cdiv_case);
}

}  // namespace

void register_unary(std::vector<Case>& out) {
  register_neg_abs(out);
  register_minmax(out);
  register_division(out);
}

}  // namespace tessera::conformance
