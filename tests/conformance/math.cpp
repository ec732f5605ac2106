/// \file Math functions (exp exp2 log log2 log1p sqrt rsqrt sin cos tanh erf floor ceil sigmoid
/// fma, and the libdevice functions expm1 log10 sinh cosh asin acos atan cbrt erfinv) in f16, bf16,
/// f32 and f64 against libm in fp64, with IEEE special values, under the few-ulp tolerances of
/// tolerances.h (GPU math is not correctly rounded); sin and cos also of huge arguments (exact
/// argument reduction up to the largest finite value).
#include <cmath>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

enum class Fn {
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Erf,
  Floor,
  Ceil,
  Sigmoid,
  Expm1,
  Log10,
  Sinh,
  Cosh,
  Asin,
  Acos,
  Atan,
  Cbrt,
  Erfinv,
};

tl::tensor apply(Fn f, const tl::tensor& x) {
  switch (f) {
    case Fn::Exp:
      return tl::exp(x);
    case Fn::Exp2:
      return tl::exp2(x);
    case Fn::Log:
      return tl::log(x);
    case Fn::Log2:
      return tl::log2(x);
    case Fn::Log1p:
      return tl::log1p(x);
    case Fn::Sqrt:
      return tl::sqrt(x);
    case Fn::Rsqrt:
      return tl::rsqrt(x);
    case Fn::Sin:
      return tl::sin(x);
    case Fn::Cos:
      return tl::cos(x);
    case Fn::Tanh:
      return tl::tanh(x);
    case Fn::Erf:
      return tl::erf(x);
    case Fn::Floor:
      return tl::floor(x);
    case Fn::Ceil:
      return tl::ceil(x);
    case Fn::Sigmoid:
      return tl::sigmoid(x);
    case Fn::Expm1:
      return tl::expm1(x);
    case Fn::Log10:
      return tl::log10(x);
    case Fn::Sinh:
      return tl::sinh(x);
    case Fn::Cosh:
      return tl::cosh(x);
    case Fn::Asin:
      return tl::asin(x);
    case Fn::Acos:
      return tl::acos(x);
    case Fn::Atan:
      return tl::atan(x);
    case Fn::Cbrt:
      return tl::cbrt(x);
    case Fn::Erfinv:
      return tl::erfinv(x);
  }
  return x;
}

void math_kernel(tl::pointer x, tl::pointer y, tl::i32 n, Fn FN, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto r = apply(FN, tl::load(x + offs, m));
  expect_dtype(r, x.dtype(), "a math function keeps its dtype");
  tl::store(y + offs, r, m);
}

/// pow, atan2 and hypot of two operands (FN: 0, 1, 2).
void math2_kernel(tl::pointer a, tl::pointer b, tl::pointer y, tl::i32 n, int FN, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto x = tl::load(a + offs, m), z = tl::load(b + offs, m);
  auto r = FN == 0 ? tl::pow(x, z) : FN == 1 ? tl::atan2(x, z) : tl::hypot(x, z);
  expect_dtype(r, a.dtype(), "a math function keeps its dtype");
  tl::store(y + offs, r, m);
}

void fma_kernel(tl::pointer a, tl::pointer b, tl::pointer c, tl::pointer out, tl::i32 n,
                int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + offs,
            tl::fma(tl::load(a + offs, m), tl::load(b + offs, m), tl::load(c + offs, m)), m);
}

struct FnInfo {
  const char* name;
  Fn fn;
  double lo, hi;      ///< input range (f32/f64)
  double lo16, hi16;  ///< input range for f16 (whose results overflow sooner)
  double (*ref)(double);
  std::vector<double> specials;
};

double ref_rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
double ref_sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double ref_exp(double x) {
  return std::exp(x);
}
double ref_exp2(double x) {
  return std::exp2(x);
}
double ref_log(double x) {
  return std::log(x);
}
double ref_log2(double x) {
  return std::log2(x);
}
double ref_log1p(double x) {
  return std::log1p(x);
}
double ref_sqrt(double x) {
  return std::sqrt(x);
}
double ref_sin(double x) {
  return std::sin(x);
}
double ref_cos(double x) {
  return std::cos(x);
}
double ref_tanh(double x) {
  return std::tanh(x);
}
double ref_erf(double x) {
  return std::erf(x);
}
double ref_floor(double x) {
  return std::floor(x);
}
double ref_ceil(double x) {
  return std::ceil(x);
}
double ref_expm1(double x) {
  return std::expm1(x);
}
double ref_log10(double x) {
  return std::log10(x);
}
double ref_sinh(double x) {
  return std::sinh(x);
}
double ref_cosh(double x) {
  return std::cosh(x);
}
double ref_asin(double x) {
  return std::asin(x);
}
double ref_acos(double x) {
  return std::acos(x);
}
double ref_atan(double x) {
  return std::atan(x);
}
double ref_cbrt(double x) {
  return std::cbrt(x);
}

/// erfinv by bisection on erf (erfc above 1/2, where 1 - |y| is exact) down to adjacent
/// doubles: slow, but independent of the Newton iterations of the library and the interpreters.
double ref_erfinv(double y) {
  const double a = std::fabs(y);
  if (std::isnan(y) || a > 1) return NAN;
  if (a == 1) return std::copysign(INFINITY, y);
  double lo = 0, hi = 7;
  for (;;) {
    const double mid = lo + (hi - lo) / 2;
    if (mid == lo || mid == hi) break;
    const bool below = a < 0.5 ? std::erf(mid) < a : std::erfc(mid) > 1 - a;
    (below ? lo : hi) = mid;
  }
  return std::copysign(lo, y);
}

const double kInf = INFINITY;

std::vector<FnInfo> functions() {
  return {
      {"exp", Fn::Exp, -20, 20, -9, 10, ref_exp, {0.0, -0.0, kInf, -kInf, NAN, 1.0, -1.0}},
      {"exp2", Fn::Exp2, -30, 30, -14, 15, ref_exp2, {0.0, kInf, -kInf, NAN, 10.0, -3.0}},
      {"log", Fn::Log, 1e-3, 1e4, 1e-3, 6e4, ref_log, {1.0, 0.0, -0.0, kInf, -1.0, NAN, 2.0}},
      {"log2", Fn::Log2, 1e-3, 1e4, 1e-3, 6e4, ref_log2, {1.0, 0.0, kInf, -2.0, NAN, 1024.0}},
      {"log1p",
       Fn::Log1p,
       -0.999,
       1e4,
       -0.999,
       6e4,
       ref_log1p,
       {0.0, -0.0, -1.0, kInf, -2.0, NAN, 1e-5, -3e-5, 2e-8}},
      {"sqrt", Fn::Sqrt, 0, 1e4, 0, 6e4, ref_sqrt, {0.0, -0.0, kInf, -1.0, NAN, 4.0, 2.0}},
      {"rsqrt", Fn::Rsqrt, 1e-3, 1e4, 1e-2, 6e4, ref_rsqrt, {0.0, kInf, -1.0, NAN, 4.0, 0.25}},
      {"sin", Fn::Sin, -10, 10, -10, 10, ref_sin, {0.0, -0.0, NAN, kInf, 3.140625}},
      {"cos", Fn::Cos, -10, 10, -10, 10, ref_cos, {0.0, NAN, -kInf, 1.5703125}},
      {"tanh", Fn::Tanh, -10, 10, -10, 10, ref_tanh, {0.0, -0.0, kInf, -kInf, NAN, 20.0}},
      {"erf", Fn::Erf, -4, 4, -4, 4, ref_erf, {0.0, -0.0, kInf, -kInf, NAN, 0.5}},
      {"floor",
       Fn::Floor,
       -100,
       100,
       -100,
       100,
       ref_floor,
       {-0.5, 0.5, -0.0, kInf, NAN, -1.0, 2.5}},
      {"ceil", Fn::Ceil, -100, 100, -100, 100, ref_ceil, {-0.5, 0.5, -0.0, kInf, NAN, -1.0, 2.5}},
      {"sigmoid", Fn::Sigmoid, -20, 20, -10, 10, ref_sigmoid, {0.0, kInf, -kInf, NAN, 1.0}},
      {"expm1", Fn::Expm1, -20, 20, -9, 10, ref_expm1, {0.0, -0.0, kInf, -kInf, NAN, 1e-6, -3e-5}},
      {"log10", Fn::Log10, 1e-3, 1e4, 1e-3, 6e4, ref_log10, {1.0, 0.0, kInf, -2.0, NAN, 1000.0}},
      {"sinh", Fn::Sinh, -20, 20, -10, 10, ref_sinh, {0.0, -0.0, kInf, -kInf, NAN, 1e-5}},
      {"cosh", Fn::Cosh, -20, 20, -10, 10, ref_cosh, {0.0, -0.0, kInf, -kInf, NAN, 1e-5}},
      {"asin", Fn::Asin, -1, 1, -1, 1, ref_asin, {0.0, -0.0, 1.0, -1.0, 1.5, kInf, NAN, 1e-5}},
      {"acos", Fn::Acos, -1, 1, -1, 1, ref_acos, {0.0, -0.0, 1.0, -1.0, -1.5, kInf, NAN, 0.999}},
      {"atan", Fn::Atan, -50, 50, -50, 50, ref_atan, {0.0, -0.0, kInf, -kInf, NAN, 1.0, 1e-5}},
      {"cbrt",
       Fn::Cbrt,
       -1e4,
       1e4,
       -6e4,
       6e4,
       ref_cbrt,
       {0.0, -0.0, kInf, -kInf, NAN, -27.0, 1e-7}},
      {"erfinv",
       Fn::Erfinv,
       -0.999,
       0.999,
       -0.999,
       0.999,
       ref_erfinv,
       {0.0, -0.0, 1.0, -1.0, 1.5, -kInf, NAN, 1e-6, 0.9999999, -0.5}},
  };
}

Tol tolerance(Fn f, DType t) {
  switch (f) {
    case Fn::Floor:
    case Fn::Ceil:
      return tol::exact_float();
    case Fn::Sqrt:
      return tol::sqrt(t);
    case Fn::Sigmoid:
      return tol::composite(t, 3);  // exp, add, division, each rounded in t
    default:
      return tol::math(t);
  }
}

void run_function(Context& ctx, const FnInfo& info, DType t) {
  auto k = TESSERA_KERNEL(math_kernel, x, y, n, FN, BLOCK);
  const int n = static_cast<int>(ctx.size(1000, 300));
  const bool narrow = t == DType::f16;
  HostArray x = ctx.random(t, n, narrow ? info.lo16 : info.lo, narrow ? info.hi16 : info.hi);
  for (size_t i = 0; i < info.specials.size(); ++i) x.set_f(i, info.specials[i]);
  DevArray dx = ctx.upload(x), y = ctx.poisoned(t, n);
  k[{cdiv(n, 128)}](dx.buf, y.buf, n, info.fn, 128);
  std::vector<double> want, scale;
  for (int i = 0; i < n; ++i) {
    want.push_back(info.ref(x.f(i)));
    scale.push_back(std::fabs(want.back()));
  }
  ctx.check_close(std::string(info.name) + "(" + dname(t) + ")", ctx.download(y), want,
                  tolerance(info.fn, t), &scale);
}

/// sin and cos of arguments of every magnitude up to `top` (log-uniform, both signs), where a
/// Cody-Waite reduction loses every bit: the reduction must be exact (Payne-Hanek).
void run_huge_trig(Context& ctx, Fn fn, DType t) {
  auto k = TESSERA_KERNEL(math_kernel, x, y, n, FN, BLOCK);
  const int n = static_cast<int>(ctx.size(1000, 300));
  const double top = t == DType::f16 ? 15.9 : t == DType::f64 ? 1000 : 127;  // log2 of the largest
  HostArray x = ctx.random(t, n, 0, 1);
  for (int i = 0; i < n; ++i) {
    double v = round_to(t, std::exp2(x.f(i) * top));
    x.set_f(i, i % 2 ? -v : v);
  }
  const double specials[] = {1e30, 6381956970095103.0 * std::exp2(797.0), 1e300, 65504, 105616};
  for (size_t i = 0; i < std::size(specials); ++i)
    if (std::fabs(round_to(t, specials[i])) < INFINITY) x.set_f(i, specials[i]);
  DevArray dx = ctx.upload(x), y = ctx.poisoned(t, n);
  k[{cdiv(n, 128)}](dx.buf, y.buf, n, fn, 128);
  std::vector<double> want, scale;
  for (int i = 0; i < n; ++i) {
    want.push_back(fn == Fn::Sin ? std::sin(x.f(i)) : std::cos(x.f(i)));
    scale.push_back(std::fabs(want.back()));
  }
  ctx.check_close(
      std::string(fn == Fn::Sin ? "sin" : "cos") + " of huge arguments (" + dname(t) + ")",
      ctx.download(y), want, tol::math(t), &scale);
}

/// pow, atan2 or hypot (fn 0, 1, 2) on random operands (pow: positive bases, and negative
/// bases with integer exponents) and C99's special pairs, against libm in fp64.
void run_function2(Context& ctx, int fn, DType t) {
  auto k = TESSERA_KERNEL(math2_kernel, a, b, y, n, FN, BLOCK);
  const int n = static_cast<int>(ctx.size(1000, 300));
  const bool narrow = t == DType::f16;
  const double r = fn == 0 ? (narrow ? 4 : 8) : (narrow ? 100 : 1e4);
  HostArray a =
      ctx.random(t, n, fn == 0 ? (narrow ? 0.25 : 0.05) : -r, fn == 0 ? (narrow ? 4 : 20) : r);
  HostArray b = ctx.random(t, n, -r, r);
  for (int i = 0; i < n; i += 7)
    if (fn == 0) {  // a negative base with an integer exponent: the sign of odd powers
      a.set_f(i, -a.f(i));
      b.set_f(i, std::nearbyint(b.f(i)));
    }
  const double inf = INFINITY;
  const double pairs[][2] = {{0.0, -3.0}, {-0.0, -3.0}, {-0.0, 3.0},  {-1.0, inf}, {1.0, NAN},
                             {NAN, 0.0},  {-8.0, 0.5},  {-inf, -3.0}, {0.5, -inf}, {2.0, inf},
                             {inf, -inf}, {-0.0, -0.0}, {0.0, -1.0},  {-2.0, 3.0}, {NAN, inf}};
  for (size_t i = 0; i < std::size(pairs); ++i) {
    a.set_f(i, pairs[i][0]);
    b.set_f(i, pairs[i][1]);
  }
  DevArray da = ctx.upload(a), db = ctx.upload(b), y = ctx.poisoned(t, n);
  k[{cdiv(n, 128)}](da.buf, db.buf, y.buf, n, fn, 128);
  std::vector<double> want, scale;
  for (int i = 0; i < n; ++i) {
    double x = a.f(i), z = b.f(i);
    want.push_back(fn == 0 ? std::pow(x, z) : fn == 1 ? std::atan2(x, z) : std::hypot(x, z));
    scale.push_back(std::fabs(want.back()));
  }
  const char* name = fn == 0 ? "pow" : fn == 1 ? "atan2" : "hypot";
  ctx.check_close(std::string(name) + "(" + dname(t) + ")", ctx.download(y), want, tol::math(t),
                  &scale);
}

}  // namespace

void register_math(std::vector<Case>& out) {
  for (int fn : {0, 1, 2})
    for (DType t : kFloatDTypes)
      out.push_back({std::string("math/") +
                         (fn == 0   ? "pow"
                          : fn == 1 ? "atan2"
                                    : "hypot") +
                         "/" + dname(t),
                     needs_of({t}), "", [fn, t](Context& ctx) { run_function2(ctx, fn, t); }});
  for (const FnInfo& info : functions()) {
    for (DType t : kFloatDTypes) {
      // f64 exp, log, sin ... come from the math library on every target that has f64.
      out.push_back({std::string("math/") + info.name + "/" + dname(t), needs_of({t}), "",
                     [info, t](Context& ctx) { run_function(ctx, info, t); }});
    }
  }
  for (Fn fn : {Fn::Sin, Fn::Cos})
    for (DType t : kFloatDTypes)
      out.push_back({std::string("math/") + (fn == Fn::Sin ? "sin" : "cos") + "_huge/" + dname(t),
                     needs_of({t}), "", [fn, t](Context& ctx) { run_huge_trig(ctx, fn, t); }});
  for (DType t : kFloatDTypes) {
    std::vector<Need> needs = needs_of({t});
    needs.push_back(Need::FusedFma);
    out.push_back({"math/fma/" + dname(t), needs, "", [t](Context& ctx) {
                     auto k = TESSERA_KERNEL(fma_kernel, a, b, c, out, n, BLOCK);
                     const int n = 500;
                     HostArray a = ctx.random_full(t, n, 4), b = ctx.random_full(t, n, 4),
                               c = ctx.random_full(t, n, 8);
                     // Cancellation: c = -(a*b) rounded, so only a fused multiply-add keeps the low
                     // bits.
                     for (int i = 0; i < n; i += 4) c.set_f(i, -round_to(t, a.f(i) * b.f(i)));
                     DevArray da = ctx.upload(a), db = ctx.upload(b), dc = ctx.upload(c),
                              o = ctx.poisoned(t, n);
                     k[{cdiv(n, 128)}](da.buf, db.buf, dc.buf, o.buf, n, 128);
                     std::vector<double> want;
                     // a*b is exact in double for f32 and narrower; f64 uses the host's fused fma.
                     for (int i = 0; i < n; ++i)
                       want.push_back(t == DType::f64 ? std::fma(a.f(i), b.f(i), c.f(i))
                                                      : a.f(i) * b.f(i) + c.f(i));
                     ctx.check_close("fma(" + dname(t) + ")", ctx.download(o), want, tol::fma(t));
                   }});
  }
}

}  // namespace tessera::conformance
