/// \file tl::dot: M, N, K from 16 to 256 (and shapes that are not multiples of the tile), 2-D
/// grids with a K loop under num_stages 1-4, num_warps 1-8, transposed operands, fp16 (f32 and
/// f16 accumulators), bf16, tf32, ieee fp32, fp64 and int8 inputs, epilogues (bias matrix, rows,
/// columns, relu, softmax, transposed output), chained dots and a dot without loads.
///
/// References are fp64 sums of exactly represented products: TF32 inputs are rounded with
/// round_to_tf32 first, so only the accumulation differs, bounded relative to sum |a_ik b_kj|.
#include <cmath>

#include "core/support/float16.h"
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

using tl::_;
using tl::None;

enum class Epi { None, AddMatrix, AddRows, AddCols, Relu, Softmax, ChainDot, TransOut };

/// The epilogue applied to a [BM, BN] accumulator tile.
tl::tensor epilogue(Epi epi, tl::tensor acc, const tl::tensor& bias, const tl::tensor& w,
                    const tl::tensor& rm, const tl::tensor& rn, const tl::tensor& M,
                    const tl::tensor& N, const tl::tensor& mask) {
  const int BM = static_cast<int>(rm.shape()[0]), BN = static_cast<int>(rn.shape()[0]);
  switch (epi) {
    case Epi::AddMatrix:
      return acc + tl::load(bias + rm[{_, None}] * N + rn[{None, _}], mask, 0);
    case Epi::AddRows:
      return acc + tl::load(bias + rm, rm < M, 0)[{_, None}];
    case Epi::AddCols:
      return acc + tl::load(bias + rn, rn < N, 0)[{None, _}];
    case Epi::Relu:
      return tl::maximum(acc, 0);
    case Epi::Softmax: {
      auto s = tl::where(rn[{None, _}] < N, acc, -INFINITY);
      auto e = tl::exp(s - tl::max(s, 1)[{_, None}]);
      return e / tl::sum(e, 1)[{_, None}];
    }
    case Epi::ChainDot: {  // (A B) W with W: N x N, one column block
      auto wm = (rn[{_, None}] < N) & (rn[{None, _}] < N);
      auto W = tl::load(w + rn[{_, None}] * N + rn[{None, _}], wm, 0.0f);
      return tl::dot(acc, W, tl::zeros<float>({BM, BN}), tl::InputPrecision::Ieee);
    }
    default:
      return acc;
  }
}

void dot_kernel(tl::pointer a, tl::pointer b, tl::pointer c, tl::pointer bias, tl::ptr<float> w,
                tl::i32 M, tl::i32 N, tl::i32 K, int BM, int BN, int BK, bool TA, bool TB, Epi EPI,
                bool IEEE, tl::DType ACC) {
  auto rm = tl::program_id(0) * BM + tl::arange(0, BM);
  auto rn = tl::program_id(1) * BN + tl::arange(0, BN);
  auto rk = tl::arange(0, BK);
  auto prec = IEEE ? tl::InputPrecision::Ieee : tl::InputPrecision::Tf32;
  auto acc = tl::zeros({BM, BN}, ACC);
  for (auto k0 : tl::range(0, K, BK)) {
    auto kk = k0 + rk;
    // A is M x K row-major, or stored transposed (K x M) and transposed back in the kernel.
    auto A = TA ? tl::trans(tl::load(a + kk[{_, None}] * M + rm[{None, _}],
                                     (kk[{_, None}] < K) & (rm[{None, _}] < M), 0))
                : tl::load(a + rm[{_, None}] * K + kk[{None, _}],
                           (rm[{_, None}] < M) & (kk[{None, _}] < K), 0);
    auto B = TB ? tl::trans(tl::load(b + rn[{_, None}] * K + kk[{None, _}],
                                     (rn[{_, None}] < N) & (kk[{None, _}] < K), 0))
                : tl::load(b + kk[{_, None}] * N + rn[{None, _}],
                           (kk[{_, None}] < K) & (rn[{None, _}] < N), 0);
    acc = tl::dot(A, B, acc, prec);
  }
  auto mask = (rm[{_, None}] < M) & (rn[{None, _}] < N);
  acc = epilogue(EPI, acc, bias, w, rm, rn, M, N, mask);
  if (EPI == Epi::TransOut)  // C stored N x M
    return tl::store(c + rn[{_, None}] * M + rm[{None, _}], tl::trans(acc), tl::trans(mask));
  tl::store(c + rm[{_, None}] * N + rn[{None, _}], acc, mask);
}

struct DotCase {
  std::string name;
  DType in, acc;
  bool ieee;
  int M, N, K, BM, BN, BK;
  bool ta = false, tb = false;
  Epi epi = Epi::None;
  std::vector<int> warps = {4};
  std::vector<int> stages = {3};
};

/// The input as the dot sees it: f32 rounded to TF32 unless ieee.
double operand(const HostArray& x, size_t i, bool tf32) {
  return tf32 ? static_cast<double>(round_to_tf32(static_cast<float>(x.f(i)))) : x.f(i);
}

void reference(const DotCase& c, const HostArray& a, const HostArray& b, const HostArray& bias,
               const HostArray& w, std::vector<double>& want, std::vector<double>& scale) {
  const bool tf32 = c.in == DType::f32 && !c.ieee;
  std::vector<double> p(c.M * c.N), s(c.M * c.N);
  for (int i = 0; i < c.M; ++i)
    for (int j = 0; j < c.N; ++j)
      for (int k = 0; k < c.K; ++k) {
        const size_t ia = c.ta ? size_t(k) * c.M + i : size_t(i) * c.K + k;
        const size_t ib = c.tb ? size_t(j) * c.K + k : size_t(k) * c.N + j;
        const double t = operand(a, ia, tf32) * operand(b, ib, tf32);
        p[i * c.N + j] += t, s[i * c.N + j] += std::fabs(t);
      }
  for (int i = 0; i < c.M; ++i) {
    double row_max = -INFINITY, row_sum = 0, row_scale = 0;
    for (int j = 0; j < c.N; ++j)
      row_max = std::max(row_max, p[i * c.N + j]), row_scale = std::max(row_scale, s[i * c.N + j]);
    for (int j = 0; j < c.N; ++j) row_sum += std::exp(p[i * c.N + j] - row_max);
    for (int j = 0; j < c.N; ++j) {
      double v = p[i * c.N + j], sc = s[i * c.N + j];
      switch (c.epi) {
        case Epi::AddMatrix:
          v += bias.f(i * c.N + j), sc += std::fabs(bias.f(i * c.N + j));
          break;
        case Epi::AddRows:
          v += bias.f(i), sc += std::fabs(bias.f(i));
          break;
        case Epi::AddCols:
          v += bias.f(j), sc += std::fabs(bias.f(j));
          break;
        case Epi::Relu:
          v = std::max(v, 0.0);
          break;
        case Epi::Softmax:
          v = std::exp(v - row_max) / row_sum, sc = 4 * v * row_scale + 1e-6;
          break;
        case Epi::ChainDot: {
          double v2 = 0, s2 = 0;
          for (int l = 0; l < c.N; ++l)
            v2 += p[i * c.N + l] * w.f(l * c.N + j),
                s2 += s[i * c.N + l] * std::fabs(w.f(l * c.N + j));
          v = v2, sc = s2;
          break;
        }
        default:
          break;
      }
      if (c.epi == Epi::TransOut)
        want[j * c.M + i] = v, scale[j * c.M + i] = sc;
      else
        want[i * c.N + j] = v, scale[i * c.N + j] = sc;
    }
  }
}

HostArray dot_inputs(Context& ctx, DType t, size_t n) {
  if (t == DType::i8) return ctx.random_full(t, n);
  return ctx.random(t, n, -1, 1);
}

void run_dot(Context& ctx, DotCase c) {
  auto k =
      TESSERA_KERNEL(dot_kernel, a, b, c, bias, w, M, N, K, BM, BN, BK, TA, TB, EPI, IEEE, ACC);
  if (ctx.quick())
    c.M = std::min(c.M, 64), c.N = std::min(c.N, std::max(64, c.BN)), c.K = std::min(c.K, 64);
  HostArray a = dot_inputs(ctx, c.in, size_t(c.M) * c.K),
            b = dot_inputs(ctx, c.in, size_t(c.K) * c.N);
  const size_t bias_n = c.epi == Epi::AddMatrix ? size_t(c.M) * c.N
                        : c.epi == Epi::AddRows ? c.M
                                                : c.N;
  HostArray bias = ctx.random(c.acc, bias_n, -1, 1),
            w = ctx.random(DType::f32, size_t(c.N) * c.N, -1, 1);
  DevArray da = ctx.upload(a), db = ctx.upload(b), dbias = ctx.upload(bias), dw = ctx.upload(w);
  std::vector<double> want(size_t(c.M) * c.N), scale(want.size());
  reference(c, a, b, bias, w, want, scale);
  const int64_t k_terms = c.epi == Epi::ChainDot ? c.K + c.N : c.K;
  Tol t = c.in == DType::f32 && !c.ieee ? tol::dot_tf32(k_terms) : tol::dot(c.acc, k_terms);
  if (c.epi == Epi::Softmax) t = tol::dot(DType::f32, k_terms + 16);
  if ((c.in == DType::f8e4m3 || c.in == DType::f8e5m2) &&
      ctx.facts().target.has(target::Cap::Wgmma))
    t = tol::dot_fp8_tensor_cores(k_terms);
  for (int warps : c.warps) {
    for (int stages : c.stages) {
      DevArray o = ctx.poisoned(c.acc, want.size());
      k[{Grid(cdiv(c.M, c.BM), cdiv(c.N, c.BN)), {.num_warps = warps, .num_stages = stages}}](
          da.buf, db.buf, o.buf, dbias.buf, dw.buf, c.M, c.N, c.K, c.BM, c.BN, c.BK, c.ta, c.tb,
          c.epi, c.ieee, c.acc);
      const std::string what = dname(c.in) + "->" + dname(c.acc) + " " + std::to_string(c.M) + "x" +
                               std::to_string(c.N) + "x" + std::to_string(c.K) + " warps " +
                               std::to_string(warps) + " stages " + std::to_string(stages);
      if (c.acc == DType::i32) {
        std::vector<int64_t> iw(want.begin(), want.end());
        ctx.check_ints(what, ctx.download(o), iw);
      } else {
        ctx.check_close(what, ctx.download(o), want, t, &scale);
      }
    }
  }
}

void dot_const_kernel(tl::ptr<float> c, int M, int N, int K) {
  auto a = (tl::arange(0, M)[{_, None}] - tl::arange(0, K)[{None, _}])
               .to(tl::float32);  // small integers
  auto b = (tl::arange(0, K)[{_, None}] % 3 + tl::arange(0, N)[{None, _}]).to(tl::float32);
  tl::store(c + tl::arange(0, M)[{_, None}] * N + tl::arange(0, N)[{None, _}], tl::dot(a, b));
}

}  // namespace

void register_dot(std::vector<Case>& out) {
  const DType f16 = DType::f16, f32 = DType::f32;
  std::vector<DotCase> cases = {
      {"f16_16x16x16", f16, f32, false, 16, 16, 16, 16, 16, 16},
      {"f16_32x64x128_loop",
       f16,
       f32,
       false,
       32,
       64,
       128,
       32,
       64,
       32,
       false,
       false,
       Epi::None,
       {4},
       {1, 2, 3, 4}},
      {"f16_256x256x16", f16, f32, false, 256, 256, 16, 128, 128, 16},
      {"f16_16x16x256", f16, f32, false, 16, 16, 256, 16, 16, 256},
      {"f16_128x128x128_grid", f16, f32, false, 128, 128, 128, 64, 32, 64},
      {"f16_acc_f16", f16, f16, false, 64, 64, 64, 32, 32, 32},
      {"bf16_64x128x64", DType::bf16, f32, false, 64, 128, 64, 64, 64, 32},
      {"tf32_64x64x128", f32, f32, false, 64, 64, 128, 32, 32, 32},
      {"ieee_64x64x128", f32, f32, true, 64, 64, 128, 32, 32, 32},
      {"f64_32x32x64", DType::f64, DType::f64, false, 32, 32, 64, 16, 16, 32},
      {"int8_64x64x128", DType::i8, DType::i32, false, 64, 64, 128, 32, 32, 64},
      {"non_multiple_100x75x33", f16, f32, false, 100, 75, 33, 32, 32, 16},
      {"num_warps_1", f16, f32, false, 64, 64, 64, 64, 64, 32, false, false, Epi::None, {1}},
      {"num_warps_2", f16, f32, false, 64, 64, 64, 64, 64, 32, false, false, Epi::None, {2}},
      {"num_warps_8", f16, f32, false, 64, 64, 64, 64, 64, 32, false, false, Epi::None, {8}},
      {"trans_a", f16, f32, false, 64, 32, 64, 32, 32, 32, true, false},
      {"trans_b", f32, f32, true, 32, 64, 64, 32, 32, 32, false, true},
      {"trans_ab", DType::bf16, f32, false, 48, 40, 72, 32, 32, 32, true, true},
      {"epilogue_add_matrix", f16, f32, false, 64, 48, 64, 32, 32, 32, false, false,
       Epi::AddMatrix},
      {"epilogue_add_rows", f16, f32, false, 64, 48, 64, 32, 32, 32, false, false, Epi::AddRows},
      {"epilogue_add_cols", DType::i8, DType::i32, false, 64, 48, 64, 32, 32, 32, false, false,
       Epi::AddCols},
      {"epilogue_relu", f32, f32, false, 70, 60, 50, 32, 32, 16, false, false, Epi::Relu},
      {"epilogue_softmax", f16, f32, false, 64, 50, 64, 32, 64, 32, false, false, Epi::Softmax},
      {"chain_dot", f32, f32, true, 64, 32, 64, 32, 32, 32, false, false, Epi::ChainDot},
      {"trans_output", f16, f32, false, 48, 64, 32, 32, 32, 32, false, false, Epi::TransOut},
      // Tiles of 64 rows per warpgroup: Hopper's wgmma where the target has it (simt:cuda-sm_90a
      // runs them in CI), with rings of 2 to 4 stages, two warpgroups, two instructions along M,
      // MN-major operands, and the register-staged form for tf32 and i8 with N-major B.
      {"wg_f16_200x136x200_8warps",
       f16,
       f32,
       false,
       200,
       136,
       200,
       128,
       128,
       64,
       false,
       false,
       Epi::None,
       {8},
       {2, 3, 4}},
      {"wg_f16_256x256x192_8warps",
       f16,
       f32,
       false,
       256,
       256,
       192,
       128,
       128,
       64,
       false,
       false,
       Epi::None,
       {8},
       {2, 3, 4}},
      {"wg_f16_128x128x128_4warps",
       f16,
       f32,
       false,
       128,
       128,
       128,
       128,
       128,
       64,
       false,
       false,
       Epi::Relu,
       {4},
       {3}},
      {"wg_bf16_64x256x96", DType::bf16, f32, false, 64, 256, 96, 64, 256, 32},
      {"wg_tf32_96x80x96", f32, f32, false, 96, 80, 96, 64, 64, 32},
      {"wg_tf32_trans_b", f32, f32, false, 64, 64, 96, 64, 64, 32, false, true},
      {"wg_int8_64x64x256", DType::i8, DType::i32, false, 64, 64, 256, 64, 64, 128},
      // K = 0: the ring's loop never runs; its wait after the loop has nothing in flight.
      {"wg_tf32_empty_k", f32, f32, false, 64, 64, 0, 64, 64, 32},
      {"wg_trans_a", f16, f32, false, 64, 64, 64, 64, 64, 32, true, false},
      {"wg_trans_ab", DType::bf16, f32, false, 70, 64, 80, 64, 64, 16, true, true},
      // Operand tiles over NVIDIA's Vulkan 48 KiB whole: its cooperative-matrix dot stages them
      // K-chunk by K-chunk (simt:vulkan-nvidia runs that plan in CI): 128x128x128 tiles in
      // chunks of 64 (K capped at 64 under --quick), 256x256x64 in chunks of 32 (both chunks
      // under --quick), and transposed operands (A and B contiguous along M and N).
      {"k_chunks_128x128x128",
       f16,
       f32,
       false,
       256,
       256,
       256,
       128,
       128,
       128,
       false,
       false,
       Epi::None,
       {8},
       {2}},
      {"k_chunks_256x256x64",
       f16,
       f32,
       false,
       256,
       256,
       128,
       256,
       256,
       64,
       false,
       false,
       Epi::None,
       {8},
       {2}},
      {"k_chunks_trans_ab",
       DType::bf16,
       f32,
       false,
       200,
       256,
       100,
       256,
       256,
       64,
       true,
       true,
       Epi::None,
       {8},
       {2}},
      // fp8 with f32 accumulation at shapes that are not tile multiples: wgmma (e4m3/e5m2,
      // both operands K-major, B through registers) on sm_90a, FMAs elsewhere.
      {"wg_fp8e4m3_100x72x160",
       DType::f8e4m3,
       f32,
       false,
       100,
       72,
       160,
       64,
       64,
       64,
       false,
       false,
       Epi::None,
       {4},
       {2, 3}},
      {"wg_fp8e5m2_128x80x96_8warps",
       DType::f8e5m2,
       f32,
       false,
       128,
       80,
       96,
       128,
       64,
       32,
       false,
       false,
       Epi::None,
       {8},
       {3}},
      {"fp8e4m3_70x40x96", DType::f8e4m3, f32, false, 70, 40, 96, 32, 32, 32},
  };
  for (const DotCase& c : cases) {
    std::vector<Need> needs = needs_of({c.in, c.acc});
    // Operand tiles and accumulator beyond 24 KiB may not fit a device's shared memory (32 KiB
    // on lavapipe, 48 KiB on NVIDIA's Vulkan driver).
    const int64_t bytes = (int64_t{c.BM} * c.BK + int64_t{c.BK} * c.BN) * ir::dtype_bytes(c.in) +
                          int64_t{c.BM} * c.BN * ir::dtype_bytes(c.acc);
    // A program of one warp (32 threads) is less than one subgroup of a 64-wide device.
    const bool one_warp = c.warps == std::vector<int>{1};
    const std::string maybe = bytes > 24 * 1024
                                  ? "shared memory for " + std::to_string(bytes) + " bytes of tiles"
                              : one_warp ? "32 threads per program"
                                         : "";
    out.push_back({"dot/" + c.name, needs, maybe, [c](Context& ctx) { run_dot(ctx, c); }});
  }
  out.push_back({"dot/without_loads", {}, "", [](Context& ctx) {
                   auto k = TESSERA_KERNEL(dot_const_kernel, c, M, N, K);
                   const int M = 32, N = 16, K = 64;
                   DevArray o = ctx.poisoned(DType::f32, M * N);
                   k[{1}](o.buf, M, N, K);
                   std::vector<double> want;
                   for (int i = 0; i < M; ++i)
                     for (int j = 0; j < N; ++j) {
                       double s = 0;  // small integers: exact in TF32 and in any summation order
                       for (int kk = 0; kk < K; ++kk) s += double(i - kk) * double(kk % 3 + j);
                       want.push_back(s);
                     }
                   ctx.check_close("dot of arange tiles", ctx.download(o), want, tol::kExact);
                 }});
}

}  // namespace tessera::conformance
