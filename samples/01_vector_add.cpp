// \file Sample 1: the smallest kernel. One program adds BLOCK elements: it finds its block with
// program_id, builds the block's offsets with arange, and masks the tail that runs past n.
//
// Triton:                                   Tessera:
//   pid = tl.program_id(axis=0)               auto pid = tl::program_id(0);
//   offs = pid * BLOCK + tl.arange(0, BLOCK)  auto offs = pid * BLOCK + tl::arange(0, BLOCK);
//   mask = offs < n                           auto mask = offs < n;
//   x = tl.load(x_ptr + offs, mask=mask)      auto x = tl::load(x_ptr + offs, mask);
// The kernel itself is in samples/kernels/vector_add.h, which the `tessera` tool shares.
#include "samples/common.h"
#include "samples/kernels/vector_add.h"

using samples::vector_add_kernel;

int main(int argc, char** argv) {
  return samples::run("01_vector_add", argc, argv, [](const tessera::Device& dev) {
    // A size that is not a multiple of BLOCK, so the last program's mask matters.
    const int n = samples::is_gpu(dev) ? (1 << 24) + 17 : 100003;
    const int BLOCK = 1024;
    auto hx = samples::random_floats(n, -1, 1, 1), hy = samples::random_floats(n, -1, 1, 2);

    auto x = dev.upload(hx), y = dev.upload(hy);
    auto out = dev.alloc<float>(n);
    out.fill(NAN);  // poison: an element the kernel misses fails the check

    auto add = TESSERA_KERNEL(vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
    auto launch = [&] { add[{tessera::cdiv(n, BLOCK)}](x, y, out, n, BLOCK); };
    double ms = samples::time_ms(dev, launch);

    std::vector<double> ref(n);
    for (int i = 0; i < n; ++i) ref[i] = double(hx[i]) + double(hy[i]);
    double err = samples::max_rel_err(out.download(), ref);
    // One f32 rounding of an exact sum: at most half an ulp.
    return samples::report("01_vector_add", dev, "[" + std::to_string(n) + "]", err, 1e-7, ms);
  });
}
