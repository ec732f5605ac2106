/// \file Rows walked by several loops over one range (Triton's tutorial layer norm reads its row in
/// three): single-trip versioning (core/passes/single_trip.h) runs a copy with the loops opened and
/// the row read once where a run-time test proves one trip per loop and the statistics' stores
/// outside the row, the loops as written elsewhere. Rows shorter than, as long as and longer than
/// the block; the statistics stored into the row itself (the test must fail: the last pass reads
/// the stored mean back); the output written over the input.
#include <cmath>
#include <string>
#include <vector>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

void layer_norm_kernel(tl::ptr<float> x_ptr, tl::ptr<float> y_ptr, tl::ptr<float> w_ptr,
                       tl::ptr<float> b_ptr, tl::ptr<float> mean_ptr, tl::ptr<float> rstd_ptr,
                       tl::i32 row_stride, tl::i32 N, tl::f32 eps, int BLOCK) {
  auto row = tl::program_id(0);
  auto x_row = x_ptr + row * row_stride;
  auto y_row = y_ptr + row * row_stride;
  auto acc = tl::zeros<float>({BLOCK});
  for (auto off : tl::range(0, N, BLOCK)) {
    auto cols = off + tl::arange(0, BLOCK);
    acc += tl::load(x_row + cols, cols < N, 0.0f);
  }
  auto mean = tl::sum(acc, 0) / N;
  auto acc_sq = tl::zeros<float>({BLOCK});
  for (auto off : tl::range(0, N, BLOCK)) {
    auto cols = off + tl::arange(0, BLOCK);
    auto x = tl::load(x_row + cols, cols < N, 0.0f);
    auto centered = tl::where(cols < N, x - mean, 0.0f);
    acc_sq += centered * centered;
  }
  auto rstd = 1.0f / tl::sqrt(tl::sum(acc_sq, 0) / N + eps);
  tl::store(mean_ptr + row, mean);
  tl::store(rstd_ptr + row, rstd);
  for (auto off : tl::range(0, N, BLOCK)) {
    auto cols = off + tl::arange(0, BLOCK);
    auto mask = cols < N;
    auto x = tl::load(x_row + cols, mask, 0.0f);
    tl::store(y_row + cols,
              (x - mean) * rstd * tl::load(w_ptr + cols, mask) + tl::load(b_ptr + cols, mask),
              mask);
  }
}

constexpr int kBlock = 64;
constexpr float kEps = 1e-5f;

/// Where the statistics and the output go.
enum class Layout { Apart, MeanInRow, InPlace };

/// One program over one row of n elements; `layout` as above.
void row_case(Context& ctx, int n, Layout layout) {
  auto k = TESSERA_KERNEL(layer_norm_kernel, x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
                          row_stride, N, eps, BLOCK);
  const std::string what = "n " + std::to_string(n) +
                           (layout == Layout::MeanInRow ? " mean stored in the row"
                            : layout == Layout::InPlace ? " in place"
                                                        : "");
  HostArray x = ctx.random(DType::f32, n, -2, 2), w = ctx.random(DType::f32, n, 0.5, 1.5),
            b = ctx.random(DType::f32, n, -1, 1);
  DevArray dx = ctx.upload(x), dw = ctx.upload(w), db = ctx.upload(b);
  DevArray y = ctx.poisoned(DType::f32, n), mean = ctx.poisoned(DType::f32, 1),
           rstd = ctx.poisoned(DType::f32, 1);
  const size_t at = static_cast<size_t>(n) / 3;  // where MeanInRow stores the mean
  BufferBase mean_buf = layout == Layout::MeanInRow ? dx.buf.sub(at * 4, 4) : mean.buf;
  BufferBase y_buf = layout == Layout::InPlace ? dx.buf : y.buf;
  k[{1}](dx.buf, y_buf, dw.buf, db.buf, mean_buf, rstd.buf, n, n, kEps, kBlock);

  // The program as written: two passes over x, the statistics stored, then the last pass over x
  // as it is after those stores.
  double m = 0, v = 0, magnitude = 0;
  for (int j = 0; j < n; ++j) m += x.f(j), magnitude += std::fabs(x.f(j));
  m /= n;
  for (int j = 0; j < n; ++j) v += (x.f(j) - m) * (x.f(j) - m);
  const double r = 1.0 / std::sqrt(v / n + kEps);
  std::vector<double> last(n), want(n), scale(n);
  for (int j = 0; j < n; ++j) last[j] = x.f(j);
  if (layout == Layout::MeanInRow) last[at] = m;
  for (int j = 0; j < n; ++j) {
    want[j] = (last[j] - m) * r * w.f(j) + b.f(j);
    scale[j] = (std::fabs(last[j]) + std::fabs(m)) * r * std::fabs(w.f(j)) + std::fabs(b.f(j));
  }
  const Tol tol = tol::composite(DType::f32, n + 8);
  ctx.check_close(what + ": y", ctx.download(layout == Layout::InPlace ? dx : y), want, tol,
                  &scale);
  ctx.check_close(what + ": rstd", ctx.download(rstd), {r}, tol);
  // The mean of values that nearly cancel errs relative to their magnitude, not to itself.
  const std::vector<double> mean_scale = {magnitude / n};
  if (layout != Layout::MeanInRow)
    ctx.check_close(what + ": mean", ctx.download(mean), {m}, tol, &mean_scale);
}

void single_trip_case(Context& ctx) {
  for (int n : {1, 48, 64, 100, 200}) row_case(ctx, n, Layout::Apart);
  for (int n : {48, 100}) row_case(ctx, n, Layout::InPlace);
  // The mean stored into the row is read back by the last pass only where one element's store
  // precedes another thread's load: the interpreters (the semantics, and the SIMT devices' lanes
  // in step). On a GPU nothing orders one thread's store before another's load without a
  // barrier, so there the program is racy and this variant does not run.
  const std::string& name = ctx.dev().name();
  if (name.starts_with("host") || name.starts_with("simt"))
    for (int n : {48, 64, 100}) row_case(ctx, n, Layout::MeanInRow);
}

}  // namespace

void register_single_trip(std::vector<Case>& out) {
  out.push_back({"single_trip/layer_norm", {}, "", single_trip_case});
}

}  // namespace tessera::conformance
