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

    auto matmul = TESSERA_KERNEL(matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                                 stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                                 BLOCK_N, BLOCK_K);
    tessera::Grid grid(tessera::cdiv(M, BLOCK_M), tessera::cdiv(N, BLOCK_N));
    double ms = samples::time_ms(dev, [&] {
      matmul[{grid}](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M, BLOCK_N, BLOCK_K);
    });

    // fp64 reference on (a sample of) rows: all of them on the host, every 37th on a GPU. The
    // inputs are rounded to TF32 first, as the tensor cores (and Tessera's FMA path) round them,
    // so what remains is the f32 accumulation error.
    auto hc = c.download();
    std::vector<float> out;
    std::vector<double> ref;
    for (int i = 0; i < M; i += gpu ? 37 : 1) {
      for (int j = 0; j < N; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k)
          s += double(tessera::round_to_tf32(ha[size_t(i) * K + k])) *
               double(tessera::round_to_tf32(hb[size_t(k) * N + j]));
        ref.push_back(std::max(s, 0.0));
        out.push_back(hc[size_t(i) * N + j]);
      }
    }
    double err = samples::max_rel_err(out, ref);
    // f32 accumulation of K exact products: rounding grows like sqrt(K) ulps of the partial sums.
    return samples::report("05_matmul_relu", dev,
                           "[" + std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + "]",
                           err, 1e-3, ms);
  });
}
