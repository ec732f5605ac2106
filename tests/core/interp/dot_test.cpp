// \file dot: TF32 input rounding (the default) vs ieee, fused steps over increasing k, f16/bf16
// inputs into f32, f16 accumulators, i8 -> i32 wrap-around, f64, non-square shapes.
#include <cmath>
#include <cstdint>
#include <random>

#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;
using tessera::round_to_tf32;

namespace {

/// acc + a x b for a:[M,K] of `in`, b:[K,N] of `in`, acc:[M,N] of `acc_t` (row-major buffers).
template <class In, class Acc>
std::vector<Acc> dot(DType in, DType acc_t, int64_t m, int64_t n, int64_t kk, std::vector<In> a,
                     std::vector<In> b, std::vector<Acc> c, const char* precision = nullptr) {
  Kernel k;
  Value* x = k.load_all(k.ptr_param(in), {m, kk});
  Value* y = k.load_all(k.ptr_param(in), {kk, n});
  Value* z = k.load_all(k.ptr_param(acc_t), {m, n});
  Value* out = k.ptr_param(acc_t);
  std::vector<Attribute> attrs;
  if (precision) attrs.push_back({"precision", std::string(precision)});
  k.store_all(out, k.op(OpKind::Dot, {x, y, z}, z->type, attrs));
  std::vector<Acc> res(c.size());
  HostMemory mem;
  run(k, mem, Grid{}, mem.add(a), mem.add(b), mem.add(c), mem.add(res));
  return res;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

/// Reference: acc = fma(a, b, acc) over increasing k, after `round` on the inputs.
template <class F>
std::vector<float> reference(int64_t m, int64_t n, int64_t kk, const std::vector<float>& a,
                             const std::vector<float>& b, std::vector<float> c, F round) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < kk; ++k)
        c[i * n + j] = std::fma(round(a[i * kk + k]), round(b[k * n + j]), c[i * n + j]);
  return c;
}

}  // namespace

TEST_CASE("interp dot: f32 inputs are rounded to TF32 by default, kept with ieee") {
  const int64_t m = 16, n = 16, kk = 32;
  const auto a = random_floats(m * kk, 1), b = random_floats(kk * n, 2),
             c = random_floats(m * n, 3);
  const auto tf32 = dot<float, float>(DType::f32, DType::f32, m, n, kk, a, b, c);
  const auto tf32_named = dot<float, float>(DType::f32, DType::f32, m, n, kk, a, b, c, "tf32");
  const auto ieee = dot<float, float>(DType::f32, DType::f32, m, n, kk, a, b, c, "ieee");
  CHECK(tf32 == reference(m, n, kk, a, b, c, [](float x) { return round_to_tf32(x); }));
  CHECK(tf32_named == tf32);
  CHECK(ieee == reference(m, n, kk, a, b, c, [](float x) { return x; }));
  CHECK(tf32 != ieee);
}

TEST_CASE("interp dot: TF32 rounding is to nearest with ties away from zero") {
  // 1 + 2^-11 is half a TF32 ulp above 1: rounds away to 1 + 2^-10; 1 + 2^-12 rounds down.
  const float tie = 1.0f + std::ldexp(1.0f, -11), below = 1.0f + std::ldexp(1.0f, -12);
  const auto r =
      dot<float, float>(DType::f32, DType::f32, 1, 2, 1, {tie}, {1.0f, 0.0f}, {0.0f, 0.0f});
  CHECK(r[0] == 1.0f + std::ldexp(1.0f, -10));
  const auto r2 =
      dot<float, float>(DType::f32, DType::f32, 1, 2, 1, {below}, {1.0f, 0.0f}, {0.0f, 0.0f});
  CHECK(r2[0] == 1.0f);
  const auto r3 = dot<float, float>(DType::f32, DType::f32, 1, 2, 1, {below}, {1.0f, 0.0f},
                                    {0.0f, 0.0f}, "ieee");
  CHECK(r3[0] == below);
}

TEST_CASE("interp dot: each step rounds acc + a*b once, k increasing") {
  // Steps: 1e8 + 1 -> 1e8 (f32), then + (-1e8) -> 0, then + 1 -> 1. Another order would differ.
  const auto r = dot<float, float>(DType::f32, DType::f32, 1, 1, 4, {1e8f, 1.0f, -1e8f, 1.0f},
                                   {1.0f, 1.0f, 1.0f, 1.0f}, {0.0f}, "ieee");
  CHECK(r[0] == ((1e8f + 1.0f) - 1e8f) + 1.0f);
  CHECK(r[0] == 1.0f);
}

TEST_CASE("interp dot: f16 and bf16 inputs give exact products accumulated in f32") {
  const int64_t m = 8, n = 16, kk = 16;
  const auto af = random_floats(m * kk, 4), bf = random_floats(kk * n, 5);
  std::vector<uint16_t> a16, b16, ab, bb;
  for (float x : af) a16.push_back(tessera::f16_from_double(x));
  for (float x : bf) b16.push_back(tessera::f16_from_double(x));
  for (float x : af) ab.push_back(tessera::bf16_from_double(x));
  for (float x : bf) bb.push_back(tessera::bf16_from_double(x));
  const std::vector<float> c(m * n, 0.25f);
  auto ref = [&](const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, auto decode) {
    std::vector<float> x, y;
    for (auto v : a) x.push_back(static_cast<float>(decode(v)));
    for (auto v : b) y.push_back(static_cast<float>(decode(v)));
    return reference(m, n, kk, x, y, c, [](float v) { return v; });
  };
  CHECK(dot<uint16_t, float>(DType::f16, DType::f32, m, n, kk, a16, b16, c) ==
        ref(a16, b16, tessera::f16_to_double));
  CHECK(dot<uint16_t, float>(DType::bf16, DType::f32, m, n, kk, ab, bb, c) ==
        ref(ab, bb, tessera::bf16_to_double));
}

TEST_CASE("interp dot: an f16 accumulator rounds each step to f16") {
  // 2048 + 1*1 ties back to 2048 every step; 2048 + 3*1 -> 2052 (ties to even mantissa).
  const uint16_t one = 0x3C00, three = 0x4200, h2048 = 0x6800;
  const auto r = dot<uint16_t, uint16_t>(DType::f16, DType::f16, 1, 2, 4, {one, one, one, one},
                                         {one, three, one, 0, one, 0, one, 0}, {h2048, h2048});
  CHECK(r[0] == h2048);
  CHECK(r[1] == tessera::f16_from_double(2052));
}

TEST_CASE("interp dot: i8 x i8 accumulates in wrapping i32") {
  const int64_t m = 2, n = 4, kk = 8;
  std::vector<int8_t> a(m * kk), b(kk * n);
  std::mt19937 rng(8);
  for (auto& x : a) x = static_cast<int8_t>(rng() % 256 - 128);
  for (auto& x : b) x = static_cast<int8_t>(rng() % 256 - 128);
  std::vector<int32_t> c(m * n, 5);
  c[0] = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> ref = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < kk; ++k)
        ref[i * n + j] = static_cast<int32_t>(static_cast<uint32_t>(ref[i * n + j]) +
                                              static_cast<uint32_t>(a[i * kk + k] * b[k * n + j]));
  CHECK(dot<int8_t, int32_t>(DType::i8, DType::i32, m, n, kk, a, b, c) == ref);
  // INT32_MAX + 1 wraps.
  CHECK(dot<int8_t, int32_t>(DType::i8, DType::i32, 1, 1, 1, {1}, {1},
                             {std::numeric_limits<int32_t>::max()})[0] ==
        std::numeric_limits<int32_t>::min());
}

TEST_CASE("interp dot: f64 fuses with std::fma, non-square shapes") {
  const int64_t m = 2, n = 8, kk = 4;
  std::vector<double> a(m * kk), b(kk * n), c(m * n, 0.5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.1 * static_cast<double>(i) - 0.3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.7 - 0.05 * static_cast<double>(i);
  std::vector<double> ref = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < kk; ++k)
        ref[i * n + j] = std::fma(a[i * kk + k], b[k * n + j], ref[i * n + j]);
  CHECK(dot<double, double>(DType::f64, DType::f64, m, n, kk, a, b, c) == ref);
}
