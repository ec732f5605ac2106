/// \file Traced kernels end to end on a CUDA device: tile IR -> lowering -> PTX -> the driver's JIT
/// -> launch through tessera::Kernel, against double-precision references, with sizes that are not
/// multiples of the block and poisoned outputs.
#include <cmath>
#include <random>

#include "helpers.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"

namespace cuda_test {
namespace {

std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST_CASE("cuda kernels: vector add and gelu, with a ragged tail") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int n = (1 << 20) + 17;
  auto hx = random_floats(n, -4, 4, 1), hy = random_floats(n, -4, 4, 2);
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  out.fill(NAN);
  auto add = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
  add[{tessera::cdiv(n, 1024)}](x, y, out, n, 1024);
  std::vector<float> got = out.download();
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != hx[i] + hy[i];
  CHECK(wrong == 0);

  auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
  out.fill(NAN);
  gelu[{tessera::cdiv(n, 512), {.num_warps = 4}}](x, out, n, 512);
  got = out.download();
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double v = hx[i], a = 0.79788456 * (v + 0.044715 * v * v * v);
    double ref = 0.5 * v * (1 + std::tanh(a));
    worst = std::max(worst, std::fabs(got[i] - ref) / std::max(1.0, std::fabs(ref)));
  }
  MESSAGE("gelu worst relative error " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("cuda kernels: softmax rows and a row sum looping over tiles") {
  CUDA_DEVICE_OR_SKIP(dev);
  const int rows = 257, cols = 1000;
  auto hx = random_floats(size_t{rows} * cols, -5, 5, 3);
  auto x = dev.upload(hx);
  auto y = dev.alloc<float>(size_t{rows} * cols);
  y.fill(NAN);
  auto softmax = TESSERA_KERNEL(samples::softmax_kernel, x_ptr, y_ptr, x_row_stride, y_row_stride,
                                num_cols, BLOCK_SIZE);
  softmax[{rows}](x, y, cols, cols, cols, 1024);
  std::vector<float> got = y.download();
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) mx = std::max(mx, double(hx[r * cols + c]));
    for (int c = 0; c < cols; ++c) sum += std::exp(hx[r * cols + c] - mx);
    for (int c = 0; c < cols; ++c) {
      double ref = std::exp(hx[r * cols + c] - mx) / sum;
      worst = std::max(worst, std::fabs(got[r * cols + c] - ref) / ref);
    }
  }
  MESSAGE("softmax worst relative error " << worst);
  CHECK(worst < 1e-5);

  auto out = dev.alloc<float>(rows);
  out.fill(NAN);
  auto row_sum = TESSERA_KERNEL(samples::row_sum_kernel, x_ptr, out_ptr, N, BLOCK_SIZE);
  row_sum[{rows}](x, out, cols, 256);
  std::vector<float> sums = out.download();
  worst = 0;
  for (int r = 0; r < rows; ++r) {
    double ref = 0, mag = 0;
    for (int c = 0; c < cols; ++c) {
      ref += hx[r * cols + c];
      mag += std::fabs(hx[r * cols + c]);
    }
    worst = std::max(worst, std::fabs(sums[r] - ref) / mag);
  }
  MESSAGE("row sum worst error relative to the sum of magnitudes " << worst);
  CHECK(worst < 1e-6);
}

}  // namespace
}  // namespace cuda_test
