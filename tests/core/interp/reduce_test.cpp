// \file Built-in reductions and scans along every axis of 1-D, 2-D and 3-D tiles, against
// host loops; argmax/argmin ties and NaN; the pairwise order of float sums.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "tests/core/interp/helpers.h"

using namespace interp_test;

namespace {

Shape drop(Shape s, int axis) {
  s.erase(s.begin() + axis);
  return s;
}

/// Runs `reduce` (or `scan`) of `kind` along `axis` of an input tile of `shape`.
template <class Out, class In>
std::vector<Out> reduce(OpKind op, DType in, DType out, Shape shape, int axis,
                        const std::string& kind, std::vector<In> data, bool reverse = false) {
  return eval<Out, In>(
      out, shape,
      [&](Kernel& k, std::vector<Value*> t) {
        Shape rs = op == OpKind::Scan ? shape : drop(shape, axis);
        Type type = rs.empty() ? Type::scalar(out) : Type::tile(out, rs);
        std::vector<Attribute> attrs{{"axis", int64_t{axis}}, {"kind", kind}};
        if (reverse) attrs.push_back({"reverse", int64_t{1}});
        return k.op(op, {t[0]}, type, attrs);
      },
      std::pair{in, data});
}

/// Host reference: folds each line along `axis` with `f` (order-insensitive kinds only), or
/// scans it (inclusive, forward or reverse) when `scan`.
template <class T>
std::vector<T> reference(const std::vector<T>& in, const Shape& shape, int axis,
                         const std::function<T(T, T)>& f, bool scan = false, bool reverse = false) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  std::vector<T> out(scan ? in.size() : static_cast<size_t>(outer * inner));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
      T acc{};
      for (int64_t step = 0; step < n; ++step) {
        const int64_t k = reverse ? n - 1 - step : step;
        acc = step == 0 ? in[at(k)] : f(acc, in[at(k)]);
        if (scan) out[at(k)] = acc;
      }
      if (!scan) out[o * inner + i] = acc;
    }
  return out;
}

std::vector<int32_t> random_ints(size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

const std::vector<Shape> kShapes = {{8}, {4, 8}, {2, 4, 8}, {1, 4}, {4, 1}};

}  // namespace

TEST_CASE("interp reduce: sum, prod, max, min, and, or, xor_sum along every axis") {
  const std::vector<std::pair<std::string, std::function<int32_t(int32_t, int32_t)>>> kinds = {
      {"sum", [](int32_t a, int32_t b) { return a + b; }},
      {"prod", [](int32_t a, int32_t b) { return a * b; }},
      {"max", [](int32_t a, int32_t b) { return std::max(a, b); }},
      {"min", [](int32_t a, int32_t b) { return std::min(a, b); }},
      {"and", [](int32_t a, int32_t b) { return a & b; }},
      {"or", [](int32_t a, int32_t b) { return a | b; }},
      {"xor_sum", [](int32_t a, int32_t b) { return a ^ b; }},
  };
  unsigned seed = 1;
  for (const Shape& shape : kShapes) {
    const auto data =
        random_ints(static_cast<size_t>(tessera::ir::num_elements(shape)), -9, 9, seed++);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
      for (const auto& [kind, f] : kinds) {
        INFO("shape " << tessera::ir::shape_str(shape) << " axis " << axis << " " << kind);
        CHECK(reduce<int32_t, int32_t>(OpKind::Reduce, DType::i32, DType::i32, shape, axis, kind,
                                       data) == reference<int32_t>(data, shape, axis, f));
      }
  }
}

TEST_CASE("interp reduce: argmax and argmin along every axis, ties to the lowest index") {
  unsigned seed = 7;
  for (const Shape& shape : kShapes) {
    // Few distinct values, so ties are common.
    const auto data =
        random_ints(static_cast<size_t>(tessera::ir::num_elements(shape)), 0, 3, seed++);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= shape[d];
      for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
      std::vector<int32_t> amax, amin;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int32_t bi = 0, si = 0;
          for (int64_t k = 1; k < shape[axis]; ++k) {
            const int32_t v = data[(o * shape[axis] + k) * inner + i];
            if (v > data[(o * shape[axis] + bi) * inner + i]) bi = static_cast<int32_t>(k);
            if (v < data[(o * shape[axis] + si) * inner + i]) si = static_cast<int32_t>(k);
          }
          amax.push_back(bi);
          amin.push_back(si);
        }
      INFO("shape " << tessera::ir::shape_str(shape) << " axis " << axis);
      CHECK(reduce<int32_t, int32_t>(OpKind::Reduce, DType::i32, DType::i32, shape, axis, "argmax",
                                     data) == amax);
      CHECK(reduce<int32_t, int32_t>(OpKind::Reduce, DType::i32, DType::i32, shape, axis, "argmin",
                                     data) == amin);
    }
  }
}

TEST_CASE("interp reduce: NaN is the extreme of max, min, argmax and argmin") {
  const std::vector<float> x{1.0f, NAN, 5.0f, NAN, -3.0f, 0.0f, -0.0f, 2.0f};
  auto r = [&](const std::string& kind, DType out) {
    return reduce<float, float>(OpKind::Reduce, DType::f32, out, {8}, 0, kind, x);
  };
  CHECK(std::isnan(r("max", DType::f32)[0]));
  CHECK(std::isnan(r("min", DType::f32)[0]));
  CHECK(reduce<int32_t, float>(OpKind::Reduce, DType::f32, DType::i32, {8}, 0, "argmax", x)[0] ==
        1);
  CHECK(reduce<int32_t, float>(OpKind::Reduce, DType::f32, DType::i32, {8}, 0, "argmin", x)[0] ==
        1);
  // Without NaN: -0 < +0, so argmax of {-0, +0} is 1 and argmin 0; max gives +0.
  const std::vector<float> z{-0.0f, 0.0f};
  CHECK(reduce<int32_t, float>(OpKind::Reduce, DType::f32, DType::i32, {2}, 0, "argmax", z)[0] ==
        1);
  CHECK(reduce<int32_t, float>(OpKind::Reduce, DType::f32, DType::i32, {2}, 0, "argmin", z)[0] ==
        0);
  CHECK(bits_f32(reduce<float, float>(OpKind::Reduce, DType::f32, DType::f32, {2}, 0, "max",
                                      z)[0]) == 0u);
  const std::vector<float> ties{2.0f, 7.0f, 7.0f, -1.0f};
  CHECK(reduce<int32_t, float>(OpKind::Reduce, DType::f32, DType::i32, {4}, 0, "argmax", ties)[0] ==
        1);
}

TEST_CASE("interp reduce: integer sums wrap, xor_sum and or on i1, u8 max is unsigned") {
  CHECK(reduce<int8_t, int8_t>(OpKind::Reduce, DType::i8, DType::i8, {4}, 0, "sum",
                               {100, 100, 100, -1})[0] == 43);
  CHECK(reduce<uint8_t, uint8_t>(OpKind::Reduce, DType::i1, DType::i1, {4}, 0, "xor_sum",
                                 {1, 1, 1, 0})[0] == 1);
  CHECK(reduce<uint8_t, uint8_t>(OpKind::Reduce, DType::i1, DType::i1, {4}, 0, "or",
                                 {0, 0, 1, 0})[0] == 1);
  CHECK(reduce<uint8_t, uint8_t>(OpKind::Reduce, DType::i1, DType::i1, {4}, 0, "and",
                                 {1, 1, 0, 1})[0] == 0);
  CHECK(reduce<uint8_t, uint8_t>(OpKind::Reduce, DType::u8, DType::u8, {4}, 0, "max",
                                 {1, 200, 3, 128})[0] == 200);
  CHECK(reduce<int64_t, int64_t>(OpKind::Reduce, DType::i64, DType::i64, {2}, 0, "prod",
                                 {int64_t{1} << 40, (int64_t{1} << 30) + 1})[0] ==
        int64_t{1} << 40);  // 2^70 + 2^40 wraps to 2^40
}

TEST_CASE("interp reduce: float sums combine adjacent pairs (a pairwise tree)") {
  // Left to right: ((1e8 + 1) - 1e8) + 1 = 1. Pairwise: (1e8 + 1) + (-1e8 + 1) = 0.
  const std::vector<float> x{1e8f, 1.0f, -1e8f, 1.0f};
  CHECK(reduce<float, float>(OpKind::Reduce, DType::f32, DType::f32, {4}, 0, "sum", x)[0] ==
        (1e8f + 1.0f) + (-1e8f + 1.0f));
  CHECK((1e8f + 1.0f) + (-1e8f + 1.0f) == 0.0f);
  std::vector<float> many(64);
  for (int i = 0; i < 64; ++i) many[i] = 1.0f / static_cast<float>(i + 1);
  std::vector<float> level = many;
  while (level.size() > 1) {
    std::vector<float> next;
    for (size_t i = 0; i < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
    level = next;
  }
  CHECK(reduce<float, float>(OpKind::Reduce, DType::f32, DType::f32, {64}, 0, "sum", many)[0] ==
        level[0]);
}

TEST_CASE("interp scan: cumsum, cumprod, cummax, cummin forward and reverse along every axis") {
  const std::vector<std::pair<std::string, std::function<int32_t(int32_t, int32_t)>>> kinds = {
      {"sum", [](int32_t a, int32_t b) { return a + b; }},
      {"prod", [](int32_t a, int32_t b) { return a * b; }},
      {"max", [](int32_t a, int32_t b) { return std::max(a, b); }},
      {"min", [](int32_t a, int32_t b) { return std::min(a, b); }},
  };
  unsigned seed = 20;
  for (const Shape& shape : kShapes) {
    const auto data =
        random_ints(static_cast<size_t>(tessera::ir::num_elements(shape)), -3, 3, seed++);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis)
      for (const auto& [kind, f] : kinds)
        for (bool reverse : {false, true}) {
          INFO("shape " << tessera::ir::shape_str(shape) << " axis " << axis << " " << kind
                        << (reverse ? " reverse" : ""));
          CHECK(reduce<int32_t, int32_t>(OpKind::Scan, DType::i32, DType::i32, shape, axis, kind,
                                         data, reverse) ==
                reference<int32_t>(data, shape, axis, f, true, reverse));
        }
  }
}

TEST_CASE("interp scan: float cumsum folds in order, cummax propagates NaN") {
  const std::vector<float> x{0.1f, 0.2f, 0.3f, 0.4f};
  const auto fwd = reduce<float, float>(OpKind::Scan, DType::f32, DType::f32, {4}, 0, "sum", x);
  CHECK(fwd ==
        std::vector<float>{0.1f, 0.1f + 0.2f, (0.1f + 0.2f) + 0.3f, ((0.1f + 0.2f) + 0.3f) + 0.4f});
  const auto rev =
      reduce<float, float>(OpKind::Scan, DType::f32, DType::f32, {4}, 0, "sum", x, true);
  CHECK(rev[0] == ((0.4f + 0.3f) + 0.2f) + 0.1f);
  CHECK(rev[3] == 0.4f);
  const auto mx = reduce<float, float>(OpKind::Scan, DType::f32, DType::f32, {4}, 0, "max",
                                       {1.0f, NAN, 3.0f, 0.5f});
  CHECK(mx[0] == 1.0f);
  CHECK(std::isnan(mx[1]));
  CHECK(std::isnan(mx[3]));
  CHECK(reduce<int8_t, int8_t>(OpKind::Scan, DType::i8, DType::i8, {4}, 0, "sum",
                               {100, 100, 100, 0}) == std::vector<int8_t>{100, -56, 44, 44});
}

namespace {
/// bf16 bits of `f`, which must be a bf16 value (the top half of its f32 bits).
uint16_t bf16_bits(float f) {
  REQUIRE((std::bit_cast<uint32_t>(f) & 0xffffu) == 0);
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
}
float bf16_value(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
}  // namespace

// Adding in bf16's 8 bits, the sum of these depends on the order: sequentially (the reverse
// scan) it was 0.455078125 and the SIMT lowering's orders gave 0.470703125 or 0.484375 by the
// subgroup size (tessera fuzz --device simt:32 --seed 7, program 276). In f32, every order
// gives the exact 0.46875.
TEST_CASE("interp scan and reduce: f16/bf16 sums add in f32 and round each result once") {
  const std::vector<float> x{0, 0, 0, -0.091796875f, -3.671875f, 0.232421875f, 2, 2};
  std::vector<uint16_t> bits;
  for (float f : x) bits.push_back(bf16_bits(f));
  const auto rev =
      reduce<uint16_t, uint16_t>(OpKind::Scan, DType::bf16, DType::bf16, {8}, 0, "sum", bits, true);
  std::vector<float> got;
  for (uint16_t b : rev) got.push_back(bf16_value(b));
  // 4.232421875 rounds to 4.21875; 0.560546875 is a tie between two bf16 values: to even, 0.5625.
  CHECK(got ==
        std::vector<float>{0.46875f, 0.46875f, 0.46875f, 0.46875f, 0.5625f, 4.21875f, 4.0f, 2.0f});
  // A pairwise bf16 tree gives (256 + 1) + (1 - 256) = 256 - 255 = 1; f32 gives 2.
  std::vector<uint16_t> y;
  for (float f : {256.0f, 1.0f, 1.0f, -256.0f}) y.push_back(bf16_bits(f));
  CHECK(bf16_value(reduce<uint16_t, uint16_t>(OpKind::Reduce, DType::bf16, DType::bf16, {4}, 0,
                                              "sum", y)[0]) == 2.0f);
  // f16 likewise: 2048 + 1 is 2048 in f16 (11 bits), so the tree gives 2048 - 2047 = 1.
  std::vector<uint16_t> h;
  for (uint16_t v : {0x6800, 0x3c00, 0x3c00, 0xe800}) h.push_back(v);  // 2048, 1, 1, -2048
  CHECK(reduce<uint16_t, uint16_t>(OpKind::Reduce, DType::f16, DType::f16, {4}, 0, "sum", h)[0] ==
        0x4000);  // 2
}
