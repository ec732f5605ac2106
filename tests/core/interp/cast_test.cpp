// \file cast and bitcast at the edges: truncation and extension by the source's signedness,
// i1, saturation of float -> int, round-to-nearest-even from the exact value, narrow floats.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/support/float16.h"
#include "core/support/float8.h"
#include "tests/core/interp/helpers.h"

using namespace interp_test;
using tessera::bf16_from_double;
using tessera::f16_from_double;
using tessera::f16_to_double;

namespace {
template <class Out, class In>
std::vector<Out> cast(DType from, DType to, std::vector<In> xs) {
  return unary<Out, In>(OpKind::Cast, from, to, std::move(xs));
}
template <class Out, class In>
std::vector<Out> bitcast(DType from, DType to, std::vector<In> xs) {
  return unary<Out, In>(OpKind::Bitcast, from, to, std::move(xs));
}
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("interp cast: int -> int truncates or extends by the source's signedness") {
  CHECK(cast<uint8_t, int32_t>(DType::i32, DType::u8, {300, -1, 255, 256}) ==
        std::vector<uint8_t>{44, 255, 255, 0});
  CHECK(cast<uint32_t, int32_t>(DType::i32, DType::u32, {-1, 7}) ==
        std::vector<uint32_t>{0xFFFFFFFFu, 7});
  CHECK(cast<uint16_t, int8_t>(DType::i8, DType::u16, {-1, 127}) ==
        std::vector<uint16_t>{0xFFFF, 127});
  CHECK(cast<int32_t, uint8_t>(DType::u8, DType::i32, {255, 128}) ==
        std::vector<int32_t>{255, 128});
  CHECK(cast<int8_t, uint8_t>(DType::u8, DType::i8, {200, 127}) == std::vector<int8_t>{-56, 127});
  CHECK(cast<int64_t, uint32_t>(DType::u32, DType::i64, {0xFFFFFFFFu, 1}) ==
        std::vector<int64_t>{4294967295LL, 1});
  CHECK(cast<int64_t, int32_t>(DType::i32, DType::i64, {-5, std::numeric_limits<int32_t>::min()}) ==
        std::vector<int64_t>{-5, -2147483648LL});
  CHECK(cast<int16_t, int64_t>(DType::i64, DType::i16, {0x12345678, -70000}) ==
        std::vector<int16_t>{0x5678, -4464});
}

TEST_CASE("interp cast: fp8 decodes every code exactly and rounds to nearest even, saturating") {
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  const std::vector<float> e4 = cast<float, uint8_t>(DType::f8e4m3, DType::f32, codes);
  const std::vector<float> e5 = cast<float, uint8_t>(DType::f8e5m2, DType::f32, codes);
  for (int c = 0; c < 256; ++c) {
    CAPTURE(c);
    const double w4 = tessera::f8e4m3_to_double(static_cast<uint8_t>(c));
    const double w5 = tessera::f8e5m2_to_double(static_cast<uint8_t>(c));
    CHECK((std::isnan(w4) ? std::isnan(e4[c]) : e4[c] == w4));
    CHECK((std::isnan(w5) ? std::isnan(e5[c]) : e5[c] == w5));
  }
  // Ties to even, the largest value, saturation (infinities too), NaN, subnormals.
  CHECK(cast<uint8_t, float>(
            DType::f32, DType::f8e4m3,
            {1.0625f, 1.1875f, 448.0f, 464.0f, INFINITY, -1e9f, kNaNf, 0x1p-10f, 0x3p-10f}) ==
        std::vector<uint8_t>{0x38, 0x3A, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0x00, 0x02});
  CHECK(cast<uint8_t, float>(DType::f32, DType::f8e5m2,
                             {1.125f, 1.375f, 57344.0f, 61440.0f, -INFINITY, 0x1p-17f}) ==
        std::vector<uint8_t>{0x3C, 0x3E, 0x7B, 0x7B, 0xFB, 0x00});
  // From f16 (one rounding from the exact value) and between the two formats.
  CHECK(cast<uint8_t, uint16_t>(DType::f16, DType::f8e4m3, {f16_from_double(-3.25), 0x7C00}) ==
        std::vector<uint8_t>{0xC5, 0x7E});
  CHECK(cast<uint8_t, uint8_t>(DType::f8e5m2, DType::f8e4m3, {0x7C, 0x3D, 0x01}) ==
        std::vector<uint8_t>{0x7E, 0x3A, 0x00});
  CHECK(cast<int32_t, uint8_t>(DType::f8e4m3, DType::i32, {0x7E, 0xC5, 0x7F}) ==
        std::vector<int32_t>{448, -3, 0});
}

TEST_CASE("interp cast: i1 converts to 0/1, anything converts to i1 as x != 0") {
  CHECK(cast<int32_t, uint8_t>(DType::i1, DType::i32, {1, 0}) == std::vector<int32_t>{1, 0});
  CHECK(cast<float, uint8_t>(DType::i1, DType::f32, {1, 0}) == std::vector<float>{1.0f, 0.0f});
  CHECK(cast<uint8_t, int32_t>(DType::i32, DType::i1, {5, 0, -1, 256}) ==
        std::vector<uint8_t>{1, 0, 1, 1});
  CHECK(cast<uint8_t, float>(DType::f32, DType::i1, {0.5f, -0.0f, kNaNf, 0.0f}) ==
        std::vector<uint8_t>{1, 0, 1, 0});
  CHECK(cast<uint8_t, uint16_t>(DType::f16, DType::i1, {0x8000, 0x0001}) ==
        std::vector<uint8_t>{0, 1});
}

TEST_CASE("interp cast: float -> int truncates toward zero, NaN -> 0, saturates") {
  CHECK(cast<int32_t, float>(DType::f32, DType::i32, {2.9f, -2.9f, kNaNf, 3e9f}) ==
        std::vector<int32_t>{2, -2, 0, std::numeric_limits<int32_t>::max()});
  CHECK(cast<int32_t, float>(DType::f32, DType::i32, {-3e9f, -2147483648.0f}) ==
        std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::min()});
  CHECK(cast<uint8_t, float>(DType::f32, DType::u8, {-1.5f, 300.0f, 255.9f, -0.5f}) ==
        std::vector<uint8_t>{0, 255, 255, 0});
  CHECK(cast<int64_t, double>(DType::f64, DType::i64, {1e19, -1e19, 9.2e18, -0.99}) ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min(), 9200000000000000000LL, 0});
  CHECK(cast<uint64_t, double>(DType::f64, DType::u64, {1.8e19, 2e19, -0.5, 0x1p63}) ==
        std::vector<uint64_t>{18000000000000000000ULL, std::numeric_limits<uint64_t>::max(), 0,
                              0x8000000000000000ULL});
  CHECK(cast<int8_t, uint16_t>(DType::f16, DType::i8, {f16_from_double(-200.0), 0x7C00}) ==
        std::vector<int8_t>{-128, 127});
  CHECK(cast<int16_t, uint16_t>(DType::bf16, DType::i16, {bf16_from_double(-3.75)}) ==
        std::vector<int16_t>{-3});
}

TEST_CASE("interp cast: int -> float rounds to nearest even from the exact value") {
  CHECK(cast<float, int64_t>(DType::i64, DType::f32, {(1LL << 24) + 1, (1LL << 24) + 3}) ==
        std::vector<float>{16777216.0f, 16777220.0f});
  CHECK(cast<double, int64_t>(DType::i64, DType::f64, {(1LL << 53) + 1, -((1LL << 53) + 3)}) ==
        std::vector<double>{9007199254740992.0, -9007199254740996.0});
  CHECK(cast<float, uint64_t>(DType::u64, DType::f32, {std::numeric_limits<uint64_t>::max()}) ==
        std::vector<float>{18446744073709551616.0f});
  CHECK(cast<uint16_t, int32_t>(DType::i32, DType::f16, {2049, 2051, 65519, 65520}) ==
        std::vector<uint16_t>{0x6800, 0x6802, 0x7BFF, 0x7C00});
  CHECK(cast<uint16_t, int32_t>(DType::i32, DType::f16, {-2049, 0}) ==
        std::vector<uint16_t>{0xE800, 0x0000});
  // 2^60 + 2^52 + 1 is just above the bf16 midpoint 2^60 + 2^52; rounding through double first
  // would land on the midpoint and tie to even (0x5D80).
  CHECK(cast<uint16_t, int64_t>(DType::i64, DType::bf16,
                                {(1LL << 60) + (1LL << 52) + 1, (1LL << 60) + (1LL << 52)}) ==
        std::vector<uint16_t>{0x5D81, 0x5D80});
  CHECK(cast<uint16_t, uint64_t>(DType::u64, DType::f16, {std::numeric_limits<uint64_t>::max()}) ==
        std::vector<uint16_t>{0x7C00});
}

TEST_CASE("interp cast: float -> float rounds once, 1e10f -> f16 is inf, 0.1 -> bf16") {
  CHECK(cast<uint16_t, float>(DType::f32, DType::f16, {1e10f, -1e10f, 65504.0f, 1e-8f}) ==
        std::vector<uint16_t>{0x7C00, 0xFC00, 0x7BFF, 0x0000});
  CHECK(cast<uint16_t, double>(DType::f64, DType::bf16, {0.1, -0.1}) ==
        std::vector<uint16_t>{0x3DCD, 0xBDCD});
  CHECK(cast<uint16_t, float>(DType::f32, DType::bf16, {0.1f, 1.0f}) ==
        std::vector<uint16_t>{0x3DCD, 0x3F80});
  // f32 halfway between two f16 values ties to even; a hair above rounds up.
  const float tie = 1.0f + std::ldexp(1.0f, -11), above = tie + std::ldexp(1.0f, -20);
  CHECK(cast<uint16_t, float>(DType::f32, DType::f16, {tie, above}) ==
        std::vector<uint16_t>{0x3C00, 0x3C01});
  CHECK(cast<float, uint16_t>(DType::f16, DType::f32, {0x3555, 0x0001, 0x7C00}) ==
        std::vector<float>{static_cast<float>(f16_to_double(0x3555)), std::ldexp(1.0f, -24),
                           std::numeric_limits<float>::infinity()});
  CHECK(cast<float, double>(DType::f64, DType::f32, {0.1, 1e300}) ==
        std::vector<float>{0.1f, std::numeric_limits<float>::infinity()});
  CHECK(cast<double, uint16_t>(DType::bf16, DType::f64, {0x3DCD}) ==
        std::vector<double>{0.10009765625});
  CHECK(cast<uint16_t, uint16_t>(DType::bf16, DType::f16, {0x3DCD}) ==
        std::vector<uint16_t>{f16_from_double(0.10009765625)});
  const auto nan = cast<uint16_t, float>(DType::f32, DType::f16, {kNaNf});
  CHECK((nan[0] & 0x7C00) == 0x7C00);
  CHECK((nan[0] & 0x03FF) != 0);
}

TEST_CASE("interp cast: bitcast reinterprets the bits") {
  CHECK(bitcast<uint32_t, float>(DType::f32, DType::u32, {1.0f, -0.0f}) ==
        std::vector<uint32_t>{0x3F800000u, 0x80000000u});
  CHECK(bitcast<float, int32_t>(DType::i32, DType::f32, {0x40490FDB}) ==
        std::vector<float>{f32_bits(0x40490FDBu)});
  CHECK(bitcast<int16_t, uint16_t>(DType::f16, DType::i16, {0x3C00, 0xFC00}) ==
        std::vector<int16_t>{0x3C00, static_cast<int16_t>(0xFC00)});
  CHECK(bitcast<int32_t, uint32_t>(DType::u32, DType::i32, {0xFFFFFFFFu}) ==
        std::vector<int32_t>{-1});
  CHECK(bitcast<double, int64_t>(DType::i64, DType::f64, {0x3FF0000000000000LL}) ==
        std::vector<double>{1.0});
  CHECK(bitcast<uint16_t, uint16_t>(DType::bf16, DType::f16, {0x3F80}) ==
        std::vector<uint16_t>{0x3F80});
}
