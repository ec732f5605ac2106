/// \file Cases that guard a driver workaround (a target fact in core/target/target.h names each
/// driver bug): the pattern the driver gets wrong, checked on every device against references that
/// follow the host interpreter's rules, so a device whose workaround is missing or broken fails.
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

/// `-a` or `|a|` in the narrow integer dtype, then read wider: widened to WIDE, compared with 0
/// and shifted right by 1 (each reads the bits above the narrow width in a 32-bit register).
void narrow_negate_kernel(tl::pointer x, tl::pointer wide, tl::pointer negative, tl::pointer halved,
                          tl::i32 n, bool ABS, tl::DType WIDE, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  auto r = ABS ? tl::abs(a) : -a;
  tl::store(wide + offs, r.to(WIDE), m);
  tl::store(negative + offs, (r < 0).to(DType::i8), m);
  tl::store(halved + offs, r >> 1, m);
}

void narrow_negate_case(Context& ctx) {
  auto k = TESSERA_KERNEL(narrow_negate_kernel, x, wide, negative, halved, n, ABS, WIDE, BLOCK);
  const int n = 100;
  for (DType t : {DType::i8, DType::i16, DType::u8, DType::u16}) {
    HostArray a = ctx.random_full(t, n);
    const int64_t corners[] = {ref::int_min(t), ref::int_min(t) + 1, ref::int_max(t), -1, 1, 0};
    for (int i = 0; i < 6; ++i) a.set_int(i, corners[i]);
    for (bool is_abs : {false, true}) {
      for (DType wide_t : {DType::i32, DType::i64, DType::f32}) {
        DevArray da = ctx.upload(a), w = ctx.poisoned(wide_t, n), neg = ctx.poisoned(DType::i8, n),
                 half = ctx.poisoned(t, n);
        k[{cdiv(n, 64)}](da.buf, w.buf, neg.buf, half.buf, n, is_abs, wide_t, 64);
        HostArray r(t, n), want_neg(DType::i8, n), want_half(t, n);
        for (int i = 0; i < n; ++i) {
          const int64_t v = a.i(i);
          const bool negate = !is_abs || (ir::is_signed_int(t) && v < 0);
          r.set_int(i, negate ? ref::wrap(t, 0 - static_cast<uint64_t>(v)) : v);
          want_neg.set_int(i, r.i(i) < 0);
          want_half.set_int(i, r.i(i) >> 1);  // arithmetic for signed, logical for unsigned
        }
        const std::string what = std::string(is_abs ? "abs(" : "-(") + dname(t) + ")";
        ctx.check_exact(what + ".to(" + dname(wide_t) + ")", ctx.download(w),
                        ref::convert(r, wide_t));
        ctx.check_exact(what + " < 0", ctx.download(neg), want_neg);
        ctx.check_exact(what + " >> 1", ctx.download(half), want_half);
      }
    }
  }
}

enum class F16Op { Div, Rem, Add, Sub, Mul, Sqrt, Log };

/// `a OP b` in f16, stored as f16 and widened to f32.
void f16_nan_kernel(tl::ptr<half> x, tl::ptr<half> y, tl::ptr<half> out, tl::ptr<float> wide,
                    tl::i32 n, F16Op OP, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  tl::tensor r = a;
  switch (OP) {
    case F16Op::Div:
      r = a / b;
      break;
    case F16Op::Rem:
      r = a % b;
      break;
    case F16Op::Add:
      r = a + b;
      break;
    case F16Op::Sub:
      r = a - b;
      break;
    case F16Op::Mul:
      r = a * b;
      break;
    case F16Op::Sqrt:
      r = tl::sqrt(a);
      break;
    case F16Op::Log:
      r = tl::log(a);
      break;
  }
  tl::store(out + offs, r, m);
  tl::store(wide + offs, r.to(DType::f32), m);
}

void f16_nan_case(Context& ctx) {
  auto k = TESSERA_KERNEL(f16_nan_kernel, x, y, out, wide, n, OP, BLOCK);
  constexpr double kInf = INFINITY;
  // Operand pairs whose result is NaN for some op, beside ordinary ones.
  const std::vector<std::pair<double, double>> pairs = {
      {0.0, 0.0},  {-0.0, 0.0},  {0.0, -0.0}, {kInf, kInf}, {-kInf, kInf}, {kInf, -kInf},
      {kInf, 0.0}, {0.0, kInf},  {NAN, 1.0},  {1.0, NAN},   {NAN, 0.0},    {kInf, 1.0},
      {-1.0, 2.0}, {-kInf, 3.0}, {3.0, 0.0},  {-2.5, 0.0},  {6.0, 4.0},    {-7.0, 2.0}};
  const int n = static_cast<int>(pairs.size());
  HostArray a(DType::f16, n), b(DType::f16, n);
  for (int i = 0; i < n; ++i) a.set_f(i, pairs[i].first), b.set_f(i, pairs[i].second);
  const std::pair<F16Op, const char*> ops[] = {
      {F16Op::Div, "/"}, {F16Op::Rem, "%"},     {F16Op::Add, "+"},  {F16Op::Sub, "-"},
      {F16Op::Mul, "*"}, {F16Op::Sqrt, "sqrt"}, {F16Op::Log, "log"}};
  for (auto [op, name] : ops) {
    DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f16, n),
             w = ctx.poisoned(DType::f32, n);
    k[{1}](da.buf, db.buf, o.buf, w.buf, n, op, 32);
    HostArray want(DType::f16, n);
    for (int i = 0; i < n; ++i) {
      const double x = a.f(i), y = b.f(i);
      double r = 0;
      switch (op) {
        case F16Op::Div:
          r = x / y;
          break;
        case F16Op::Rem:
          r = std::fmod(x, y);
          break;
        case F16Op::Add:
          r = x + y;
          break;
        case F16Op::Sub:
          r = x - y;
          break;
        case F16Op::Mul:
          r = x * y;
          break;
        case F16Op::Sqrt:
          r = std::sqrt(x);
          break;
        case F16Op::Log:
          r = std::log(x);
          break;
      }
      want.set_f(i, r);
    }
    // Every value above is exact in f16 except log's, which are NaN, infinities, 0 or log(6).
    const std::string what = std::string("f16 ") + name;
    if (op == F16Op::Log) {
      std::vector<double> ref;
      for (int i = 0; i < n; ++i) ref.push_back(std::log(a.f(i)));
      ctx.check_close(what, ctx.download(o), ref, tol::math(DType::f16));
      continue;
    }
    ctx.check_exact(what, ctx.download(o), want);
    ctx.check_exact(what + " widened to f32", ctx.download(w), ref::convert(want, DType::f32));
  }
}

enum class ConstOp {
  XDivZero,
  ZeroDivX,
  XMulZero,
  XMulNegZero,
  XAddZero,
  ZeroSubX,
  XMulInf,
  XAddNan,
  XRemZero
};

/// `a OP c` with c a literal +-0, inf or NaN: the operand a driver may fold (lavapipe did).
void special_constant_kernel(tl::pointer x, tl::pointer out, tl::i32 n, ConstOp OP, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  tl::tensor r = a;
  switch (OP) {
    case ConstOp::XDivZero:
      r = a / 0.0f;
      break;
    case ConstOp::ZeroDivX:
      r = 0.0f / a;
      break;
    case ConstOp::XMulZero:
      r = a * 0.0f;
      break;
    case ConstOp::XMulNegZero:
      r = a * -0.0f;
      break;
    case ConstOp::XAddZero:
      r = a + 0.0f;
      break;
    case ConstOp::ZeroSubX:
      r = 0.0f - a;
      break;
    case ConstOp::XMulInf:
      r = a * INFINITY;
      break;
    case ConstOp::XAddNan:
      r = a + NAN;
      break;
    case ConstOp::XRemZero:
      r = a % 0.0f;
      break;
  }
  tl::store(out + offs, r, m);
}

void special_constant_case(Context& ctx) {
  auto k = TESSERA_KERNEL(special_constant_kernel, x, out, n, OP, BLOCK);
  const std::pair<ConstOp, const char*> ops[] = {
      {ConstOp::XDivZero, "x / 0"},  {ConstOp::ZeroDivX, "0 / x"},
      {ConstOp::XMulZero, "x * 0"},  {ConstOp::XMulNegZero, "x * -0"},
      {ConstOp::XAddZero, "x + 0"},  {ConstOp::ZeroSubX, "0 - x"},
      {ConstOp::XMulInf, "x * inf"}, {ConstOp::XAddNan, "x + nan"},
      {ConstOp::XRemZero, "x % 0"}};
  const double in[] = {0.0, -0.0, 1.0, -2.5, INFINITY, -INFINITY, NAN, 3.0};
  const int n = 8;
  for (DType t : kFloatDTypes) {
    HostArray a(t, n);
    for (int i = 0; i < n; ++i) a.set_f(i, in[i]);
    for (auto [op, name] : ops) {
      DevArray da = ctx.upload(a), o = ctx.poisoned(t, n);
      k[{1}](da.buf, o.buf, n, op, 32);
      HostArray want(t, n);
      for (int i = 0; i < n; ++i) {  // every result is exact: 0, +-inf, NaN or x
        const double x = a.f(i);
        double r = 0;
        switch (op) {
          case ConstOp::XDivZero:
            r = x / 0.0;
            break;
          case ConstOp::ZeroDivX:
            r = 0.0 / x;
            break;
          case ConstOp::XMulZero:
            r = x * 0.0;
            break;
          case ConstOp::XMulNegZero:
            r = x * -0.0;
            break;
          case ConstOp::XAddZero:
            r = x + 0.0;
            break;
          case ConstOp::ZeroSubX:
            r = 0.0 - x;
            break;
          case ConstOp::XMulInf:
            r = x * INFINITY;
            break;
          case ConstOp::XAddNan:
            r = NAN;
            break;
          case ConstOp::XRemZero:
            r = std::fmod(x, 0.0);
            break;
        }
        want.set_f(i, r);
      }
      ctx.check_exact(dname(t) + " " + name, ctx.download(o), want);
    }
  }
}

/// `x.to(int64) OP c` for a 32-bit x (or an unsigned one to uint64) and a constant c: on lavapipe
/// a signed ordering compare of the sign-extended value with a constant was always false.
void wide_compare_kernel(tl::pointer x, tl::pointer lt, tl::pointer le, tl::pointer gt,
                         tl::pointer ge, tl::pointer eq, tl::i32 n, int64_t C, tl::DType WIDE,
                         int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto w = tl::load(x + offs, m).to(WIDE);
  tl::store(lt + offs, (w < C).to(DType::i8), m);
  tl::store(le + offs, (w <= C).to(DType::i8), m);
  tl::store(gt + offs, (w > C).to(DType::i8), m);
  tl::store(ge + offs, (w >= C).to(DType::i8), m);
  tl::store(eq + offs, (w == C).to(DType::i8), m);
}

void wide_compare_case(Context& ctx) {
  auto k = TESSERA_KERNEL(wide_compare_kernel, x, lt, le, gt, ge, eq, n, C, WIDE, BLOCK);
  const int n = 64;
  const std::pair<DType, DType> widenings[] = {{DType::i32, DType::i64}, {DType::u32, DType::u64}};
  for (auto [narrow, wide] : widenings) {
    HostArray a = ctx.random_full(narrow, n);
    const int64_t corners[] = {-5, 0, 2, 3, 4, 100, -1, ref::int_min(narrow), ref::int_max(narrow)};
    for (int i = 0; i < 9; ++i) a.set_int(i, ref::wrap(narrow, static_cast<uint64_t>(corners[i])));
    for (int64_t c : {int64_t{3}, int64_t{0}, int64_t{-1}, int64_t{1} << 40}) {
      if (!ir::is_signed_int(narrow) && c < 0) continue;
      DevArray da = ctx.upload(a);
      DevArray r[5] = {ctx.poisoned(DType::i8, n), ctx.poisoned(DType::i8, n),
                       ctx.poisoned(DType::i8, n), ctx.poisoned(DType::i8, n),
                       ctx.poisoned(DType::i8, n)};
      k[{cdiv(n, 32)}](da.buf, r[0].buf, r[1].buf, r[2].buf, r[3].buf, r[4].buf, n, c, wide, 32);
      const char* names[] = {" < ", " <= ", " > ", " >= ", " == "};
      for (int o = 0; o < 5; ++o) {
        HostArray want(DType::i8, n);
        for (int i = 0; i < n; ++i) {
          const int64_t v = a.i(i);  // exact in int64 for both i32 and u32
          const bool truth[] = {(v < c), (v <= c), (v > c), (v >= c), (v == c)};
          want.set_int(i, truth[o]);
        }
        ctx.check_exact(dname(narrow) + ".to(" + dname(wide) + ")" + names[o] + std::to_string(c),
                        ctx.download(r[o]), want);
      }
    }
  }
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"driver/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

void register_drivers(std::vector<Case>& out) {
  add(out, "narrow_negate_widen", needs_of({DType::i8, DType::i16, DType::i64}),
      narrow_negate_case);
  add(out, "f16_nan", needs_of({DType::f16}), f16_nan_case);
  add(out, "special_constants", needs_of({DType::f16, DType::bf16, DType::f64}),
      special_constant_case);
  add(out, "wide_compare", needs_of({DType::i64}), wide_compare_case);
}

}  // namespace tessera::conformance
