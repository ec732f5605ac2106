/// \file `tessera triton-diff`: runs the diff cases on one device and writes their inputs,
/// outputs and manifest for bench/peers/diff.py, which runs the Triton twins and compares.
#include "tools/triton_diff.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/kernels.h"
#include "core/support/filter.h"
#include "runtime/tessera.h"
#include "samples/kernels/attention.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/matmul_relu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"
#include "tools/triton_diff_kernels.h"

namespace tessera::tools {
namespace {

namespace tl = tessera::tl;
namespace fs = std::filesystem;
using namespace triton_diff;  // the op-family kernels

// --- the case runner ---------------------------------------------------------------------------

/// One case's inputs, outputs and facts, written as files and a manifest entry.
class Case {
 public:
  Case(const Device& dev, fs::path dir, std::string name, uint64_t seed)
      : dev_(dev), dir_(std::move(dir)), name_(std::move(name)), rng_(seed) {}

  const Device& dev() const { return dev_; }
  /// `n` floats uniform in [lo, hi) from this case's generator.
  std::vector<float> floats(size_t n, double lo, double hi) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(lo + (hi - lo) * unit());
    return v;
  }
  std::vector<int32_t> ints(size_t n, int lo, int hi) {
    std::vector<int32_t> v(n);
    for (int32_t& x : v) x = lo + static_cast<int32_t>(rng_() % static_cast<uint64_t>(hi - lo));
    return v;
  }
  template <class T>
  Buffer<T> input(const std::string& name, const std::vector<T>& v, std::vector<int64_t> shape) {
    write(name, v.data(), v.size() * sizeof(T), dtype_of<T>(), shape, inputs_);
    return dev_.upload(v);
  }
  template <class T>
  void output(const std::string& name, const Buffer<T>& b, std::vector<int64_t> shape) {
    std::vector<T> v = b.download();
    write(name, v.data(), v.size() * sizeof(T), dtype_of<T>(), shape, outputs_);
  }
  void param(const std::string& key, double v) { params_.push_back({key, v}); }
  /// The documented bound: max ulp (`ulp` >= 0) or max |diff| / max |reference| (`rel`).
  void bound(double ulp, double rel, std::string explained = "") {
    ulp_ = ulp, rel_ = rel, explained_ = std::move(explained);
  }
  std::string json(const std::string& family) const {
    std::ostringstream o;
    o.precision(17);  // parameters such as qk_scale reach the Triton twin exactly
    o << "{\"name\": \"" << name_ << "\", \"family\": \"" << family << "\", \"params\": {";
    for (size_t i = 0; i < params_.size(); ++i)
      o << (i ? ", " : "") << "\"" << params_[i].first << "\": " << params_[i].second;
    o << "}, \"inputs\": [" << join(inputs_) << "], \"outputs\": [" << join(outputs_)
      << "], \"bound\": {\"ulp\": " << ulp_ << ", \"rel\": " << rel_ << "}, \"explained\": \""
      << explained_ << "\"}";
    return o.str();
  }

 private:
  template <class T>
  static const char* dtype_of() {
    if constexpr (std::is_same_v<T, float>) return "f32";
    if constexpr (std::is_same_v<T, int32_t>) return "i32";
    if constexpr (std::is_same_v<T, tessera::half>) return "f16";
    if constexpr (std::is_same_v<T, int8_t>) return "i8";
    return "?";
  }
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1p-53; }
  void write(const std::string& name, const void* data, size_t bytes, const char* dtype,
             const std::vector<int64_t>& shape, std::vector<std::string>& list) {
    const std::string file = name_ + "." + name + ".bin";
    std::ofstream(dir_ / file, std::ios::binary)
        .write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    std::ostringstream o;
    o << "{\"name\": \"" << name << "\", \"dtype\": \"" << dtype << "\", \"file\": \"" << file
      << "\", \"shape\": [";
    for (size_t i = 0; i < shape.size(); ++i) o << (i ? ", " : "") << shape[i];
    o << "]}";
    list.push_back(o.str());
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }
  const Device& dev_;
  fs::path dir_;
  std::string name_;
  std::mt19937_64 rng_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<std::pair<std::string, double>> params_;
  double ulp_ = 0, rel_ = 0;
  std::string explained_;
};

struct DiffCase {
  const char* name;
  const char* family;
  std::function<void(Case&)> run;
};

int cdiv(int a, int b) {
  return (a + b - 1) / b;
}

void elementwise_case(Case& c, int n, bool gelu) {
  const int BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(n, -4, 4), {n});
  auto out = c.dev().alloc<float>(n);
  if (gelu) {
    auto kernel = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
    kernel[{cdiv(n, BLOCK)}](x, out, n, BLOCK);
    c.bound(-1, 2e-6);  // Triton's tl.exp is ex2.approx of x * log2(e)
  } else {
    auto y = c.input("y", c.floats(n, -4, 4), {n});
    auto kernel = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
    kernel[{cdiv(n, BLOCK)}](x, y, out, n, BLOCK);
    c.bound(0, 0);
  }
  c.output("out", out, {n});
}

void softmax_case(Case& c) {
  const int M = 1823, N = 781, BLOCK = 1024;
  c.param("M", M), c.param("N", N), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(size_t(M) * N, -5, 5), {M, N});
  auto y = c.dev().alloc<float>(size_t(M) * N);
  auto kernel = TESSERA_KERNEL(samples::softmax_kernel, x_ptr, y_ptr, x_row_stride, y_row_stride,
                               num_cols, BLOCK_SIZE);
  kernel[{M}](x, y, N, N, N, BLOCK);
  c.output("y", y, {M, N});
  c.bound(-1, 2e-6);
}

void row_sum_case(Case& c) {
  const int M = 300, N = 3000, BLOCK = 1024;
  c.param("M", M), c.param("N", N), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(size_t(M) * N, -1, 1), {M, N});
  auto out = c.dev().alloc<float>(M);
  auto kernel = TESSERA_KERNEL(samples::row_sum_kernel, x_ptr, out_ptr, N, BLOCK_SIZE);
  kernel[{M}](x, out, N, BLOCK);
  c.output("out", out, {M});
  c.bound(-1, 1e-5);  // sums reassociate: f32 rounding of a different order
}

void matmul_case(Case& c) {
  const int M = 200, N = 136, K = 96, BM = 64, BN = 64, BK = 32;
  c.param("M", M), c.param("N", N), c.param("K", K), c.param("BLOCK_M", BM), c.param("BLOCK_N", BN),
      c.param("BLOCK_K", BK);
  auto a = c.input("a", c.floats(size_t(M) * K, -1, 1), {M, K});
  auto b = c.input("b", c.floats(size_t(K) * N, -1, 1), {K, N});
  auto out = c.dev().alloc<float>(size_t(M) * N);
  auto kernel = TESSERA_KERNEL(samples::matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M,
                               BLOCK_N, BLOCK_K);
  kernel[{{cdiv(M, BM), cdiv(N, BN)}}](a, b, out, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK);
  c.output("c", out, {M, N});
  c.bound(-1, 4e-3, "TF32 operands: Tessera rounds to nearest, Triton truncates (docs/guide.md)");
}

void attention_case(Case& c) {
  const int BH = 4, SEQ = 200, D = 64, BM = 64, BN = 32;  // fits lavapipe's 32 KiB
  const float qk_scale = static_cast<float>(1.4426950408889634 / std::sqrt(double(D)));
  c.param("BH", BH), c.param("SEQ", SEQ), c.param("HEAD_DIM", D), c.param("BLOCK_M", BM),
      c.param("BLOCK_N", BN), c.param("qk_scale", qk_scale);
  auto halves = [&](size_t n) {
    std::vector<tessera::half> h;
    for (float f : c.floats(n, -1, 1)) h.push_back(tessera::half(f));
    return h;
  };
  const size_t n = size_t(BH) * SEQ * D;
  auto q = c.input("q", halves(n), {BH, SEQ, D});
  auto k = c.input("k", halves(n), {BH, SEQ, D});
  auto v = c.input("v", halves(n), {BH, SEQ, D});
  auto out = c.dev().alloc<tessera::half>(n);
  auto kernel = TESSERA_KERNEL(samples::attention_kernel, q, k, v, out, qk_scale, seq, HEAD_DIM,
                               BLOCK_M, BLOCK_N, CAUSAL);
  kernel[{{cdiv(SEQ, BM), BH}}](q, k, v, out, qk_scale, SEQ, D, BM, BN, 0);
  c.output("out", out, {BH, SEQ, D});
  c.bound(-1, 2e-3);  // an f16 result (2^-11 relative) of f16 dots and exp2
}

/// The bench workloads' own kernels (bench/kernels.h) at small sizes: layer norm of f16 rows
/// with Triton's tutorial configuration, and the int8 matmul (exact i32 sums).
void layer_norm_case(Case& c) {
  const int M = 64, N = 1500, BLOCK = 2048, WARPS = 8;
  c.param("M", M), c.param("N", N), c.param("BLOCK", BLOCK), c.param("num_warps", WARPS);
  auto halves = [&](size_t n, double lo, double hi) {
    std::vector<tessera::half> h;
    for (float f : c.floats(n, lo, hi)) h.push_back(tessera::half(f));
    return h;
  };
  auto x = c.input("x", halves(size_t(M) * N, -3, 1), {M, N});
  auto w = c.input("w", halves(N, 0.5, 1.5), {N});
  auto b = c.input("b", halves(N, -0.5, 0.5), {N});
  auto y = c.dev().alloc<tessera::half>(size_t(M) * N);
  auto mean = c.dev().alloc<float>(M), rstd = c.dev().alloc<float>(M);
  auto kernel = TESSERA_KERNEL(bench::layer_norm_kernel, x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr,
                               rstd_ptr, row_stride, N, eps, BLOCK_SIZE);
  const LaunchConfig launch(Grid(M), LaunchOptions{.num_warps = WARPS});
  kernel[launch](x, y, w, b, mean, rstd, N, N, 1e-5f, BLOCK);
  c.output("y", y, {M, N});
  c.output("mean", mean, {M});
  c.output("rstd", rstd, {M});
  c.bound(-1, 2e-3);  // the f16 result (2^-11 relative) of f32 statistics
}

void matmul_int8_case(Case& c) {
  const int M = 150, N = 100, K = 200, BM = 64, BN = 64, BK = 64;
  c.param("M", M), c.param("N", N), c.param("K", K), c.param("BLOCK_M", BM), c.param("BLOCK_N", BN),
      c.param("BLOCK_K", BK);
  auto bytes = [&](size_t n) {
    std::vector<int8_t> v;
    for (int32_t i : c.ints(n, -128, 128)) v.push_back(static_cast<int8_t>(i));
    return v;
  };
  auto a = c.input("a", bytes(size_t(M) * K), {M, K});
  auto b = c.input("b", bytes(size_t(K) * N), {K, N});
  auto out = c.dev().alloc<int32_t>(size_t(M) * N);
  auto kernel =
      TESSERA_KERNEL(bench::matmul_int8_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                     stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
  kernel[{{cdiv(M, BM), cdiv(N, BN)}}](a, b, out, M, N, K, K, 1, N, 1, N, 1, BM, BN, BK);
  c.output("c", out, {M, N});
  c.bound(0, 0);
}

/// `n` floats with NaN, +-inf and signed zeros in front.
std::vector<float> with_specials(Case& c, int n) {
  std::vector<float> v = c.floats(n, -4, 4);
  const float s[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, NAN, 1.0f};
  for (int i = 0; i < 7 && i < n; ++i) v[i] = s[i];
  return v;
}

void minmax_case(Case& c) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  auto x = c.input("x", with_specials(c, n), {n});
  std::vector<float> hy = c.floats(n, -4, 4);
  hy[5] = NAN, hy[6] = NAN;  // both NaN at 5; a NaN against a number at 0 and 6
  auto y = c.input("y", hy, {n});
  auto relu = c.dev().alloc<float>(n), lo = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(minmax_kernel, x, y, relu, lo, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, y, relu, lo, n, BLOCK);
  c.output("relu", relu, {n});
  c.output("lo", lo, {n});
  c.bound(0, 0);
}

void unary_where_case(Case& c) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(n, -20, 20), {n});
  auto y = c.input("y", c.floats(n, -20, 20), {n});
  auto e = c.dev().alloc<float>(n), w = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(unary_where_kernel, x, y, e, w, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, y, e, w, n, BLOCK);
  c.output("exp", e, {n});
  c.output("where", w, {n});
  // Triton's tl.exp is ex2.approx (2 ulp) of x * log2(e) rounded to f32: for |x| <= 20 the
  // rounding alone moves the result by up to 1.2e-6 relative, 20 ulp.
  c.bound(32, -1);
}

void division_case(Case& c) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  std::vector<int32_t> hb = c.ints(n, -40, 40);
  for (int32_t& v : hb) v = v == 0 ? 7 : v;  // division by zero is undefined
  auto x = c.input("x", c.ints(n, -100000, 100000), {n});
  auto y = c.input("y", hb, {n});
  auto q = c.dev().alloc<int32_t>(n);
  auto r = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(division_kernel, x, y, q, r, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, y, q, r, n, BLOCK);
  c.output("floordiv", q, {n});
  c.output("truediv", r, {n});
  c.bound(2, -1);  // CUDA's f32 division (div.full) is within 2 ulp; Triton's `/` is div.rn
}

void cast_case(Case& c) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(n, -60000, 60000), {n});
  auto h = c.dev().alloc<tessera::half>(n);
  auto i = c.dev().alloc<int32_t>(n);
  auto kernel = TESSERA_KERNEL(cast_kernel, x, h, i, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, h, i, n, BLOCK);
  c.output("f16", h, {n});
  c.output("i32", i, {n});
  c.bound(0, 0);
}

void reduce_case(Case& c) {
  const int M = 64, N = 700, BLOCK = 1024;
  c.param("M", M), c.param("N", N), c.param("BLOCK", BLOCK);
  std::vector<float> hx = c.floats(size_t(M) * N, -100, 100);
  for (int r = 0; r < M; r += 3) hx[size_t(r) * N + (r * 7) % N] = NAN;  // ignored by max
  for (int j = 0; j < N; ++j) hx[size_t(1) * N + j] = NAN;               // row 1: only NaN
  std::vector<tessera::half> hh;
  for (float f : c.floats(size_t(M) * N, 0, 1)) hh.push_back(tessera::half(f));
  auto x = c.input("x", hx, {M, N});
  auto h = c.input("h", hh, {M, N});
  auto mx = c.dev().alloc<float>(M), s = c.dev().alloc<float>(M);
  auto kernel = TESSERA_KERNEL(reduce_kernel, x, h, mx, s, n, BLOCK);
  kernel[{M}](x, h, mx, s, N, BLOCK);
  c.output("max", mx, {M});
  c.output("sum_f16", s, {M});
  c.bound(-1, 4e-3, "f16 sums: Tessera accumulates in f32, Triton 3.6 in f16 (docs/guide.md)");
}

void cumsum_case(Case& c) {
  const int M = 32, N = 500, BLOCK = 512;
  c.param("M", M), c.param("N", N), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.floats(size_t(M) * N, -1, 1), {M, N});
  auto out = c.dev().alloc<float>(size_t(M) * N);
  auto kernel = TESSERA_KERNEL(cumsum_kernel, x, out, n, BLOCK);
  kernel[{M}](x, out, N, BLOCK);
  c.output("out", out, {M, N});
  c.bound(-1, 1e-5);
}

void dot_case(Case& c, bool tf32) {
  const int M = 16, N = 16, K = 32;
  c.param("M", M), c.param("N", N), c.param("K", K);
  auto out = c.dev().alloc<float>(size_t(M) * N);
  auto kern = TESSERA_KERNEL(dot_kernel, a, b, c, M, N, K);
  if (tf32) {
    auto a = c.input("a", c.floats(size_t(M) * K, -1, 1), {M, K});
    auto b = c.input("b", c.floats(size_t(K) * N, -1, 1), {K, N});
    kern[{1}](a, b, out, M, N, K);
    c.bound(-1, 4e-3, "TF32 operands: Tessera rounds to nearest, Triton truncates (docs/guide.md)");
  } else {
    auto halves = [&](size_t n) {
      std::vector<tessera::half> h;
      for (float f : c.floats(n, -1, 1)) h.push_back(tessera::half(f));
      return h;
    };
    auto a = c.input("a", halves(size_t(M) * K), {M, K});
    auto b = c.input("b", halves(size_t(K) * N), {K, N});
    kern[{1}](a, b, out, M, N, K);
    c.bound(-1, 1e-6);  // exact f16 products, f32 sums in another order
  }
  c.output("c", out, {M, N});
}

void histogram_case(Case& c) {
  const int n = 10000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK);
  auto x = c.input("x", c.ints(n, 0, 1 << 20), {n});
  auto bins = c.dev().upload(std::vector<int32_t>(64, 0));
  auto kernel = TESSERA_KERNEL(histogram_kernel, x, bins, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, bins, n, BLOCK);
  c.output("bins", bins, {64});
  c.bound(0, 0);
}

/// The random numbers of one seed: `which` (0 randint, 1 rand, 2 randn) is the output compared,
/// each with its own bound (the kernel computes all three).
void random_case(Case& c, int which) {
  const int n = 10007, BLOCK = 1024, seed = 12345;
  c.param("n", n), c.param("BLOCK", BLOCK), c.param("seed", seed);
  auto ri = c.dev().alloc<int32_t>(n);
  auto ru = c.dev().alloc<float>(n), rn = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(random_kernel, ri, ru, rn, seed, n, BLOCK);
  kernel[{cdiv(n, BLOCK)}](ri, ru, rn, seed, n, BLOCK);
  if (which == 0) c.output("ri", ri, {n}), c.bound(0, 0);
  if (which == 1) c.output("ru", ru, {n}), c.bound(0, 0);
  if (which == 2)
    c.output("rn", rn, {n}), c.bound(-1, 1e-5, "randn: Box-Muller through each one's log and cos");
}

// --- the ops of the Triton-language wave (H15) --------------------------------------------------

/// Inputs of each unary libdevice function where it is finite and not flat (kLibdeviceUnary).
const double kUnaryRange[][2] = {{-0.999, 0.999}, {-10, 10}, {1e-3, 1e4}, {-10, 10},  {-10, 10},
                                 {-1, 1},         {-1, 1},   {-50, 50},   {-1e4, 1e4}};

void libdevice_case(Case& c, int fn) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK), c.param("FN", fn);
  std::vector<float> hx = c.floats(n, kUnaryRange[fn][0], kUnaryRange[fn][1]);
  auto x = c.input("x", hx, {n});
  auto y = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(libdevice_kernel, x, y, n, FN, BLOCK);
  kernel[{cdiv(n, BLOCK)}](x, y, n, fn, BLOCK);
  c.output("y", y, {n});
  // Tessera's math library (<= 2.5 ulp, the guide) against CUDA's libdevice (a few ulp each).
  c.bound(8, -1, "both libraries within their documented ulp bounds");
}

void libdevice2_case(Case& c, int fn) {
  const int n = 5000, BLOCK = 1024;
  c.param("n", n), c.param("BLOCK", BLOCK), c.param("FN", fn);
  std::vector<float> ha = fn == 0 ? c.floats(n, 0.1, 10) : c.floats(n, -1e3, 1e3);
  std::vector<float> hb = fn == 0 ? c.floats(n, -8, 8) : c.floats(n, -1e3, 1e3);
  auto a = c.input("a", ha, {n});
  auto b = c.input("b", hb, {n});
  auto y = c.dev().alloc<float>(n);
  auto kernel = TESSERA_KERNEL(libdevice2_kernel, x, z, y, n, FN, BLOCK);
  kernel[{cdiv(n, BLOCK)}](a, b, y, n, fn, BLOCK);
  c.output("y", y, {n});
  c.bound(8, -1, "both libraries within their documented ulp bounds");
}

void sort_case(Case& c) {
  const int rows = 8, BLOCK = 128;
  c.param("rows", rows), c.param("BLOCK", BLOCK);
  std::vector<float> hx = c.floats(rows * BLOCK, -100, 100);
  for (int i = 0; i < rows * BLOCK; i += 5) hx[static_cast<size_t>(i)] = 3.0f;  // ties
  auto x = c.input("x", hx, {rows, BLOCK});
  auto up = c.dev().alloc<float>(rows * BLOCK), down = c.dev().alloc<float>(rows * BLOCK);
  auto kernel = TESSERA_KERNEL(sort_kernel, x, up, down, BLOCK);
  kernel[{rows}](x, up, down, BLOCK);
  c.output("up", up, {rows, BLOCK});
  c.output("down", down, {rows, BLOCK});
  c.bound(0, 0);
}

void histogram_op_case(Case& c) {
  const int rows = 4, BLOCK = 256, BINS = 32;
  c.param("rows", rows), c.param("BLOCK", BLOCK), c.param("BINS", BINS);
  // values inside [0, BINS): Triton leaves values outside undefined, Tessera drops them
  auto x = c.input("x", c.ints(rows * BLOCK, 0, BINS), {rows, BLOCK});
  auto bins = c.dev().alloc<int32_t>(rows * BINS);
  auto kernel = TESSERA_KERNEL(histogram_op_kernel, x, bins, BLOCK, BINS);
  kernel[{rows}](x, bins, BLOCK, BINS);
  c.output("bins", bins, {rows, BINS});
  c.bound(0, 0);
}

void gather_case(Case& c) {
  const int R = 16, C = 64;
  c.param("R", R), c.param("C", C);
  auto src = c.input("src", c.floats(R * C, -10, 10), {R, C});
  auto idx = c.input("idx", c.ints(R * C, 0, C), {R, C});
  auto out = c.dev().alloc<float>(R * C);
  auto kernel = TESSERA_KERNEL(gather_kernel, src, idx, out, R, C);
  kernel[{1}](src, idx, out, R, C);
  c.output("out", out, {R, C});
  c.bound(0, 0);
}

void block_ptr_case(Case& c) {
  const int M = 100, N = 77, BM = 32, BN = 16;
  c.param("M", M), c.param("N", N), c.param("BM", BM), c.param("BN", BN);
  auto x = c.input("x", c.floats(M * N, -10, 10), {M, N});
  auto y = c.dev().alloc<float>(M * N);
  auto kernel = TESSERA_KERNEL(block_ptr_kernel, x, y, M, N, BM, BN);
  kernel[{{cdiv(M, BM), cdiv(N, BN)}}](x, y, M, N, BM, BN);
  c.output("y", y, {M, N});
  c.bound(0, 0);
}

const std::vector<DiffCase>& cases() {
  static const std::vector<DiffCase> all = {
      {"vector_add", "seed", [](Case& c) { elementwise_case(c, 100003, false); }},
      {"gelu", "seed", [](Case& c) { elementwise_case(c, 100003, true); }},
      {"softmax", "seed", softmax_case},
      {"row_sum", "seed", row_sum_case},
      {"matmul_relu", "seed", matmul_case},
      {"attention", "seed", attention_case},
      {"layer_norm", "bench workload", layer_norm_case},
      {"matmul_int8", "bench workload", matmul_int8_case},
      {"minmax_nan", "elementwise binary", minmax_case},
      {"exp_where", "unary, compare/where", unary_where_case},
      {"int_division", "elementwise binary", division_case},
      {"casts", "casts", cast_case},
      {"max_sum_rows", "reductions", reduce_case},
      {"cumsum", "scan", cumsum_case},
      {"dot_f16", "dot", [](Case& c) { dot_case(c, false); }},
      {"dot_tf32", "dot", [](Case& c) { dot_case(c, true); }},
      {"histogram", "atomics", histogram_case},
      {"random_int", "random numbers", [](Case& c) { random_case(c, 0); }},
      {"random_uniform", "random numbers", [](Case& c) { random_case(c, 1); }},
      {"random_normal", "random numbers", [](Case& c) { random_case(c, 2); }},
      {"sort", "sort", sort_case},
      {"histogram_op", "histogram", histogram_op_case},
      {"gather", "gather", gather_case},
      {"block_ptr_copy", "block pointers", block_ptr_case},
  };
  static const std::vector<DiffCase> with_libdevice = [] {
    std::vector<DiffCase> v = all;
    for (int f = 0; f < static_cast<int>(std::size(kLibdeviceUnary)); ++f)
      v.push_back({kLibdeviceUnary[f], "libdevice", [f](Case& c) { libdevice_case(c, f); }});
    for (int f = 0; f < static_cast<int>(std::size(kLibdeviceBinary)); ++f)
      v.push_back({kLibdeviceBinary[f], "libdevice", [f](Case& c) { libdevice2_case(c, f); }});
    return v;
  }();
  return with_libdevice;
}

int usage(const std::string& why) {
  std::fprintf(stderr, "tessera triton-diff: %s (see `tessera triton-diff --help`)\n", why.c_str());
  return 2;
}

}  // namespace

int triton_diff_main(const std::vector<std::string>& args) {
  std::string device, out, filter;
  uint64_t seed = 18;
  bool list = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string { return i + 1 < args.size() ? args[++i] : ""; };
    if (a == "--device")
      device = value();
    else if (a == "--out")
      out = value();
    else if (a == "--filter")
      filter = value();
    else if (a == "--seed")
      seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--list")
      list = true;
    else
      return usage("unknown option '" + a + "'");
  }
  if (list) {
    for (const DiffCase& d : cases())
      if (filter.empty() || matches_filter(d.name, filter))
        std::printf("%s\t%s\n", d.name, d.family);
    return 0;
  }
  if (device.empty() || out.empty()) return usage("--device and --out are required");
  Device dev = Device::open(device);
  fs::create_directories(out);
  std::ostringstream manifest;
  manifest << "{\"device\": \"" << device << "\", \"seed\": " << seed << ", \"cases\": [";
  int failed = 0, ran = 0;
  for (size_t i = 0; i < cases().size(); ++i) {
    const DiffCase& d = cases()[i];
    if (!filter.empty() && !matches_filter(d.name, filter)) continue;
    Case c(dev, out, d.name, seed * 1000003 + i);
    try {
      d.run(c);
      manifest << (ran++ ? ",\n  " : "\n  ") << c.json(d.family);
      std::printf("%-14s ran on %s\n", d.name, device.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("%-14s FAILED to run on %s: %s\n", d.name, device.c_str(), e.what());
    }
  }
  manifest << "\n]}\n";
  std::ofstream(fs::path(out) / "manifest.json") << manifest.str();
  std::printf("%d cases written to %s, %d failed to run\n", ran, out.c_str(), failed);
  return failed ? 1 : 0;
}

}  // namespace tessera::tools
