// \file Sample 2: an elementwise kernel with math. GeLU in its tanh form, with tanh written as
// (exp(2a) - 1) / (exp(2a) + 1) exactly as the seed's Triton kernel does. C++ float literals mix
// with f32 tiles the way Python numbers do in Triton: `0.5f * v` stays f32.
// The kernel itself is in samples/kernels/gelu.h, which the `tessera` tool shares.
#include "samples/common.h"
#include "samples/kernels/gelu.h"

using samples::gelu_kernel;

int main(int argc, char** argv) {
  return samples::run("02_gelu", argc, argv, [](const tessera::Device& dev) {
    const int n = samples::is_gpu(dev) ? (1 << 28) : 200003;
    const int BLOCK = 1024;
    auto hx = samples::random_floats(n, -4, 4, 3);
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(n);
    y.fill(NAN);

    auto gelu = TESSERA_KERNEL(gelu_kernel, x_ptr, y_ptr, n, BLOCK);
    double ms = samples::time_ms(dev, [&] { gelu[{tessera::cdiv(n, BLOCK)}](x, y, n, BLOCK); });

    std::vector<double> ref(n);
    for (int i = 0; i < n; ++i) {
      double v = hx[i], a = 0.79788456 * (v + 0.044715 * v * v * v);
      ref[i] = 0.5 * v * (1.0 + std::tanh(a));
    }
    double err = samples::max_rel_err(y.download(), ref);
    // f32 arithmetic over ~10 operations plus exp: a few ulps of the largest intermediate.
    return samples::report("02_gelu", dev, "[" + std::to_string(n) + "]", err, 1e-5, ms);
  });
}
