/// \file The PTX target's semantics on a real GPU, bit for bit against the SIMT interpreter (the
/// executable definition): integer arithmetic with its defined edge cases, float arithmetic with
/// NaN, signed zeros and infinities, conversions, shuffles, shared memory and atomics.
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "helpers.h"

namespace cuda_test {
namespace {

int bytes_of(std::string_view dt) {
  return dt == "i1" || dt == "i8" || dt == "u8" ? 1
         : dt.ends_with("16")                   ? 2
         : dt.ends_with("64")                   ? 8
                                                : 4;
}

/// One thread per element: o_k[i] = op_k(a[i], b[i]) (ops read %x and %y), 256 elements.
std::string elementwise(std::string_view t, std::string_view rt,
                        const std::vector<std::string>& ops) {
  std::string T(t), R(rt), la = std::to_string(bytes_of(t)), sa = std::to_string(bytes_of(rt));
  std::string params = "%a: ptr<" + T + ">, %b: ptr<" + T + ">";
  std::string body = R"(  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %c128 = constant {value = 128} : i32
  %base = mul %pid, %c128 : i32
  %i = add %base, %tid : i32
  %tr = constant {value = 1} : i1
)";
  body += "  %z = constant {value = 0} : " + T + "\n";
  body += "  %pa = ptr_add %a, %i : ptr<" + T + ">\n  %pb = ptr_add %b, %i : ptr<" + T + ">\n";
  body += "  %x = global_load %pa, %tr, %z {align = " + la + ", width = 1} : " + T + "\n";
  body += "  %y = global_load %pb, %tr, %z {align = " + la + ", width = 1} : " + T + "\n";
  for (size_t k = 0; k < ops.size(); ++k) {
    std::string r = "%r" + std::to_string(k), o = "%o" + std::to_string(k),
                q = "%q" + std::to_string(k);
    params += ", " + o + ": ptr<" + R + ">";
    body += "  " + r + " = " + ops[k] + " : " + R + "\n";
    body += "  " + q + " = ptr_add " + o + ", %i : ptr<" + R + ">\n";
    body += "  global_store " + q + ", %tr, " + r + " {align = " + sa + ", width = 1}\n";
  }
  return kernel(params, body);
}

/// True if the bits of a value of dtype `dt` are a NaN (GPUs give the canonical NaN where the
/// interpreter propagates an operand's payload: any NaN matches any NaN).
bool is_nan_bits(std::string_view dt, uint64_t b) {
  if (dt == "f16") return (b & 0x7fff) > 0x7c00;
  if (dt == "bf16") return (b & 0x7fff) > 0x7f80;
  if (dt == "f32") return (b & 0x7fffffffu) > 0x7f800000u;
  if (dt == "f64") return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
  return false;
}

/// Runs `ops` on the GPU and in the interpreter over inputs a, b; every output must match bitwise,
/// or, with `max_ulps` > 0 (float results), lie within that many ulps of the interpreter's value
/// with the same sign (so zeros, infinities and NaNs still match).
template <class T, class R>
void compare(const Device& dev, std::string_view t, std::string_view rt,
             const std::vector<std::string>& ops, std::vector<T> a, std::vector<T> b,
             uint64_t max_ulps = 0) {
  const size_t n = 256;
  a.resize(n, a.empty() ? T{} : a.back());
  b.resize(n, b.empty() ? T{} : b.back());
  std::string text = elementwise(t, rt, ops);
  std::vector<Arg> args{buffer(a), buffer(b)};
  for (size_t k = 0; k < ops.size(); ++k) args.push_back(buffer(std::vector<R>(n)));
  auto gpu = run(dev, load(dev, text), Grid(2), args);
  auto host = run_interpreter(text, Grid(2), args);
  for (size_t k = 0; k < ops.size(); ++k) {
    CAPTURE(ops[k]);
    std::vector<R> g = as<R>(gpu[2 + k]), h = as<R>(host[2 + k]);
    int shown = 0;
    for (size_t i = 0; i < n; ++i) {
      if (std::memcmp(&g[i], &h[i], sizeof(R)) == 0) continue;
      uint64_t gb = 0, hb = 0;
      std::memcpy(&gb, &g[i], sizeof(R));
      std::memcpy(&hb, &h[i], sizeof(R));
      if (is_nan_bits(rt, gb) && is_nan_bits(rt, hb)) continue;
      const uint64_t sign = uint64_t{1} << (8 * sizeof(R) - 1);
      if (max_ulps > 0 && (gb & sign) == (hb & sign) && !is_nan_bits(rt, gb) &&
          !is_nan_bits(rt, hb) && (gb > hb ? gb - hb : hb - gb) <= max_ulps)
        continue;
      if (shown++ < 4) {
        CAPTURE(i);
        CAPTURE(+a[i]);
        CAPTURE(+b[i]);
        CHECK_MESSAGE(false, "gpu " << +g[i] << " != interpreter " << +h[i]);
      }
    }
    CHECK(shown == 0);
  }
}

template <class T>
std::vector<T> int_inputs(uint32_t seed) {
  std::vector<T> v = {0,
                      1,
                      T(-1),
                      std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::max(),
                      2,
                      3,
                      T(-2),
                      7,
                      31,
                      32,
                      33,
                      63,
                      64,
                      65};
  std::mt19937_64 rng(seed);
  while (v.size() < 256) v.push_back(static_cast<T>(rng() >> (rng() % 64)));
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST_CASE("cuda semantics: integer arithmetic, division by zero and wide shifts as defined") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::vector<std::string> ops = {"add %x, %y", "sub %x, %y", "mul %x, %y", "div %x, %y",
                                  "rem %x, %y", "min %x, %y", "max %x, %y", "and %x, %y",
                                  "or %x, %y",  "xor %x, %y", "shl %x, %y", "shr %x, %y",
                                  "neg %x",     "abs %x",     "not %x"};
  compare<int32_t, int32_t>(dev, "i32", "i32", ops, int_inputs<int32_t>(1), int_inputs<int32_t>(2));
  compare<uint32_t, uint32_t>(dev, "u32", "u32", ops, int_inputs<uint32_t>(3),
                              int_inputs<uint32_t>(4));
  compare<int64_t, int64_t>(dev, "i64", "i64", ops, int_inputs<int64_t>(5), int_inputs<int64_t>(6));
  compare<uint8_t, uint8_t>(dev, "u8", "u8", ops, int_inputs<uint8_t>(7), int_inputs<uint8_t>(8));
  compare<int16_t, int16_t>(dev, "i16", "i16", ops, int_inputs<int16_t>(9),
                            int_inputs<int16_t>(10));
  std::vector<std::string> cmps = {"cmp_eq %x, %y", "cmp_ne %x, %y", "cmp_lt %x, %y",
                                   "cmp_le %x, %y", "cmp_gt %x, %y", "cmp_ge %x, %y"};
  compare<int32_t, uint8_t>(dev, "i32", "i1", cmps, int_inputs<int32_t>(11),
                            int_inputs<int32_t>(11));
  compare<uint64_t, uint8_t>(dev, "u64", "i1", cmps, int_inputs<uint64_t>(12),
                             int_inputs<uint64_t>(13));
}

template <class T>
std::vector<T> float_inputs(uint32_t seed) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> v = {T(0),
                      T(-0.0),
                      T(1),
                      T(-1),
                      inf,
                      -inf,
                      nan,
                      std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::max(),
                      std::numeric_limits<T>::min(),
                      T(0.5),
                      T(3)};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(-40, 40);
  while (v.size() < 256) v.push_back(static_cast<T>((rng() & 1 ? -1 : 1) * std::exp2(mag(rng))));
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST_CASE(
    "cuda semantics: float arithmetic with NaN, signed zeros, infinities and both NaN rules") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::vector<std::string> ops = {"add %x, %y",
                                  "sub %x, %y",
                                  "mul %x, %y",
                                  "rem %x, %y",
                                  "min %x, %y",
                                  "max %x, %y",
                                  "min %x, %y {nan = \"ignore\"}",
                                  "max %x, %y {nan = \"ignore\"}",
                                  "neg %x",
                                  "abs %x",
                                  "fma %x, %y, %x",
                                  "sqrt %x",
                                  "floor %x",
                                  "ceil %x"};
  compare<float, float>(dev, "f32", "f32", ops, float_inputs<float>(1), float_inputs<float>(2));
  // f32 division is div.full.f32 (ops.h: within 2.5 ulp; PTX documents 2): special values exact.
  compare<float, float>(dev, "f32", "f32", {"div %x, %y"}, float_inputs<float>(1),
                        float_inputs<float>(2), 2);
  ops.push_back("div %x, %y");  // f64 division rounds correctly
  compare<double, double>(dev, "f64", "f64", ops, float_inputs<double>(3), float_inputs<double>(4));
  std::vector<std::string> cmps = {"cmp_eq %x, %y", "cmp_ne %x, %y", "cmp_lt %x, %y",
                                   "cmp_le %x, %y", "cmp_gt %x, %y", "cmp_ge %x, %y"};
  compare<float, uint8_t>(dev, "f32", "i1", cmps, float_inputs<float>(5), float_inputs<float>(5));
}

TEST_CASE("cuda semantics: f16 and bf16 arithmetic rounds like the interpreter") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::mt19937 rng(3);
  std::vector<uint16_t> a(256), b(256);
  for (auto& v : a) v = static_cast<uint16_t>(rng());
  for (auto& v : b) v = static_cast<uint16_t>(rng());
  std::vector<std::string> ops = {"add %x, %y",     "sub %x, %y", "mul %x, %y", "div %x, %y",
                                  "fma %x, %y, %x", "min %x, %y", "max %x, %y", "sqrt %x"};
  compare<uint16_t, uint16_t>(dev, "f16", "f16", ops, a, b);
  compare<uint16_t, uint16_t>(dev, "bf16", "bf16", ops, a, b);
}

TEST_CASE("cuda semantics: conversions between dtypes (rounding, saturation, NaN -> 0)") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::vector<float> fin = float_inputs<float>(7);
  fin[0] = 3e9f;
  fin[1] = -3e9f;
  fin[2] = 16777217.0f;
  for (const char* to :
       {"i8", "u8", "i16", "i32", "u32", "i64", "u64", "f16", "bf16", "f64", "i1"}) {
    CAPTURE(to);
    std::string op = std::string("cast %x");
    std::string t(to);
    if (t == "f64" || t.ends_with("64"))
      compare<float, uint64_t>(dev, "f32", to, {op}, fin, fin);
    else if (t.ends_with("16"))
      compare<float, uint16_t>(dev, "f32", to, {op}, fin, fin);
    else if (t.ends_with("32"))
      compare<float, uint32_t>(dev, "f32", to, {op}, fin, fin);
    else
      compare<float, uint8_t>(dev, "f32", to, {op}, fin, fin);
  }
  // Integers to narrow floats round once (bf16 on sm_80 needs care: 16777217 -> 16777216)
  std::vector<int32_t> iin = int_inputs<int32_t>(8);
  iin[0] = 16777217;
  iin[1] = 0x7fffffc1;
  compare<int32_t, uint16_t>(dev, "i32", "bf16", {"cast %x"}, iin, iin);
  compare<int32_t, uint16_t>(dev, "i32", "f16", {"cast %x"}, iin, iin);
  compare<int32_t, uint32_t>(dev, "i32", "f32", {"cast %x"}, iin, iin);
  std::vector<int64_t> lin = int_inputs<int64_t>(9);
  lin[0] = (int64_t{1} << 62) + (int64_t{1} << 37) + 1;  // rounds up only if the sticky bit is kept
  compare<int64_t, uint16_t>(dev, "i64", "bf16", {"cast %x"}, lin, lin);
  compare<int64_t, uint32_t>(dev, "i64", "f32", {"cast %x"}, lin, lin);
  std::vector<double> din = float_inputs<double>(10);
  compare<double, uint16_t>(dev, "f64", "bf16", {"cast %x"}, din, din);
  compare<double, uint16_t>(dev, "f64", "f16", {"cast %x"}, din, din);
  compare<double, uint32_t>(dev, "f64", "f32", {"cast %x"}, din, din);
  compare<double, uint32_t>(dev, "f64", "i32", {"cast %x"}, din, din);
}

TEST_CASE("cuda semantics: shuffles in every mode, shared memory and barriers") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text =
      kernel("%in: ptr<f64>, %out: ptr<f64>, %sums: ptr<f32>", R"(  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %c32 = constant {value = 32} : i32
  %t0 = mul %sg, %c32 : i32
  %tid = add %t0, %lane : i32
  %tr = constant {value = 1} : i1
  %z = constant {value = 0.0} : f64
  %p = ptr_add %in, %tid : ptr<f64>
  %v = global_load %p, %tr, %z {align = 8, width = 1} : f64
  %c3 = constant {value = 3} : i32
  %c5 = constant {value = 5} : i32
  %x = shuffle %v, %c5 {mode = "xor"} : f64
  %i = shuffle %v, %c3 {mode = "idx"} : f64
  %u = shuffle %v, %c3 {mode = "up"} : f64
  %d = shuffle %v, %c5 {mode = "down"} : f64
  %s0 = add %x, %i : f64
  %s1 = mul %u, %s0 : f64
  %s2 = sub %s1, %d : f64
  %q = ptr_add %out, %tid : ptr<f64>
  global_store %q, %tr, %s2 {align = 8, width = 1}
  %f = cast %v : f32
  %c16 = constant {value = 16} : i32
  %c8 = constant {value = 8} : i32
  %c4 = constant {value = 4} : i32
  %c2 = constant {value = 2} : i32
  %c1 = constant {value = 1} : i32
  %r16 = shuffle %f, %c16 {mode = "xor"} : f32
  %a16 = add %f, %r16 : f32
  %r8 = shuffle %a16, %c8 {mode = "xor"} : f32
  %a8 = add %a16, %r8 : f32
  %r4 = shuffle %a8, %c4 {mode = "xor"} : f32
  %a4 = add %a8, %r4 : f32
  %r2 = shuffle %a4, %c2 {mode = "xor"} : f32
  %a2 = add %a4, %r2 : f32
  %r1 = shuffle %a2, %c1 {mode = "xor"} : f32
  %a1 = add %a2, %r1 : f32
  %c0 = constant {value = 0} : i32
  %first = cmp_eq %lane, %c0 : i1
  if %first ({
    shared_store %sg, %a1 {buffer = 0, width = 1}
    yield
  }, {
    yield
  })
  barrier
  %w0, %w1, %w2, %w3 = shared_load %c0 {buffer = 0, width = 4} : f32, f32, f32, f32
  %b0 = add %w0, %w1 : f32
  %b1 = add %w2, %w3 : f32
  %tot = add %b0, %b1 : f32
  %ps = ptr_add %sums, %tid : ptr<f32>
  global_store %ps, %tr, %tot {align = 4, width = 1})",
             "shared_0 = tile<4xf32>");
  std::vector<double> in(128);
  for (int i = 0; i < 128; ++i) in[i] = i * 1.25 - 40;
  std::vector<Arg> args{buffer(in), buffer(std::vector<double>(128)),
                        buffer(std::vector<float>(128))};
  auto gpu = run(dev, load(dev, text), Grid(1), args);
  auto host = run_interpreter(text, Grid(1), args);
  CHECK(as<double>(gpu[1]) == as<double>(host[1]));
  CHECK(as<float>(gpu[2]) == as<float>(host[2]));
}

TEST_CASE("cuda semantics: contended atomics of every kind and width") {
  CUDA_DEVICE_OR_SKIP(dev);
  // 64 programs x 128 threads hit 4 elements with values[lane]; the results do not depend on
  // the order (or, for bf16, round the same way in every order).
  auto check_one = [&](std::string_view t, std::string_view op, auto zero,
                       std::vector<decltype(zero)> vals, std::vector<decltype(zero)> init,
                       std::string_view extra = "") {
    using T = decltype(zero);
    CAPTURE(t);
    CAPTURE(op);
    std::string T_(t), A = std::to_string(sizeof(T));
    std::string text = kernel("%p: ptr<" + T_ + ">, %vals: ptr<" + T_ + ">",
                              "  %lane = lane_id : i32\n"
                              "  %c3 = constant {value = 3} : i32\n"
                              "  %slot = and %lane, %c3 : i32\n"
                              "  %q = ptr_add %p, %slot : ptr<" +
                                  T_ +
                                  ">\n"
                                  "  %pv = ptr_add %vals, %lane : ptr<" +
                                  T_ +
                                  ">\n"
                                  "  %tr = constant {value = 1} : i1\n"
                                  "  %z = constant {value = 0} : " +
                                  T_ +
                                  "\n"
                                  "  %v = global_load %pv, %tr, %z {align = " +
                                  A + ", width = 1} : " + T_ +
                                  "\n"
                                  "  %old = atomic_rmw %q, %v {op = \"" +
                                  std::string(op) + "\"" + std::string(extra) + "} : " + T_);
    std::vector<Arg> args{buffer(init), buffer(vals)};
    auto gpu = run(dev, load(dev, text), Grid(64), args);
    auto host = run_interpreter(text, Grid(64), args);
    std::vector<T> g = as<T>(gpu[0]), h = as<T>(host[0]);
    CHECK(std::memcmp(g.data(), h.data(), g.size() * sizeof(T)) == 0);
  };
  std::vector<int32_t> iv(32);
  for (int i = 0; i < 32; ++i) iv[i] = (i * 7919) % 1000 - 500;
  for (const char* op : {"add", "max", "min", "and", "or", "xor"})
    check_one("i32", op, int32_t{}, iv, std::vector<int32_t>(4, 5));
  check_one("i32", "add", int32_t{}, iv, std::vector<int32_t>(4, 5),
            ", sem = \"relaxed\", scope = \"cta\"");
  check_one("u64", "add", uint64_t{}, std::vector<uint64_t>(32, 0x100000001ull),
            std::vector<uint64_t>(4, 1));
  std::vector<int8_t> bv(32);
  for (int i = 0; i < 32; ++i) bv[i] = static_cast<int8_t>(i * 37);
  for (const char* op : {"add", "max", "min", "xor"})
    check_one("i8", op, int8_t{}, bv, std::vector<int8_t>(4, 1));
  std::vector<int16_t> hv(32);
  for (int i = 0; i < 32; ++i) hv[i] = static_cast<int16_t>(i * 1237);
  for (const char* op : {"add", "max", "min", "or"})
    check_one("i16", op, int16_t{}, hv, std::vector<int16_t>(4, 1));
  // Float adds of small integers are exact in any order.
  std::vector<float> fv(32);
  for (int i = 0; i < 32; ++i) fv[i] = static_cast<float>(i % 5);
  check_one("f32", "add", 0.0f, fv, std::vector<float>(4, 0.0f));
  std::vector<double> dv(fv.begin(), fv.end());
  check_one("f64", "add", 0.0, dv, std::vector<double>(4, 0.0));
  // 2048 adds of 1.0 per slot: exact in f16; bf16 stops at 256 (256 + 1 rounds to even).
  check_one("f16", "add", uint16_t{}, std::vector<uint16_t>(32, 0x3c00),
            std::vector<uint16_t>(4, 0));
  check_one("bf16", "add", uint16_t{}, std::vector<uint16_t>(32, 0x3f80),
            std::vector<uint16_t>(4, 0));
  // Float max/min: NaN ignored, -0 < +0.
  std::vector<float> mv(32, -0.0f);
  mv[3] = std::numeric_limits<float>::quiet_NaN();
  mv[7] = 0.0f;
  mv[9] = -1e30f;
  for (const char* op : {"max", "min"}) {
    check_one("f32", op, 0.0f, mv,
              std::vector<float>{-0.0f, std::numeric_limits<float>::quiet_NaN(), 5.0f, 0.0f});
    check_one("f64", op, 0.0, std::vector<double>(mv.begin(), mv.end()),
              std::vector<double>{-0.0, std::numeric_limits<double>::quiet_NaN(), 5.0, 0.0});
  }
}

TEST_CASE("cuda semantics: compare-and-swap claims a slot once") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::string text =
      kernel("%flag: ptr<i32>, %winners: ptr<i32>", R"(  %pid = program_id {axis = 0} : i32
  %lane = lane_id : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %old = atomic_cas %flag, %c0, %c1 : i32
  %won = cmp_eq %old, %c0 : i1
  %w = cast %won : i32
  %n = atomic_rmw %winners, %w {op = "add"} : i32)");
  auto out = run(dev, load(dev, text), Grid(100),
                 {buffer(std::vector<int>{0}), buffer(std::vector<int>{0})});
  CHECK(as<int>(out[0])[0] == 1);
  CHECK(as<int>(out[1])[0] == 1);
}

}  // namespace
}  // namespace cuda_test
