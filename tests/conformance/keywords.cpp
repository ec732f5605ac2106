/// \file Triton's keyword arguments of reductions and dot: `dtype=` on tl::sum and tl::cumsum
/// (the input converted first, the sum accumulated in that dtype: 8/16-bit integers wrap in
/// their width, f16/bf16 add in f16/bf16, i32 inputs summed in i64 do not overflow) and
/// `out_dtype=` on tl::dot (f16 inputs accumulate in f16 or f32; other inputs keep their
/// default accumulator, as in Triton).
#include <cmath>

#include "tests/conformance/framework.h"
#include "tests/conformance/kernel_util.h"
#include "tests/conformance/reference.h"

namespace tessera::conformance {
namespace {

constexpr int kRows = 8, kCols = 32;

/// An [8, 32] tile (elements past n read 0) summed (SCAN false) or prefix-summed along AXIS
/// in DT.
void sum_kernel(tl::pointer x, tl::pointer out, tl::i32 n, int AXIS, bool SCAN, tl::DType DT) {
  auto offs = offsets({kRows, kCols});
  auto t = tl::load(x + offs, offs < n, 0);
  auto r = SCAN ? tl::cumsum(t, AXIS, false, DT) : tl::sum(t, AXIS, false, DT);
  expect_dtype(r, DT, "the dtype= result");
  if (SCAN) return tl::store(out + offs, r);
  tl::store(out + tl::arange(0, AXIS == 0 ? kCols : kRows), r);
}

void sum_case(Context& ctx, DType in, DType dt, bool scan) {
  auto k = TESSERA_KERNEL(sum_kernel, x, out, n, AXIS, SCAN, DT);
  const int total = kRows * kCols, n = 203;  // the last row is partly masked
  HostArray x = ir::is_float(in) ? ctx.random(in, total, -4, 4) : ctx.random_full(in, total);
  HostArray c = ref::convert(x, dt);  // the elements as the kernel sums them
  for (int axis : {0, 1}) {
    const int outer = axis == 0 ? kCols : kRows, len = axis == 0 ? kRows : kCols;
    const int outs = scan ? total : outer;
    DevArray dx = ctx.upload(x), o = ctx.poisoned(dt, outs);
    k[{1}](dx.buf, o.buf, n, axis, scan, dt);
    std::vector<int64_t> want_i(outs);
    std::vector<double> want_f(outs), scale(outs);
    for (int j = 0; j < outer; ++j) {
      uint64_t acc = 0;
      double accf = 0, mag = 0;
      for (int i = 0; i < len; ++i) {
        const int e = axis == 0 ? i * kCols + j : j * kCols + i;
        if (e < n) {
          acc += c.u(e);
          accf += c.f(e);
          mag += std::fabs(c.f(e));
        }
        const int slot = scan ? e : j;
        want_i[slot] = ref::wrap(dt, acc);
        want_f[slot] = accf;
        scale[slot] = mag;
      }
    }
    const std::string what = std::string(scan ? "cumsum" : "sum") + " of " + dname(in) +
                             " with dtype=" + dname(dt) + " axis " + std::to_string(axis);
    if (ir::is_float(dt))
      ctx.check_close(what, ctx.download(o), want_f, tol::sum(dt, dt, len), &scale);
    else
      ctx.check_ints(what, ctx.download(o), want_i);
  }
}

/// c = a x b for [32, 32] tiles with out_dtype OUT (with an accumulator of ACC_DT when set).
void dot_kernel(tl::pointer a, tl::pointer b, tl::pointer c, tl::DType OUT, bool WITH_ACC,
                tl::DType EXPECT) {
  auto offs = offsets({32, 32});
  auto x = tl::load(a + offs), y = tl::load(b + offs);
  tl::DotOptions o{.out_dtype = OUT, .input_precision = tl::InputPrecision::Ieee};
  auto r = WITH_ACC ? tl::dot(x, y, tl::zeros({32, 32}, EXPECT), o) : tl::dot(x, y, o);
  expect_dtype(r, EXPECT, "the out_dtype= result");
  tl::store(c + offs, r);
}

void dot_case(Context& ctx, DType in, DType out, bool with_acc, DType expect) {
  auto k = TESSERA_KERNEL(dot_kernel, a, b, c, OUT, WITH_ACC, EXPECT);
  const int m = 32;
  HostArray a = ctx.random(in, m * m, -2, 2), b = ctx.random(in, m * m, -2, 2);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(expect, m * m);
  k[{1}](da.buf, db.buf, o.buf, out, with_acc, expect);
  std::vector<double> want(m * m), scale(m * m);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      for (int kk = 0; kk < m; ++kk) {
        want[i * m + j] += a.f(i * m + kk) * b.f(kk * m + j);
        scale[i * m + j] += std::fabs(a.f(i * m + kk) * b.f(kk * m + j));
      }
    }
  }
  const std::string what = "dot of " + dname(in) + " with out_dtype=" + dname(out) +
                           (with_acc ? " and an accumulator" : "");
  if (!ir::is_float(expect)) {
    std::vector<int64_t> wi(want.begin(), want.end());
    return ctx.check_ints(what, ctx.download(o), wi);
  }
  ctx.check_close(what, ctx.download(o), want, tol::dot(expect, m), &scale);
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"keywords/" + std::move(name), std::move(needs), "", std::move(body)});
}

}  // namespace

void register_keywords(std::vector<Case>& out) {
  const std::pair<DType, DType> sums[] = {
      {DType::i32, DType::i64},   {DType::i8, DType::i8},   {DType::u8, DType::u8},
      {DType::i16, DType::i16},   {DType::u16, DType::u32}, {DType::f16, DType::f16},
      {DType::bf16, DType::bf16}, {DType::f16, DType::f32}, {DType::f32, DType::f64},
      {DType::i32, DType::f32},   {DType::f32, DType::i32}};
  for (bool scan : {false, true}) {
    for (auto [in, dt] : sums) {
      add(out, std::string(scan ? "cumsum" : "sum") + "_dtype/" + dname(in) + "_as_" + dname(dt),
          needs_of({in, dt}), [in, dt, scan](Context& ctx) { sum_case(ctx, in, dt, scan); });
    }
  }
  const DType f16 = DType::f16, f32 = DType::f32;
  add(out, "dot_out_dtype/f16_as_f16", needs_of(f16),
      [=](Context& ctx) { dot_case(ctx, f16, f16, false, f16); });
  add(out, "dot_out_dtype/f16_as_f32", needs_of(f16),
      [=](Context& ctx) { dot_case(ctx, f16, f32, false, f32); });
  add(out, "dot_out_dtype/f16_as_f16_with_acc", needs_of(f16),
      [=](Context& ctx) { dot_case(ctx, f16, f16, true, f16); });
  // As in Triton, out_dtype does not narrow f32 or int8 inputs' accumulators.
  add(out, "dot_out_dtype/f32_as_f16", {},
      [=](Context& ctx) { dot_case(ctx, f32, f16, false, f32); });
  add(out, "dot_out_dtype/i8_as_i32", needs_of(DType::i8),
      [=](Context& ctx) { dot_case(ctx, DType::i8, DType::i32, false, DType::i32); });
}

}  // namespace tessera::conformance
