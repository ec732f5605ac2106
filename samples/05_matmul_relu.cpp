// \file Sample 5: a 2-D grid, pointer tiles and dot. Each program computes a BLOCK_M x BLOCK_N
// tile of C = relu(A @ B): `indices_m[{_, None}]` is Triton's `indices_m[:, None]`, the K loop
// carries the accumulator and advances the pointer tiles, and tl::dot multiplies tiles (f32
// inputs use TF32, like Triton's default).
// The kernel itself is in samples/kernels/matmul_relu.h, which the `tessera` tool shares.
#include "samples/common.h"
#include "samples/kernels/matmul_relu.h"

using samples::matmul_relu_kernel;

int main(int argc, char** argv) {
  return samples::run("05_matmul_relu", argc, argv, [](const tessera::Device& dev) {
    const bool gpu = samples::is_gpu(dev);
    const int M = gpu ? 4000 : 200, N = gpu ? 4000 : 136, K = gpu ? 4000 : 300;
    const int BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32;
    auto ha = samples::random_floats(size_t(M) * K, -1, 1, 6);
    auto hb = samples::random_floats(size_t(K) * N, -1, 1, 7);
    auto a = dev.upload(ha), b = dev.upload(hb);
    auto c = dev.alloc<float>(size_t(M) * N);
    c.fill(NAN);

    auto matmul =
        TESSERA_KERNEL(matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                       stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
    tessera::Grid grid(tessera::cdiv(M, BLOCK_M), tessera::cdiv(N, BLOCK_N));
    double ms = samples::time_ms(dev, [&] {
      matmul[{grid}](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M, BLOCK_N, BLOCK_K);
    });

    // fp64 reference on (a sample of) rows: all of them on the host, every 37th on a GPU. The
    // tensor cores take f32 inputs as TF32, rounded (mma.sync, and Tessera's FMA path) or
    // truncated (Hopper's wgmma): each product is then off by up to 2^-9 of its size, so each
    // output's error is measured against the sum of its products' magnitudes.
    auto hc = c.download();
    double err = 0;
    for (int i = 0; i < M; i += gpu ? 37 : 1) {
      for (int j = 0; j < N; ++j) {
        double s = 0, magnitude = 0;
        for (int k = 0; k < K; ++k) {
          const double p = double(ha[size_t(i) * K + k]) * double(hb[size_t(k) * N + j]);
          s += p;
          magnitude += std::fabs(p);
        }
        const double e = std::fabs(double(hc[size_t(i) * N + j]) - std::max(s, 0.0)) /
                         std::max(magnitude, 1e-30);
        err = std::isnan(e) ? INFINITY : std::max(err, e);
      }
    }
    // TF32 inputs (2^-9) and the f32 accumulation of K products (a few 2^-24 per step).
    return samples::report(
        "05_matmul_relu", dev,
        "[" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + "]", err,
        0x1p-9 + 0x1p-12, ms);
  });
}
