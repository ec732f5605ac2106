// \file Sample 6: attention's forward pass, softmax(q k^T / sqrt(d)) v, with the online softmax:
// each program keeps BLOCK_M query rows and walks the keys a block at a time, so the seq x seq
// score matrix never exists. Two dots per block (q k^T, then the weights times v), row maxima and
// sums between them, and a causal variant whose loop ends at the program's last row. f16 inputs,
// f32 accumulation. The kernel is in samples/kernels/attention.h (the conformance catalogue and
// the bench run it too).
#include "samples/common.h"
#include "samples/kernels/attention.h"

using samples::attention_kernel;
using tessera::half;

int main(int argc, char** argv) {
  return samples::run("06_attention", argc, argv, [](const tessera::Device& dev) {
    const bool gpu = samples::is_gpu(dev);
    const int heads = gpu ? 16 : 2, seq = gpu ? 2048 : 80, D = 64;
    // 128 query rows a program on CUDA; 64 on Vulkan, whose 48 KiB of shared memory per
    // workgroup (NVIDIA's driver) does not hold the 128-row block's staging (61 KiB).
    const int BLOCK_M = !gpu ? 32 : dev.info().kind == "cuda" ? 128 : 64;
    const int BLOCK_N = gpu ? 64 : 32;
    const size_t n = size_t(heads) * seq * D;
    std::vector<half> hq(n), hk(n), hv(n);
    const std::vector<float> rq = samples::random_floats(n, -1, 1, 8),
                             rk = samples::random_floats(n, -1, 1, 9),
                             rv = samples::random_floats(n, -1, 1, 10);
    for (size_t i = 0; i < n; ++i) hq[i] = half(rq[i]), hk[i] = half(rk[i]), hv[i] = half(rv[i]);
    auto q = dev.upload(hq), k = dev.upload(hk), v = dev.upload(hv);
    auto out = dev.alloc<half>(n);

    auto attention = TESSERA_KERNEL(attention_kernel, q, k, v, out, qk_scale, seq, HEAD_DIM,
                                    BLOCK_M, BLOCK_N, CAUSAL);
    const double sm_scale = 1.0 / std::sqrt(double(D));
    const float qk_scale = static_cast<float>(sm_scale * 1.4426950408889634);  // exp2 inside
    tessera::Grid grid(tessera::cdiv(seq, BLOCK_M), heads);

    // fp64 reference on (a sample of) rows of each head: every row on a CPU, every 61st on a GPU.
    // The error is relative to sum_j |p_j v_j| / sum_j p_j, the size of what is summed.
    double err = 0, ms = 0;
    for (int causal = 0; causal < 2; ++causal) {
      out.fill(half(NAN));
      ms += samples::time_ms(dev, [&] {
        attention[{grid}](q, k, v, out, qk_scale, seq, D, BLOCK_M, BLOCK_N, causal);
      });
      const std::vector<half> ho = out.download();
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < seq; i += gpu ? 61 : 1) {
          const size_t row = (size_t(h) * seq + i) * D;
          const int keys = causal ? i + 1 : seq;
          std::vector<double> s(keys, 0.0);
          double top = -INFINITY, l = 0;
          for (int j = 0; j < keys; ++j) {
            for (int d = 0; d < D; ++d)
              s[j] += double(hq[row + d]) * double(hk[(size_t(h) * seq + j) * D + d]);
            top = std::max(top, s[j] *= sm_scale);
          }
          for (double& x : s) l += (x = std::exp(x - top));
          for (int d = 0; d < D; ++d) {
            double want = 0, size = 0;
            for (int j = 0; j < keys; ++j) {
              const double pv = s[j] * double(hv[(size_t(h) * seq + j) * D + d]);
              want += pv, size += std::fabs(pv);
            }
            const double e = std::fabs(double(ho[row + d]) - want / l) / std::max(size / l, 1e-30);
            err = std::isnan(e) ? INFINITY : std::max(err, e);
          }
        }
    }
    // The weights enter the second dot as f16 (2^-11 each), the output rounds to f16 (2^-11).
    return samples::report("06_attention", dev,
                           "[" + std::to_string(heads) + ", " + std::to_string(seq) + ", " +
                               std::to_string(D) + "] plain and causal",
                           err, 0x1p-8, ms);
  });
}
