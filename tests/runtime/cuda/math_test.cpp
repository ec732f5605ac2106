/// \file The PTX math library on the GPU: bit for bit the algorithms that tests/targets/ptx
/// measures on the CPU (every step is an IEEE operation), and f16/bf16 within one ulp of the
/// interpreter's correctly rounded results.
#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <random>

#include "helpers.h"
#include "targets/math/cpu_math.h"

namespace cuda_test {
namespace {

using tessera::math::Algorithms;

std::string unary(std::string_view op, std::string_view t) {
  std::string T(t), A = std::to_string(t == "f64" ? 8 : t == "f32" ? 4 : 2);
  return kernel("%in: ptr<" + T + ">, %out: ptr<" + T + ">",
                "  %pid = program_id {axis = 0} : i32\n"
                "  %lane = lane_id : i32\n  %sg = subgroup_id : i32\n"
                "  %c32 = constant {value = 32} : i32\n  %t0 = mul %sg, %c32 : i32\n"
                "  %tid = add %t0, %lane : i32\n  %c128 = constant {value = 128} : i32\n"
                "  %base = mul %pid, %c128 : i32\n  %i = add %base, %tid : i32\n"
                "  %tr = constant {value = 1} : i1\n  %z = constant {value = 0.0} : " +
                    T +
                    "\n"
                    "  %p = ptr_add %in, %i : ptr<" +
                    T +
                    ">\n"
                    "  %x = global_load %p, %tr, %z {align = " +
                    A + ", width = 1} : " + T +
                    "\n"
                    "  %y = " +
                    std::string(op) + " %x : " + T +
                    "\n"
                    "  %q = ptr_add %out, %i : ptr<" +
                    T +
                    ">\n"
                    "  global_store %q, %tr, %y {align = " +
                    A + ", width = 1}");
}

template <class T>
std::vector<T> inputs(std::string_view op) {
  std::mt19937_64 rng(42);
  std::vector<T> v = {T(0),
                      T(-0.0),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::max(),
                      T(1),
                      T(-1)};
  double hi = op == "sin" || op == "cos" ? 300
              : op.starts_with("log")    ? 120
                                         : 8;  // sin/cos: Payne-Hanek too
  std::uniform_real_distribution<double> e(-30, hi);
  while (v.size() < 128 * 64) {
    T x = static_cast<T>(std::exp2(e(rng)));
    v.push_back(rng() & 1 ? -x : x);
  }
  return v;
}

template <class T>
void check_bitwise(const Device& dev, std::string_view op,
                   T (*ref)(Algorithms<math_test::CpuMath<T>>&, T)) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::string t = sizeof(T) == 4 ? "f32" : "f64";
  CAPTURE(op);
  CAPTURE(t);
  std::vector<T> in = inputs<T>(op);
  auto out =
      run(dev, load(dev, unary(op, t)), Grid(64), {buffer(in), buffer(std::vector<T>(in.size()))});
  std::vector<T> got = as<T>(out[1]);
  math_test::CpuMath<T> m;
  Algorithms<math_test::CpuMath<T>> a(m);
  int wrong = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    T want = ref(a, in[i]);
    if (std::bit_cast<Bits>(want) == std::bit_cast<Bits>(got[i]) ||
        (std::isnan(want) && std::isnan(got[i])))
      continue;
    if (wrong++ < 3) MESSAGE(op << "(" << in[i] << "): gpu " << got[i] << ", algorithm " << want);
  }
  CHECK(wrong == 0);
}

/// f32 exp and exp2 come from the hardware's ex2.approx (math_algorithms.h: exp_hw; exp2 is
/// ex2.approx.ftz), whose bits no CPU computes: within `max_ulps` of the correctly rounded value
/// instead (the CPU test bounds exp_hw at 2.5 ulp with ex2 at its documented worst; exp2 is ex2's
/// 2 ulp). `flush`: results below 2^-126 must be +0 (exp2 flushes them, as Triton's tl.exp2).
void check_ulps(const Device& dev, std::string_view op, long double (*ref)(long double),
                double max_ulps, bool flush = false) {
  CAPTURE(op);
  std::vector<float> in = inputs<float>(op);
  size_t at = in.size();  // the last inputs: near underflow and overflow (the grid covers all)
  for (float x : {-104.5f, -88.0f, 88.5f, 89.0f, 127.9f, -149.5f, 128.5f, -126.0f, -125.5f})
    in[--at] = x;
  auto out = run(dev, load(dev, unary(op, "f32")), Grid(64),
                 {buffer(in), buffer(std::vector<float>(in.size()))});
  std::vector<float> got = as<float>(out[1]);
  int wrong = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const long double want = ref(static_cast<long double>(in[i]));
    if (flush && want < std::numeric_limits<float>::min()) {
      if (std::bit_cast<uint32_t>(got[i]) == 0u) continue;
      if (wrong++ < 3) MESSAGE(op << "(" << in[i] << "): gpu " << got[i] << ", not flushed to +0");
      continue;
    }
    double e = math_test::ulp_error<float>(got[i], want);
    if (e <= max_ulps) continue;
    if (wrong++ < 3) MESSAGE(op << "(" << in[i] << "): gpu " << got[i] << ", " << e << " ulp");
  }
  CHECK(wrong == 0);
}

TEST_CASE("cuda math: f32 exp and exp2 from ex2.approx are within 2.5 and 2 ulp") {
  CUDA_DEVICE_OR_SKIP(dev);
  check_ulps(dev, "exp", expl, 2.5);
  check_ulps(dev, "exp2", exp2l, 2.0, /*flush=*/true);
}

TEST_CASE("cuda math: f32 exp2 flushes results below 2^-126 to +0, exp keeps them") {
  CUDA_DEVICE_OR_SKIP(dev);
  // One program of `unary`'s kernel reads 128 elements; the rest are 0 (2^0 = e^0 = 1).
  std::vector<float> in(128, 0.0f);
  const float x[] = {-126.0f, -126.5f, -130.0f, -140.0f, -149.0f, -160.0f, -100.0f};
  std::copy(std::begin(x), std::end(x), in.begin());
  auto run_op = [&](const char* op) {
    return as<float>(run(dev, load(dev, unary(op, "f32")), Grid(1),
                         {buffer(in), buffer(std::vector<float>(in.size(), -1.0f))})[1]);
  };
  std::vector<float> two = run_op("exp2"), e = run_op("exp");
  CHECK(two[0] == std::ldexp(1.0f, -126));  // the least normal stays
  for (size_t i = 1; i < 6; ++i) {
    CAPTURE(in[i]);
    CHECK(std::bit_cast<uint32_t>(two[i]) == 0u);  // +0
  }
  CHECK(two[127] == 1.0f);
  // exp's subnormal results: e^-100 = 2^-144.3, about 2^4.7 times the least subnormal.
  CHECK(e[6] > 0.0f);
  CHECK(e[6] < std::numeric_limits<float>::min());
}

TEST_CASE("cuda math: the GPU computes the algorithms' bits (f32 and f64)") {
  CUDA_DEVICE_OR_SKIP(dev);
  using A32 = Algorithms<math_test::CpuMath<float>>;
  using A64 = Algorithms<math_test::CpuMath<double>>;
  check_bitwise<float>(dev, "log", [](A32& a, float x) { return a.log(x); });
  check_bitwise<float>(dev, "log2", [](A32& a, float x) { return a.log2(x); });
  check_bitwise<float>(dev, "sin", [](A32& a, float x) { return a.sin(x); });
  check_bitwise<float>(dev, "cos", [](A32& a, float x) { return a.cos(x); });
  check_bitwise<float>(dev, "tanh", [](A32& a, float x) { return a.tanh(x); });
  check_bitwise<float>(dev, "erf", [](A32& a, float x) { return a.erf(x); });
  check_bitwise<double>(dev, "exp", [](A64& a, double x) { return a.exp(x); });
  check_bitwise<double>(dev, "log", [](A64& a, double x) { return a.log(x); });
  check_bitwise<double>(dev, "log2", [](A64& a, double x) { return a.log2(x); });
  check_bitwise<double>(dev, "sin", [](A64& a, double x) { return a.sin(x); });
  check_bitwise<double>(dev, "cos", [](A64& a, double x) { return a.cos(x); });
  check_bitwise<double>(dev, "tanh", [](A64& a, double x) { return a.tanh(x); });
  check_bitwise<double>(dev, "erf", [](A64& a, double x) { return a.erf(x); });
}

TEST_CASE("cuda math: the libdevice functions compute the algorithms' bits (f32 and f64)") {
  CUDA_DEVICE_OR_SKIP(dev);
  using A32 = Algorithms<math_test::CpuMath<float>>;
  using A64 = Algorithms<math_test::CpuMath<double>>;
#define TESSERA_BOTH(fn)                                                   \
  check_bitwise<float>(dev, #fn, [](A32& a, float x) { return a.fn(x); }); \
  check_bitwise<double>(dev, #fn, [](A64& a, double x) { return a.fn(x); })
  TESSERA_BOTH(expm1);
  TESSERA_BOTH(log10);
  TESSERA_BOTH(sinh);
  TESSERA_BOTH(cosh);
  TESSERA_BOTH(asin);
  TESSERA_BOTH(acos);
  TESSERA_BOTH(atan);
  TESSERA_BOTH(cbrt);
#undef TESSERA_BOTH
}

TEST_CASE("cuda math: f16 and bf16 results are within one ulp of the correctly rounded value") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::vector<uint16_t> in(128 * 64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i * 8);  // every 8th pattern
  for (const char* t : {"f16", "bf16"})
    for (const char* op :
         {"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf", "sqrt", "rsqrt"}) {
      CAPTURE(t);
      CAPTURE(op);
      std::string text = unary(op, t);
      std::vector<Arg> args{buffer(in), buffer(std::vector<uint16_t>(in.size()))};
      std::vector<uint16_t> g = as<uint16_t>(run(dev, load(dev, text), Grid(64), args)[1]);
      std::vector<uint16_t> h = as<uint16_t>(run_interpreter(text, Grid(64), args)[1]);
      int wrong = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        bool gnan = (g[i] & 0x7fff) > (std::string_view(t) == "f16" ? 0x7c00 : 0x7f80);
        bool hnan = (h[i] & 0x7fff) > (std::string_view(t) == "f16" ? 0x7c00 : 0x7f80);
        if (gnan || hnan) {
          wrong += gnan != hnan;
          continue;
        }
        // bf16 exp2 goes through f32's, which flushes results below 2^-126 (bf16's subnormals:
        // exponent field 0) to +0.
        if (std::string_view(op) == "exp2" && std::string_view(t) == "bf16" &&
            (h[i] & 0x7f80) == 0 && g[i] == 0)
          continue;
        // same sign: adjacent bit patterns are adjacent values
        int diff = (g[i] >> 15) == (h[i] >> 15) ? std::abs(int(g[i]) - int(h[i]))
                   : (g[i] | h[i]) == 0x8000    ? 0
                                                : 99;
        if (diff > 1 && wrong++ < 3)
          MESSAGE(op << " of 0x" << std::hex << in[i] << ": gpu 0x" << g[i] << ", interpreter 0x"
                     << h[i]);
      }
      CHECK(wrong == 0);
    }
}

}  // namespace
}  // namespace cuda_test
