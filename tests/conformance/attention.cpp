/// \file Attention's forward pass (samples/kernels/attention.h): two dots per key block with an
/// online softmax between them, a loop bound that depends on the program (causal), rows and keys
/// past the sequence's end; f16 and bf16 against an fp64 reference.
#include <algorithm>
#include <cmath>

#include "samples/kernels/attention.h"
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

/// Head dimension D, BM x BN blocks, launch options num_warps and num_stages.
struct Blocks {
  int D, BM, BN, warps, stages;
};

/// Which kernel: attention_kernel (pointer tiles), attention_desc_kernel, or the latter with its
/// key loop warp-specialized.
enum class Form { Pointers, Descriptors, WarpSpecialized };

void attention_case(Context& ctx, DType t, bool causal, Blocks blocks, Form form = Form::Pointers) {
  // Two heads of 100 positions: the last query block and the last key block are partial.
  const int heads = 2, seq = 100, D = blocks.D, BM = blocks.BM, BN = blocks.BN;
  const size_t n = size_t(heads) * seq * D;
  HostArray q = ctx.random(t, n, -1, 1), kk = ctx.random(t, n, -1, 1), v = ctx.random(t, n, -1, 1);
  DevArray dq = ctx.upload(q), dk = ctx.upload(kk), dv = ctx.upload(v), o = ctx.poisoned(t, n);
  const double sm_scale = 1.0 / std::sqrt(double(D));
  const LaunchOptions options{.num_warps = blocks.warps, .num_stages = blocks.stages};
  const float qk_scale = static_cast<float>(sm_scale * M_LOG2E);
  if (form == Form::Pointers) {
    auto k = TESSERA_KERNEL(samples::attention_kernel, q, k, v, out, qk_scale, seq, HEAD_DIM,
                            BLOCK_M, BLOCK_N, CAUSAL);
    k[{Grid(cdiv(seq, BM), heads), options}](dq.buf, dk.buf, dv.buf, o.buf, qk_scale, seq, D, BM,
                                             BN, causal ? 1 : 0);
  } else {
    auto k = TESSERA_KERNEL(samples::attention_desc_kernel, q, k, v, out, qk_scale, seq, rows,
                            HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, WS);
    k[{Grid(cdiv(seq, BM), heads), options}](dq.buf, dk.buf, dv.buf, o.buf, qk_scale, seq,
                                             heads * seq, D, BM, BN, causal ? 1 : 0,
                                             form == Form::WarpSpecialized ? 1 : 0);
  }
  std::vector<double> want(n), scale(n);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < seq; ++i) {
      const size_t row = (size_t(h) * seq + i) * D;
      const int keys = causal ? i + 1 : seq;
      std::vector<double> s(keys);
      for (int j = 0; j < keys; ++j) {
        const size_t key = (size_t(h) * seq + j) * D;
        for (int d = 0; d < D; ++d) s[j] += q.f(row + d) * kk.f(key + d);
        s[j] *= sm_scale;
      }
      const double top = *std::max_element(s.begin(), s.end());
      double l = 0;
      for (double& x : s) l += (x = std::exp(x - top));
      for (int d = 0; d < D; ++d) {
        double acc = 0, mag = 0;
        for (int j = 0; j < keys; ++j) {
          const double pv = s[j] * v.f((size_t(h) * seq + j) * D + d);
          acc += pv, mag += std::fabs(pv);
        }
        want[row + d] = acc / l, scale[row + d] = mag / l;
      }
    }
  // p enters the second dot rounded to the input dtype (one rounding of each weight) while the
  // row sum l uses it unrounded; the output rounds once more; exp2 and the f32 sums add a few
  // f32 ulps. Relative to sum |p_j v_j| / l.
  const Tol tol{0, 4 * tol::eps(t) + 64 * tol::eps(DType::f32), tol::min_normal(t)};
  ctx.check_close(dname(t) + (causal ? " causal" : "") + ", 2 heads x 100 x " + std::to_string(D) +
                      ", blocks " + std::to_string(BM) + "x" + std::to_string(BN),
                  ctx.download(o), want, tol, &scale);
}

}  // namespace

void register_attention(std::vector<Case>& out) {
  for (DType t : {DType::f16, DType::bf16})
    for (bool causal : {false, true})
      out.push_back(
          {"attention/forward/" + dname(t) + (causal ? "/causal" : ""), needs_of(t), "",
           [t, causal](Context& ctx) { attention_case(ctx, t, causal, {64, 64, 32, 4, 3}); }});
  // The descriptor form (TMA on sm_90a), plain and warp-specialized; the partial key block
  // reads the next head's first keys, which the mask zeroes.
  for (Form form : {Form::Descriptors, Form::WarpSpecialized})
    for (bool causal : {false, true}) {
      const std::string name = std::string("attention/forward_desc") +
                               (form == Form::WarpSpecialized ? "_ws" : "") + "/f16" +
                               (causal ? "/causal" : "");
      out.push_back({name, needs_of(DType::f16), "", [causal, form](Context& ctx) {
                       attention_case(ctx, DType::f16, causal, {64, 128, 64, 8, 3}, form);
                     }});
    }
  // Head dimension 128 at 128x128 blocks (bench's configuration): NVIDIA's Vulkan driver holds it
  // in 48 KiB by staging the dots' operands K-chunk by K-chunk; devices with less shared memory,
  // or the FMA form, skip it.
  for (bool causal : {false, true})
    out.push_back({std::string("attention/forward/f16/d128_128x128") + (causal ? "/causal" : ""),
                   needs_of(DType::f16), "shared memory for 128x128 blocks at head dimension 128",
                   [causal](Context& ctx) {
                     attention_case(ctx, DType::f16, causal, {128, 128, 128, 8, 2});
                   }});
}

}  // namespace tessera::conformance
