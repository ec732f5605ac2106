/// \file `%`-wrapped index tiles (Triton's tutorial matmul writes `(pid_n * BLOCK_N + arange(0,
/// BLOCK_N)) % N`): remainder versioning (core/passes/rem_version.h) runs a copy that keeps the
/// wrapped runs where a run-time test proves the left side non-negative, the code as written
/// elsewhere. Left sides negative for some programs (the original copy runs there, C's truncating
/// `%` giving negative offsets) and non-negative for all, divisors with and without the
/// divisibility-16 specialization, and the tutorial matmul itself on awkward shapes.
#include <algorithm>
#include <cmath>
#include <string>

#include "samples/kernels/matmul_tutorial.h"
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

/// y[i] = x[n + (i + shift) % n] for i = pid * BLOCK + arange(0, BLOCK), i < total: x holds 2n
/// elements, so the offsets in (-n, n) that C's `%` gives stay inside it.
void wrapped_gather_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> y, tl::i32 n, tl::i32 shift,
                           tl::i32 total, int BLOCK) {
  auto base = tl::program_id(0) * BLOCK;
  auto wrapped = (base + shift + tl::arange(0, BLOCK)) % n;
  auto i = base + tl::arange(0, BLOCK);
  auto m = i < total;
  tl::store(y + i, tl::load(x + n + wrapped, m, 0), m);
}

void wrapped_gather_case(Context& ctx) {
  auto k = TESSERA_KERNEL(wrapped_gather_kernel, x, y, n, shift, total, BLOCK);
  constexpr int kBlock = 512;  // 4 elements per thread of 4 warps: 16-byte loads
  // (n, shift): n a multiple of 16 (specialized divisible: the fast copy's loads are vectors) or
  // not; shift negative enough that the first programs' left sides are negative (their `%` gives
  // offsets in (-n, 0], a run through -n or -2n breaking at it), or not negative at all. `total`
  // a multiple of 16, so that the mask does not keep the loads scalar.
  const int cases[][2] = {{320, -160}, {320, 48}, {300, -77}, {304, 0}, {64, -1024}, {48, -96}};
  for (const auto& c : cases) {
    const int n = c[0], shift = c[1], total = 1600;
    HostArray x = ctx.random(DType::i32, 2 * static_cast<size_t>(n), -1000000, 1000000);
    DevArray dx = ctx.upload(x), y = ctx.poisoned(DType::i32, total);
    k[{cdiv(total, kBlock)}](dx.buf, y.buf, n, shift, total, kBlock);
    std::vector<int64_t> want;
    for (int i = 0; i < total; ++i) want.push_back(x.i(n + (i + shift) % n));  // C's `%`
    ctx.check_ints("n " + std::to_string(n) + " shift " + std::to_string(shift), ctx.download(y),
                   want);
  }
}

void tutorial_matmul_case(Context& ctx) {
  auto k = TESSERA_KERNEL(samples::matmul_relu_tutorial_kernel, a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                          BLOCK_N, BLOCK_K, GROUP_M);
  // Rows and columns past M and N wrap (computed, not stored); K masked.
  const int shapes[][3] = {{64, 64, 64}, {100, 48, 71}, {33, 160, 40}};
  for (const auto& s : shapes) {
    const int M = s[0], N = s[1], K = s[2], BM = 32, BN = 32, BK = 32;
    HostArray a = ctx.random(DType::f32, M * K, -1, 1), b = ctx.random(DType::f32, K * N, -1, 1);
    DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f32, M * N);
    k[{cdiv(M, BM) * cdiv(N, BN)}](da.buf, db.buf, o.buf, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK, 2);
    std::vector<double> want, scale;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0, mag = 0;
        for (int kk = 0; kk < K; ++kk) {
          const double p =
              double(round_to_tf32(float(a.f(i * K + kk)))) * round_to_tf32(float(b.f(kk * N + j)));
          acc += p, mag += std::fabs(p);
        }
        want.push_back(std::max(acc, 0.0)), scale.push_back(mag);
      }
    ctx.check_close(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
                    ctx.download(o), want, tol::dot_tf32(K), &scale);
  }
}

}  // namespace

void register_rem_contiguity(std::vector<Case>& out) {
  out.push_back({"rem/wrapped_gather", {}, "", wrapped_gather_case});
  out.push_back({"rem/tutorial_matmul", {}, "", tutorial_matmul_case});
}

}  // namespace tessera::conformance
