// \file Elementwise integer and float semantics of the interpreter against host references:
// wrap-around, signedness, the defined results of undefined cases, NaN and -0 rules, narrow
// float rounding, and the math functions.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/support/float16.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;
using tessera::bf16_from_double;
using tessera::f16_from_double;
using tessera::f16_to_double;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
template <class T>
constexpr T max_of() {
  return std::numeric_limits<T>::max();
}
template <class T>
constexpr T min_of() {
  return std::numeric_limits<T>::min();
}
}  // namespace

TEST_CASE("interp arith: i8/u8/i16/u16/i64 add, sub and mul wrap around") {
  CHECK(binary<int8_t, int8_t>(OpKind::Add, DType::i8, DType::i8, {100, -128, 127, 5},
                               {100, -1, 1, -7}) == std::vector<int8_t>{-56, 127, -128, -2});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Sub, DType::u8, DType::u8, {0, 5, 200, 255},
                                 {1, 10, 100, 255}) == std::vector<uint8_t>{255, 251, 100, 0});
  CHECK(binary<int16_t, int16_t>(OpKind::Mul, DType::i16, DType::i16, {300, -300}, {300, 300}) ==
        std::vector<int16_t>{24464, -24464});
  CHECK(binary<uint16_t, uint16_t>(OpKind::Mul, DType::u16, DType::u16, {65535, 256},
                                   {65535, 256}) == std::vector<uint16_t>{1, 0});
  CHECK(binary<int64_t, int64_t>(OpKind::Mul, DType::i64, DType::i64,
                                 {max_of<int64_t>(), min_of<int64_t>()},
                                 {2, -1}) == std::vector<int64_t>{-2, min_of<int64_t>()});
  CHECK(binary<int32_t, int32_t>(OpKind::Add, DType::i32, DType::i32, {max_of<int32_t>(), -5},
                                 {1, 3}) == std::vector<int32_t>{min_of<int32_t>(), -2});
  CHECK(binary<uint64_t, uint64_t>(OpKind::Add, DType::u64, DType::u64, {max_of<uint64_t>(), 1},
                                   {2, 2}) == std::vector<uint64_t>{1, 3});
}

TEST_CASE("interp arith: division and remainder truncate, by signedness") {
  CHECK(binary<int32_t, int32_t>(OpKind::Div, DType::i32, DType::i32, {7, -7, 7, -7},
                                 {2, 2, -2, -2}) == std::vector<int32_t>{3, -3, -3, 3});
  CHECK(binary<int32_t, int32_t>(OpKind::Rem, DType::i32, DType::i32, {7, -7, 7, -7},
                                 {2, 2, -2, -2}) == std::vector<int32_t>{1, -1, 1, -1});
  CHECK(binary<uint32_t, uint32_t>(OpKind::Div, DType::u32, DType::u32, {0xFFFFFFFFu, 7}, {2, 2}) ==
        std::vector<uint32_t>{0x7FFFFFFFu, 3});
  CHECK(binary<int32_t, int32_t>(OpKind::Div, DType::i32, DType::i32, {-1, 7}, {2, 2}) ==
        std::vector<int32_t>{0, 3});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Rem, DType::u8, DType::u8, {250, 7}, {7, 250}) ==
        std::vector<uint8_t>{5, 7});
  CHECK(binary<int8_t, int8_t>(OpKind::Div, DType::i8, DType::i8, {-128, -128}, {-1, 2}) ==
        std::vector<int8_t>{-128, -64});
}

TEST_CASE("interp arith: undefined integer cases have the documented results") {
  // x / 0 == 0, x % 0 == x, MIN / -1 wraps, MIN % -1 == 0.
  CHECK(binary<int32_t, int32_t>(OpKind::Div, DType::i32, DType::i32, {5, min_of<int32_t>()},
                                 {0, -1}) == std::vector<int32_t>{0, min_of<int32_t>()});
  CHECK(binary<int64_t, int64_t>(OpKind::Rem, DType::i64, DType::i64, {5, min_of<int64_t>()},
                                 {0, -1}) == std::vector<int64_t>{5, 0});
  CHECK(binary<int64_t, int64_t>(OpKind::Div, DType::i64, DType::i64, {min_of<int64_t>(), 9},
                                 {-1, 0}) == std::vector<int64_t>{min_of<int64_t>(), 0});
  CHECK(binary<uint16_t, uint16_t>(OpKind::Rem, DType::u16, DType::u16, {9, 9}, {0, 4}) ==
        std::vector<uint16_t>{9, 1});
  // Shifts by >= the width (or a negative count) saturate like PTX.
  CHECK(binary<int32_t, int32_t>(OpKind::Shl, DType::i32, DType::i32, {1, 1, 1, 5},
                                 {31, 32, -1, 0}) ==
        std::vector<int32_t>{min_of<int32_t>(), 0, 0, 5});
  CHECK(binary<int32_t, int32_t>(OpKind::Shr, DType::i32, DType::i32, {-8, -8, 8, -1},
                                 {1, 40, 40, 31}) == std::vector<int32_t>{-4, -1, 0, -1});
  CHECK(binary<uint32_t, uint32_t>(OpKind::Shr, DType::u32, DType::u32, {0x80000000u, 0x80000000u},
                                   {31, 32}) == std::vector<uint32_t>{1, 0});
}

TEST_CASE("interp arith: shifts are arithmetic for signed and logical for unsigned") {
  CHECK(binary<int8_t, int8_t>(OpKind::Shr, DType::i8, DType::i8, {-128, 64, -1, 127},
                               {1, 2, 7, 7}) == std::vector<int8_t>{-64, 16, -1, 0});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Shr, DType::u8, DType::u8, {128, 255, 255, 1},
                                 {1, 4, 7, 8}) == std::vector<uint8_t>{64, 15, 1, 0});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Shl, DType::u8, DType::u8, {1, 255, 3, 1}, {7, 4, 1, 8}) ==
        std::vector<uint8_t>{128, 240, 6, 0});
  CHECK(binary<int64_t, int64_t>(OpKind::Shl, DType::i64, DType::i64, {1, 3}, {63, 62}) ==
        std::vector<int64_t>{min_of<int64_t>(), min_of<int64_t>() + (int64_t{1} << 62)});
  CHECK(binary<uint64_t, uint64_t>(OpKind::Shr, DType::u64, DType::u64, {max_of<uint64_t>(), 1},
                                   {63, 64}) == std::vector<uint64_t>{1, 0});
}

TEST_CASE("interp arith: bitwise ops, and i1 logic") {
  CHECK(binary<uint32_t, uint32_t>(OpKind::And, DType::u32, DType::u32, {0xF0F0u}, {0xFF00u}) ==
        std::vector<uint32_t>{0xF000u});
  CHECK(binary<int16_t, int16_t>(OpKind::Or, DType::i16, DType::i16, {0x0F0F, -32768},
                                 {0x00F0, 1}) == std::vector<int16_t>{0x0FFF, -32767});
  CHECK(binary<int64_t, int64_t>(OpKind::Xor, DType::i64, DType::i64, {-1, 6}, {0x5555, 3}) ==
        std::vector<int64_t>{~int64_t{0x5555}, 5});
  const std::vector<uint8_t> a{0, 0, 1, 1}, b{0, 1, 0, 1};
  CHECK(binary<uint8_t, uint8_t>(OpKind::And, DType::i1, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Or, DType::i1, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Xor, DType::i1, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 1, 1, 0});
  // i1 arithmetic wraps mod 2: add is xor, mul is and.
  CHECK(binary<uint8_t, uint8_t>(OpKind::Add, DType::i1, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 1, 1, 0});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Mul, DType::i1, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(unary<uint8_t, uint8_t>(OpKind::Not, DType::i1, DType::i1, {0, 1}) ==
        std::vector<uint8_t>{1, 0});
  CHECK(unary<int32_t, int32_t>(OpKind::Not, DType::i32, DType::i32, {0, -1, 5, 7}) ==
        std::vector<int32_t>{-1, 0, -6, -8});
  CHECK(unary<uint8_t, uint8_t>(OpKind::Not, DType::u8, DType::u8, {0, 0x0F}) ==
        std::vector<uint8_t>{0xFF, 0xF0});
}

TEST_CASE("interp arith: neg and abs on integers wrap") {
  CHECK(
      unary<int32_t, int32_t>(OpKind::Abs, DType::i32, DType::i32, {-5, 5, min_of<int32_t>(), 0}) ==
      std::vector<int32_t>{5, 5, min_of<int32_t>(), 0});
  CHECK(unary<int8_t, int8_t>(OpKind::Neg, DType::i8, DType::i8, {-128, 1}) ==
        std::vector<int8_t>{-128, -1});
  CHECK(unary<uint8_t, uint8_t>(OpKind::Neg, DType::u8, DType::u8, {1, 0}) ==
        std::vector<uint8_t>{255, 0});
  CHECK(unary<uint16_t, uint16_t>(OpKind::Abs, DType::u16, DType::u16, {65535, 3}) ==
        std::vector<uint16_t>{65535, 3});
}

TEST_CASE("interp arith: integer comparisons and min/max follow signedness") {
  const std::vector<uint8_t> lt_signed = binary<uint8_t, int8_t>(
      OpKind::CmpLt, DType::i8, DType::i1, {-1, 1, 5, -128}, {1, -1, 5, 127});
  CHECK(lt_signed == std::vector<uint8_t>{1, 0, 0, 1});
  CHECK(binary<uint8_t, uint8_t>(OpKind::CmpLt, DType::u8, DType::i1, {255, 1, 5, 0},
                                 {1, 255, 5, 128}) == std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(binary<uint8_t, uint32_t>(OpKind::CmpGe, DType::u32, DType::i1, {0xFFFFFFFFu, 0, 3, 2},
                                  {1, 0, 4, 2}) == std::vector<uint8_t>{1, 1, 0, 1});
  CHECK(binary<uint8_t, int64_t>(OpKind::CmpLe, DType::i64, DType::i1, {min_of<int64_t>(), 3, 4, 4},
                                 {max_of<int64_t>(), 3, 3, 5}) == std::vector<uint8_t>{1, 1, 0, 1});
  CHECK(binary<uint8_t, int16_t>(OpKind::CmpEq, DType::i16, DType::i1, {1, 2}, {1, 3}) ==
        std::vector<uint8_t>{1, 0});
  CHECK(binary<uint8_t, int16_t>(OpKind::CmpNe, DType::i16, DType::i1, {1, 2}, {1, 3}) ==
        std::vector<uint8_t>{0, 1});
  CHECK(binary<uint8_t, int16_t>(OpKind::CmpGt, DType::i16, DType::i1, {-1, 2}, {-2, 3}) ==
        std::vector<uint8_t>{1, 0});
  CHECK(binary<int8_t, int8_t>(OpKind::Max, DType::i8, DType::i8, {-1, 100}, {1, -100}) ==
        std::vector<int8_t>{1, 100});
  CHECK(binary<uint8_t, uint8_t>(OpKind::Max, DType::u8, DType::u8, {255, 100}, {1, 200}) ==
        std::vector<uint8_t>{255, 200});
  CHECK(binary<uint32_t, uint32_t>(OpKind::Min, DType::u32, DType::u32, {0xFFFFFFFFu, 5}, {1, 7}) ==
        std::vector<uint32_t>{1, 5});
  CHECK(binary<int64_t, int64_t>(OpKind::Min, DType::i64, DType::i64, {-1, 5}, {1, 7}) ==
        std::vector<int64_t>{-1, 5});
}

TEST_CASE("interp arith: f32 and f64 arithmetic is IEEE, rem is fmod") {
  const std::vector<float> a{1.5f, 0.1f, -7.5f, 1e30f}, b{2.25f, 0.2f, 2.0f, 1e30f};
  std::vector<float> add(4), mul(4), div(4), sub(4), rem(4);
  for (int i = 0; i < 4; ++i) {
    add[i] = a[i] + b[i];
    sub[i] = a[i] - b[i];
    mul[i] = a[i] * b[i];
    div[i] = a[i] / b[i];
    rem[i] = std::fmod(a[i], b[i]);
  }
  CHECK(binary<float, float>(OpKind::Add, DType::f32, DType::f32, a, b) == add);
  CHECK(binary<float, float>(OpKind::Sub, DType::f32, DType::f32, a, b) == sub);
  CHECK(binary<float, float>(OpKind::Mul, DType::f32, DType::f32, a, b) == mul);
  CHECK(binary<float, float>(OpKind::Div, DType::f32, DType::f32, a, b) == div);
  CHECK(binary<float, float>(OpKind::Rem, DType::f32, DType::f32, a, b) == rem);
  CHECK(mul[3] == std::numeric_limits<float>::infinity());
  CHECK(rem[2] == -1.5f);
  const std::vector<double> x{0.1, 1.0, -0.0, 1.0}, y{0.2, 3.0, 0.0, 0.0};
  const std::vector<double> sum = binary<double, double>(OpKind::Add, DType::f64, DType::f64, x, y);
  CHECK(sum[0] == 0.1 + 0.2);
  CHECK(binary<double, double>(OpKind::Div, DType::f64, DType::f64, x, y)[1] == 1.0 / 3.0);
  CHECK(binary<double, double>(OpKind::Div, DType::f64, DType::f64, x, y)[3] == kInf);
  CHECK(std::signbit(binary<double, double>(OpKind::Mul, DType::f64, DType::f64, x, y)[2]));
}

TEST_CASE("interp arith: f16 and bf16 round halfway cases to even") {
  // f16: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 (even: 1); 1 + 3*2^-11 goes up.
  const uint16_t one = 0x3C00, one_ulp = 0x3C01, half_ulp = 0x1000;  // 2^-11
  CHECK(f16_to_double(half_ulp) == std::ldexp(1.0, -11));
  CHECK(binary<uint16_t, uint16_t>(OpKind::Add, DType::f16, DType::f16, {one, one_ulp},
                                   {half_ulp, half_ulp}) == std::vector<uint16_t>{0x3C00, 0x3C02});
  // bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  const uint16_t b_one = 0x3F80, b_odd = 0x3F81, b_half = 0x3B80;  // 2^-8
  CHECK(binary<uint16_t, uint16_t>(OpKind::Add, DType::bf16, DType::bf16, {b_one, b_odd},
                                   {b_half, b_half}) == std::vector<uint16_t>{0x3F80, 0x3F82});
  // Products and quotients round once from the exact value.
  const uint16_t three = f16_from_double(3.0), tenth = f16_from_double(0.1);
  CHECK(binary<uint16_t, uint16_t>(OpKind::Div, DType::f16, DType::f16, {one, tenth},
                                   {three, three}) ==
        std::vector<uint16_t>{f16_from_double(1.0 / 3.0),
                              f16_from_double(f16_to_double(tenth) / 3.0)});
  CHECK(
      binary<uint16_t, uint16_t>(OpKind::Mul, DType::f16, DType::f16, {tenth, 0x7BFF},
                                 {tenth, 0x4000}) ==
      std::vector<uint16_t>{f16_from_double(f16_to_double(tenth) * f16_to_double(tenth)), 0x7C00});
  CHECK(binary<uint16_t, uint16_t>(OpKind::Sub, DType::bf16, DType::bf16, {b_one}, {b_one}) ==
        std::vector<uint16_t>{0x0000});
}

TEST_CASE("interp arith: float comparisons are ordered except cmp_ne") {
  const std::vector<float> a{NAN, NAN, 1.0f, -0.0f}, b{NAN, 1.0f, NAN, 0.0f};
  CHECK(binary<uint8_t, float>(OpKind::CmpEq, DType::f32, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(binary<uint8_t, float>(OpKind::CmpNe, DType::f32, DType::i1, a, b) ==
        std::vector<uint8_t>{1, 1, 1, 0});
  CHECK(binary<uint8_t, float>(OpKind::CmpLt, DType::f32, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 0, 0, 0});
  CHECK(binary<uint8_t, float>(OpKind::CmpGe, DType::f32, DType::i1, a, b) ==
        std::vector<uint8_t>{0, 0, 0, 1});
  const uint16_t h_nan = 0x7E00, h_one = 0x3C00, h_two = 0x4000;
  CHECK(binary<uint8_t, uint16_t>(OpKind::CmpLe, DType::f16, DType::i1,
                                  {h_nan, h_one, h_two, 0x8000}, {h_one, h_two, h_one, 0x0000}) ==
        std::vector<uint8_t>{0, 1, 0, 1});
  CHECK(binary<uint8_t, double>(OpKind::CmpGt, DType::f64, DType::i1, {kInf, kNaN}, {1e308, 0.0}) ==
        std::vector<uint8_t>{1, 0});
}

TEST_CASE("interp arith: float min/max NaN rules and -0 < +0") {
  const std::vector<float> a{NAN, 1.0f, -0.0f, 0.0f}, b{1.0f, NAN, 0.0f, -0.0f};
  const auto max_p = binary<float, float>(OpKind::Max, DType::f32, DType::f32, a, b);
  CHECK(std::isnan(max_p[0]));
  CHECK(std::isnan(max_p[1]));
  CHECK(bits_f32(max_p[2]) == 0x00000000u);
  CHECK(bits_f32(max_p[3]) == 0x00000000u);
  const auto min_p = binary<float, float>(OpKind::Min, DType::f32, DType::f32, a, b);
  CHECK(std::isnan(min_p[0]));
  CHECK(bits_f32(min_p[2]) == 0x80000000u);
  CHECK(bits_f32(min_p[3]) == 0x80000000u);
  const auto max_i = binary<float, float>(OpKind::Max, DType::f32, DType::f32, a, b,
                                          {{"nan", std::string("ignore")}});
  CHECK(max_i == std::vector<float>{1.0f, 1.0f, 0.0f, 0.0f});
  const auto min_i = binary<float, float>(OpKind::Min, DType::f32, DType::f32, a, b,
                                          {{"nan", std::string("ignore")}});
  CHECK(min_i[0] == 1.0f);
  CHECK(min_i[1] == 1.0f);
  // f16: the result is one operand, bit for bit.
  CHECK(binary<uint16_t, uint16_t>(OpKind::Max, DType::f16, DType::f16,
                                   {0x7E01, 0x3C00, 0x8000, 0xC000},
                                   {0x3C00, 0x4000, 0x0000, 0xBC00}) ==
        std::vector<uint16_t>{0x7E01, 0x4000, 0x0000, 0xBC00});
  CHECK(binary<double, double>(OpKind::Min, DType::f64, DType::f64, {kNaN, -kInf}, {kNaN, 3.0},
                               {{"nan", std::string("ignore")}})[1] == -kInf);
}

TEST_CASE("interp arith: math functions are the double result rounded once") {
  const std::vector<float> x{0.5f, 1.0f, 2.0f, 10.0f};
  auto each = [&](OpKind kind, double (*f)(double)) {
    std::vector<float> ref;
    for (float v : x) ref.push_back(static_cast<float>(f(v)));
    std::vector<float> got = unary<float, float>(kind, DType::f32, DType::f32, x);
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i)  // bit for bit: asin(2) and acos(10) are NaN
      CHECK(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(ref[i]));
  };
  each(OpKind::Exp, [](double v) { return std::exp(v); });
  each(OpKind::Exp2, [](double v) { return std::exp2(v); });
  each(OpKind::Log, [](double v) { return std::log(v); });
  each(OpKind::Log2, [](double v) { return std::log2(v); });
  each(OpKind::Sqrt, [](double v) { return std::sqrt(v); });
  each(OpKind::Rsqrt, [](double v) { return 1.0 / std::sqrt(v); });
  each(OpKind::Sin, [](double v) { return std::sin(v); });
  each(OpKind::Cos, [](double v) { return std::cos(v); });
  each(OpKind::Tanh, [](double v) { return std::tanh(v); });
  each(OpKind::Erf, [](double v) { return std::erf(v); });
  each(OpKind::Log1p, [](double v) { return std::log1p(v); });
  each(OpKind::Expm1, [](double v) { return std::expm1(v); });
  each(OpKind::Log10, [](double v) { return std::log10(v); });
  each(OpKind::Sinh, [](double v) { return std::sinh(v); });
  each(OpKind::Cosh, [](double v) { return std::cosh(v); });
  each(OpKind::Asin, [](double v) { return std::asin(v); });
  each(OpKind::Acos, [](double v) { return std::acos(v); });
  each(OpKind::Atan, [](double v) { return std::atan(v); });
  each(OpKind::Cbrt, [](double v) { return std::cbrt(v); });
  const std::vector<double> a{-8.0, 2.0, 0.0, -0.0}, b{1.0 / 3, -3.0, -1.0, -3.0};
  auto each2 = [&](OpKind kind, double (*f)(double, double)) {
    const std::vector<double> got = binary<double, double>(kind, DType::f64, DType::f64, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CHECK(std::bit_cast<uint64_t>(got[i]) == std::bit_cast<uint64_t>(f(a[i], b[i])));
    }
  };
  each2(OpKind::Pow, [](double x, double y) { return std::pow(x, y); });  // NaN, 1/8, inf, -inf
  each2(OpKind::Atan2, [](double x, double y) { return std::atan2(x, y); });
  each2(OpKind::Hypot, [](double x, double y) { return std::hypot(x, y); });
  CHECK(unary<float, float>(OpKind::Exp2, DType::f32, DType::f32, {10.0f, -1.0f}) ==
        std::vector<float>{1024.0f, 0.5f});
  CHECK(unary<float, float>(OpKind::Floor, DType::f32, DType::f32, {-1.5f, 1.5f, -0.0f, 2.0f}) ==
        std::vector<float>{-2.0f, 1.0f, -0.0f, 2.0f});
  CHECK(unary<float, float>(OpKind::Ceil, DType::f32, DType::f32, {-1.5f, 1.5f, 0.25f, 2.0f}) ==
        std::vector<float>{-1.0f, 2.0f, 1.0f, 2.0f});
  const auto special = unary<float, float>(OpKind::Log, DType::f32, DType::f32, {-1.0f, 0.0f});
  CHECK(std::isnan(special[0]));
  CHECK(special[1] == -std::numeric_limits<float>::infinity());
  CHECK(unary<float, float>(OpKind::Rsqrt, DType::f32, DType::f32, {4.0f, 0.0f})[1] ==
        std::numeric_limits<float>::infinity());
  // f16 and f64.
  const uint16_t h = f16_from_double(0.7);
  CHECK(unary<uint16_t, uint16_t>(OpKind::Exp, DType::f16, DType::f16, {h}) ==
        std::vector<uint16_t>{f16_from_double(std::exp(f16_to_double(h)))});
  CHECK(unary<uint16_t, uint16_t>(OpKind::Sqrt, DType::bf16, DType::bf16, {0x4000}) ==
        std::vector<uint16_t>{bf16_from_double(std::sqrt(2.0))});
  CHECK(unary<double, double>(OpKind::Sin, DType::f64, DType::f64, {1.0}) ==
        std::vector<double>{std::sin(1.0)});
}

TEST_CASE("interp arith: float neg and abs flip or clear the sign bit") {
  const auto neg = unary<float, float>(OpKind::Neg, DType::f32, DType::f32, {0.0f, 1.5f});
  CHECK(bits_f32(neg[0]) == 0x80000000u);
  CHECK(neg[1] == -1.5f);
  CHECK(unary<uint16_t, uint16_t>(OpKind::Neg, DType::f16, DType::f16, {0x7E00, 0x3C00}) ==
        std::vector<uint16_t>{0xFE00, 0xBC00});
  CHECK(unary<uint16_t, uint16_t>(OpKind::Abs, DType::bf16, DType::bf16, {0x8000, 0xBF80}) ==
        std::vector<uint16_t>{0x0000, 0x3F80});
  const auto abs = unary<double, double>(OpKind::Abs, DType::f64, DType::f64, {-0.0, -kInf});
  CHECK_FALSE(std::signbit(abs[0]));
  CHECK(abs[1] == kInf);
}

TEST_CASE("interp arith: fma rounds once") {
  // f16: a*a - 1 for a = 1 + 3*2^-10 keeps the 9*2^-20 term only when fused.
  const double a = 1 + 3 * std::ldexp(1.0, -10);
  const uint16_t ha = f16_from_double(a), minus_one = 0xBC00;
  const std::vector<uint16_t> fused = eval<uint16_t, uint16_t, uint16_t>(
      DType::f16, {2},
      [](Kernel& k, std::vector<Value*> t) {
        return k.op(OpKind::Fma, {t[0], t[0], t[1]}, t[0]->type);
      },
      std::pair{DType::f16, std::vector<uint16_t>{ha, ha}},
      std::pair{DType::f16, std::vector<uint16_t>{minus_one, minus_one}});
  const uint16_t exact = f16_from_double(a * a - 1);
  const uint16_t unfused = f16_from_double(f16_to_double(f16_from_double(a * a)) - 1);
  CHECK(exact != unfused);
  CHECK(fused[0] == exact);
  // f32: against the C library's fmaf.
  const float x = 1.0f + std::ldexp(1.0f, -12), y = x, z = -1.0f;  // x*y rounds a tie
  const std::vector<float> r = eval<float, float, float, float>(
      DType::f32, {1},
      [](Kernel& k, std::vector<Value*> t) {
        return k.op(OpKind::Fma, {t[0], t[1], t[2]}, t[0]->type);
      },
      std::pair{DType::f32, std::vector<float>{x}}, std::pair{DType::f32, std::vector<float>{y}},
      std::pair{DType::f32, std::vector<float>{z}});
  CHECK(r[0] == std::fma(x, y, z));
  CHECK(r[0] != x * y + z);
}
