// \file The SIMT interpreter's scalar ops against the tile interpreter, bit for bit: every binary
// op, compare, unary and math op, fma, where and a spread of casts, over every dtype they accept,
// on random bits and special values (NaN, infinities, -0, subnormals, MIN, -1, 0). The tile side
// runs one op on a tile of 64 elements; the SIMT side runs it on 64 threads, one element each.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/op_table.h"
#include "core/support/float16.h"
#include "tests/core/interp_simt/helpers.h"

using namespace simt_test;
using interp_test::Attribute;
using interp_test::DType;
using interp_test::OpKind;
using tessera::ir::dtype_bytes;
using tessera::ir::dtype_name;

namespace {

constexpr int kN = 64;

template <class C>
struct Tag {
  using type = C;
};

/// Calls f(Tag<C>{}) with the C++ type tests store elements of `d` in.
template <class F>
void with_ctype(DType d, F&& f) {
  switch (d) {
    case DType::i1:
      return f(Tag<uint8_t>{});
    case DType::i8:
      return f(Tag<int8_t>{});
    case DType::i16:
      return f(Tag<int16_t>{});
    case DType::i32:
      return f(Tag<int32_t>{});
    case DType::i64:
      return f(Tag<int64_t>{});
    case DType::u8:
      return f(Tag<uint8_t>{});
    case DType::u16:
      return f(Tag<uint16_t>{});
    case DType::u32:
      return f(Tag<uint32_t>{});
    case DType::u64:
      return f(Tag<uint64_t>{});
    case DType::f16:
      return f(Tag<uint16_t>{});
    case DType::bf16:
      return f(Tag<uint16_t>{});
    case DType::f32:
      return f(Tag<float>{});
    case DType::f64:
      return f(Tag<double>{});
    case DType::f8e4m3:
    case DType::f8e5m2:
      return f(Tag<uint8_t>{});
  }
}

uint64_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 11;
}

/// kN elements of `d`: special values first, then random bits (floats: random magnitudes too).
template <class C>
std::vector<C> inputs(DType d, uint64_t seed) {
  std::vector<C> out(kN);
  uint64_t state = seed;
  const bool is_float = tessera::ir::is_float(d);
  for (int i = 0; i < kN; ++i) {
    uint64_t bits = next_random(state) ^ (next_random(state) << 32);
    if (d == DType::i1) bits &= 1;
    std::memcpy(&out[static_cast<size_t>(i)], &bits, sizeof(C));
    if (!is_float || i % 3 != 0) continue;
    // A third of the floats are ordinary values, so arithmetic is not all NaN.
    const double x = static_cast<double>(static_cast<int64_t>(bits % 2001) - 1000) / 64.0;
    if (d == DType::f32) out[static_cast<size_t>(i)] = static_cast<C>(static_cast<float>(x));
    if (d == DType::f64) out[static_cast<size_t>(i)] = static_cast<C>(x);
    if (d == DType::f16) out[static_cast<size_t>(i)] = static_cast<C>(tessera::f16_from_double(x));
    if (d == DType::bf16)
      out[static_cast<size_t>(i)] = static_cast<C>(tessera::bf16_from_double(x));
  }
  // Special values at fixed places.
  auto set = [&](int i, double v) {
    if (d == DType::f32) out[static_cast<size_t>(i)] = static_cast<C>(static_cast<float>(v));
    if (d == DType::f64) out[static_cast<size_t>(i)] = static_cast<C>(v);
    if (d == DType::f16) out[static_cast<size_t>(i)] = static_cast<C>(tessera::f16_from_double(v));
    if (d == DType::bf16)
      out[static_cast<size_t>(i)] = static_cast<C>(tessera::bf16_from_double(v));
  };
  if (is_float) {
    const double inf = std::numeric_limits<double>::infinity();
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                               inf,
                               -inf,
                               -0.0,
                               0.0,
                               1e-40,
                               -1e-310,
                               65504.0,
                               1e39,
                               0.5,
                               -1.5,
                               2.0};
    for (int i = 0; i < 12; ++i) set(1 + 5 * i % kN, specials[i]);
  } else if (d != DType::i1) {
    out[0] = std::numeric_limits<C>::min();
    out[1] = static_cast<C>(-1);
    out[2] = 0;
    out[3] = std::numeric_limits<C>::max();
  }
  return out;
}

std::string zero(DType d) {
  return tessera::ir::is_float(d) ? "0.0" : "0";
}

/// The SIMT kernel: each thread loads its element of each input, applies `op`, stores the result.
std::string simt_text(const std::string& op, const std::vector<DType>& ins, DType out,
                      const std::string& attrs) {
  std::string header = "func @scalar(";
  std::string body, operands;
  for (size_t i = 0; i < ins.size(); ++i) {
    const std::string n = std::to_string(i), t(dtype_name(ins[i]));
    header += "%in" + n + ": ptr<" + t + ">, ";
    body += "  %p" + n + " = ptr_add %in" + n + ", %tid : ptr<" + t + ">\n";
    body += "  %z" + n + " = constant {value = " + zero(ins[i]) + "} : " + t + "\n";
    body += "  %x" + n + " = global_load %p" + n + ", %true, %z" + n +
            " {align = " + std::to_string(dtype_bytes(ins[i])) + ", width = 1} : " + t + "\n";
    operands += (i ? ", %x" : "%x") + n;
  }
  const std::string r(dtype_name(out));
  header +=
      "%out: ptr<" + r + ">, %s: i32) attributes {stage = \"simt\", threads = 64, subgroup = 16} {";
  body += "  %r = " + op + " " + operands + (attrs.empty() ? "" : " {" + attrs + "}") + " : " + r +
          "\n  %po = ptr_add %out, %tid : ptr<" + r +
          ">\n  global_store %po, %true, %r {align = " + std::to_string(dtype_bytes(out)) +
          ", width = 1}\n";
  return kernel(header, body);
}

template <class R>
void expect_same(const std::vector<R>& simt, const std::vector<R>& tile) {
  REQUIRE(simt.size() == tile.size());
  for (size_t i = 0; i < simt.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(&simt[i], &tile[i], sizeof(R)) == 0);
  }
}

/// One binary op (or compare: result i1) on dtype `d`, in both interpreters.
void check_binary(OpKind kind, DType d, const std::string& attr_text = "",
                  std::vector<Attribute> attrs = {}) {
  const bool compare = tessera::ir::has_trait(kind, tessera::ir::kCompare);
  const DType r = compare ? DType::i1 : d;
  CAPTURE(tessera::ir::op_name(kind));
  CAPTURE(dtype_name(d));
  with_ctype(d, [&](auto tag) {
    using C = typename decltype(tag)::type;
    std::vector<C> a = inputs<C>(d, 1), b = inputs<C>(d, 2);
    b[5] = 0;  // division by zero
    b[6] = a[6];
    with_ctype(r, [&](auto rtag) {
      using R = typename decltype(rtag)::type;
      const std::vector<R> tile = interp_test::binary<R, C>(kind, d, r, a, b, attrs);
      SimtKernel k(simt_text(std::string(tessera::ir::op_name(kind)), {d, d}, r, attr_text));
      std::vector<R> out(kN);
      HostMemory mem;
      k.run(mem, Grid{}, mem.add(a), mem.add(b), mem.add(out), int32_t{16});
      expect_same(out, tile);
    });
  });
}

/// One unary op or cast from `d` to `r`, in both interpreters.
void check_unary(OpKind kind, DType d, DType r) {
  CAPTURE(tessera::ir::op_name(kind));
  CAPTURE(dtype_name(d));
  CAPTURE(dtype_name(r));
  with_ctype(d, [&](auto tag) {
    using C = typename decltype(tag)::type;
    std::vector<C> a = inputs<C>(d, 3);
    with_ctype(r, [&](auto rtag) {
      using R = typename decltype(rtag)::type;
      const std::vector<R> tile = interp_test::unary<R, C>(kind, d, r, a);
      SimtKernel k(simt_text(std::string(tessera::ir::op_name(kind)), {d}, r, ""));
      std::vector<R> out(kN);
      HostMemory mem;
      k.run(mem, Grid{}, mem.add(a), mem.add(out), int32_t{16});
      expect_same(out, tile);
    });
  });
}

constexpr DType kInts[] = {DType::i1, DType::i8,  DType::i16, DType::i32, DType::i64,
                           DType::u8, DType::u16, DType::u32, DType::u64};
constexpr DType kFloats[] = {DType::f16, DType::bf16, DType::f32, DType::f64};

}  // namespace

TEST_CASE("simt scalar: arithmetic, min/max and compares match the tile interpreter bit for bit") {
  const OpKind kinds[] = {OpKind::Add,   OpKind::Sub,   OpKind::Mul,   OpKind::Div,   OpKind::Rem,
                          OpKind::Min,   OpKind::Max,   OpKind::CmpEq, OpKind::CmpNe, OpKind::CmpLt,
                          OpKind::CmpLe, OpKind::CmpGt, OpKind::CmpGe};
  for (OpKind kind : kinds) {
    for (DType d : kInts) check_binary(kind, d);
    for (DType d : kFloats) check_binary(kind, d);
  }
  for (DType d : kFloats) {
    check_binary(OpKind::Max, d, "nan = \"ignore\"", {{"nan", std::string("ignore")}});
    check_binary(OpKind::Min, d, "nan = \"ignore\"", {{"nan", std::string("ignore")}});
  }
}

TEST_CASE("simt scalar: bitwise ops and shifts match the tile interpreter") {
  for (OpKind kind : {OpKind::And, OpKind::Or, OpKind::Xor, OpKind::Shl, OpKind::Shr})
    for (DType d : kInts) check_binary(kind, d);
}

TEST_CASE("simt scalar: unary and math ops match the tile interpreter") {
  for (DType d : kInts) {
    check_unary(OpKind::Neg, d, d);
    check_unary(OpKind::Abs, d, d);
    check_unary(OpKind::Not, d, d);
  }
  for (OpKind kind : {OpKind::Neg, OpKind::Abs})
    for (DType d : kFloats) check_unary(kind, d, d);
  for (OpKind kind : tessera::ir::kinds_where(tessera::ir::is_unary_math))
    for (DType d : kFloats) check_unary(kind, d, d);
  for (OpKind kind : tessera::ir::kinds_where(tessera::ir::is_binary_math))
    for (DType d : kFloats) check_binary(kind, d);
}

TEST_CASE("simt scalar: casts between every pair of dtypes match the tile interpreter") {
  std::vector<DType> all(std::begin(kInts), std::end(kInts));
  all.insert(all.end(), std::begin(kFloats), std::end(kFloats));
  for (DType from : all)
    for (DType to : all) check_unary(OpKind::Cast, from, to);
}

TEST_CASE(
    "simt scalar: fp8 casts to and from every float width and i32 match the tile interpreter") {
  const DType others[] = {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i1};
  for (DType f8 : {DType::f8e4m3, DType::f8e5m2}) {
    for (DType d : others) {
      check_unary(OpKind::Cast, f8, d);
      check_unary(OpKind::Cast, d, f8);
    }
    check_unary(OpKind::Cast, f8, f8 == DType::f8e4m3 ? DType::f8e5m2 : DType::f8e4m3);
  }
}

TEST_CASE("simt scalar: fma and where match the tile interpreter") {
  for (DType d : kFloats) {
    CAPTURE(dtype_name(d));
    with_ctype(d, [&](auto tag) {
      using C = typename decltype(tag)::type;
      std::vector<C> a = inputs<C>(d, 4), b = inputs<C>(d, 5), c = inputs<C>(d, 6);
      std::vector<uint8_t> cond = inputs<uint8_t>(DType::i1, 7);
      const std::vector<C> fma = interp_test::eval<C, C, C, C>(
          d, {kN},
          [](interp_test::Kernel& k, std::vector<interp_test::Value*> t) {
            return k.op(OpKind::Fma, {t[0], t[1], t[2]}, t[0]->type);
          },
          std::pair{d, a}, std::pair{d, b}, std::pair{d, c});
      const std::vector<C> where = interp_test::eval<C, uint8_t, C, C>(
          d, {kN},
          [](interp_test::Kernel& k, std::vector<interp_test::Value*> t) {
            return k.op(OpKind::Where, {t[0], t[1], t[2]}, t[1]->type);
          },
          std::pair{DType::i1, cond}, std::pair{d, a}, std::pair{d, b});
      HostMemory mem;
      std::vector<C> out(kN);
      SimtKernel kf(simt_text("fma", {d, d, d}, d, ""));
      kf.run(mem, Grid{}, mem.add(a), mem.add(b), mem.add(c), mem.add(out), int32_t{16});
      expect_same(out, fma);
      SimtKernel kw(simt_text("where", {DType::i1, d, d}, d, ""));
      kw.run(mem, Grid{}, mem.add(cond), mem.add(a), mem.add(b), mem.add(out), int32_t{16});
      expect_same(out, where);
    });
  }
}
