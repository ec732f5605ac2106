// \file Sample 4: a loop over tiles. When a row is longer than one tile, the program walks it
// BLOCK columns at a time with tl::range, an IR loop. `acc` is assigned inside the loop body, so
// Tessera carries it from one iteration to the next: no annotation needed.
// The kernel itself is in samples/kernels/row_sum.h, which the `tessera` tool shares.
#include "samples/common.h"
#include "samples/kernels/row_sum.h"

using samples::row_sum_kernel;

int main(int argc, char** argv) {
  return samples::run("04_row_sum", argc, argv, [](const tessera::Device& dev) {
    const int M = samples::is_gpu(dev) ? 4096 : 129, N = samples::is_gpu(dev) ? 16384 : 5001;
    const int BLOCK = 1024;
    auto hx = samples::random_floats(size_t(M) * N, -1, 1, 5);
    auto x = dev.upload(hx);
    auto out = dev.alloc<float>(M);
    out.fill(NAN);

    auto row_sum = TESSERA_KERNEL(row_sum_kernel, x_ptr, out_ptr, N, BLOCK_SIZE);
    double ms = samples::time_ms(dev, [&] { row_sum[{M}](x, out, N, BLOCK); });

    std::vector<double> ref(M, 0.0);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < N; ++c) ref[r] += hx[size_t(r) * N + c];
    double err = samples::max_rel_err(out.download(), ref);
    // An f32 sum of N values in [-1, 1]: rounding grows like sqrt(N) ulps of the partial sums.
    return samples::report("04_row_sum", dev,
                           "[" + std::to_string(M) + ", " + std::to_string(N) + "]", err, 1e-4, ms);
  });
}
