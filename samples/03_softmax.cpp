// \file Sample 3: a row-wise kernel with two reductions. One program owns one row; BLOCK is the
// next power of two above the row length, and the masked lanes load -inf so they vanish from
// the max and contribute exp(-inf) = 0 to the sum.
// The kernel itself is in samples/kernels/softmax.h, which the `tessera` tool shares.
#include "samples/common.h"
#include "samples/kernels/softmax.h"

using samples::softmax_kernel;

/// Triton's next_power_of_2.
int next_power_of_2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

int main(int argc, char** argv) {
  return samples::run("03_softmax", argc, argv, [](const tessera::Device& dev) {
    const int M = samples::is_gpu(dev) ? 8192 : 257, N = samples::is_gpu(dev) ? 4000 : 781;
    const int BLOCK = next_power_of_2(N);
    auto hx = samples::random_floats(size_t(M) * N, -5, 5, 4);
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(size_t(M) * N);
    y.fill(NAN);

    auto softmax = TESSERA_KERNEL(softmax_kernel, x_ptr, y_ptr, x_row_stride, y_row_stride,
                                  num_cols, BLOCK_SIZE);
    double ms = samples::time_ms(dev, [&] { softmax[{M}](x, y, N, N, N, BLOCK); });

    std::vector<double> ref(size_t(M) * N);
    for (int r = 0; r < M; ++r) {
      const float* row = &hx[size_t(r) * N];
      double mx = *std::max_element(row, row + N), sum = 0;
      for (int c = 0; c < N; ++c) sum += std::exp(double(row[c]) - mx);
      for (int c = 0; c < N; ++c) ref[size_t(r) * N + c] = std::exp(double(row[c]) - mx) / sum;
    }
    double err = samples::max_rel_err(y.download(), ref);
    // Outputs are below 1, so this is an absolute error: f32 exp and a sum of N terms.
    return samples::report("03_softmax", dev,
                           "[" + std::to_string(M) + ", " + std::to_string(N) + "]", err, 1e-6, ms);
  });
}
