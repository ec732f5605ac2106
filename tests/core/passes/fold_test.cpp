/// \file fold_constants: every folded value matches ops.h, and the undefined cases stay.
#include "core/passes/fold.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/ir/ops.h"
#include "core/support/float16.h"
#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::fold_constants;

/// Folds `kind` over two scalar constants of `t` (integer or floating arguments) and keeps the
/// result value.
struct Binary {
  Kernel k;
  Value* r = nullptr;
  template <class A, class B>
  Binary(OpKind kind, Type t, A a, B b, std::optional<Type> rt = {},
         std::vector<ir::Attribute> attrs = {}) {
    r = k.op(kind, {make(t, a), make(t, b)}, rt.value_or(t), std::move(attrs));
    fold_constants(k.m);
    k.verify();
  }
  template <class A>
  Value* make(Type t, A v) {
    if constexpr (std::is_floating_point_v<A>)
      return k.cfloat(t, v);
    else
      return k.cint(t, static_cast<int64_t>(v));
  }
  bool folded() const { return is_op(r, OpKind::Constant); }
  int64_t i() const { return value_of(r).i; }
  double f() const { return value_of(r).f; }
};

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Type i8 = scalar(DType::i8), i16 = scalar(DType::i16), i32 = scalar(DType::i32),
           u8 = scalar(DType::u8), u32 = scalar(DType::u32), i64 = scalar(DType::i64),
           u64 = scalar(DType::u64), i1 = scalar(DType::i1), f16 = scalar(DType::f16),
           bf16 = scalar(DType::bf16), f32 = scalar(DType::f32), f64 = scalar(DType::f64);

TEST_CASE("fold: i32 chains fold in one sweep, in place") {
  Kernel k;
  Value* a = k.op(OpKind::Add, {k.cint(i32, 2), k.cint(i32, 3)}, i32);
  Value* m = k.op(OpKind::Mul, {a, k.cint(i32, 7)}, i32);
  ir::Op* use = k.sink(m);
  CHECK(fold_constants(k.m));
  k.verify();
  CHECK(use->operand(0) == m);  // the op itself became the constant
  CHECK(value_of(m).i == 35);
  CHECK(value_of(a).i == 5);
  CHECK_FALSE(fold_constants(k.m));
  k.verify();
}

TEST_CASE("fold: i8 arithmetic wraps") {
  CHECK(Binary(OpKind::Add, i8, 100, 100).i() == -56);
  CHECK(Binary(OpKind::Mul, i8, 16, 16).i() == 0);
  CHECK(Binary(OpKind::Sub, i8, -128, 1).i() == 127);
  Kernel k;
  Value* n = k.op(OpKind::Neg, {k.cint(i8, -128)}, i8);
  Value* a = k.op(OpKind::Abs, {k.cint(i8, -128)}, i8);
  Value* x = k.op(OpKind::Not, {k.cint(i8, 0)}, i8);
  fold_constants(k.m);
  k.verify();
  CHECK(value_of(n).i == -128);
  CHECK(value_of(a).i == -128);  // abs(INT_MIN) == INT_MIN
  CHECK(value_of(x).i == -1);
}

TEST_CASE("fold: unsigned values wrap and compare unsigned") {
  CHECK(Binary(OpKind::Add, u8, 200, 100).i() == 44);
  CHECK(Binary(OpKind::Sub, u32, 0, 1).i() == 4294967295);
  CHECK(Binary(OpKind::CmpGt, u32, 0xFFFFFFFF, 1, i1).i() == 1);
  CHECK(Binary(OpKind::CmpGt, i32, -1, 1, i1).i() == 0);
  CHECK(Binary(OpKind::Max, u8, 255, 1).i() == 255);
  CHECK(Binary(OpKind::Min, i8, -1, 1).i() == -1);
  CHECK(Binary(OpKind::Div, u32, 0xFFFFFFFE, 2).i() == 0x7FFFFFFF);
  CHECK(static_cast<uint64_t>(Binary(OpKind::Add, u64, -1, 0).i()) == ~uint64_t{0});
  CHECK(Binary(OpKind::CmpLt, u64, 1, -1, i1).i() == 1);
}

TEST_CASE("fold: u32 and i32 shifts") {
  CHECK(Binary(OpKind::Shr, u32, 0x80000000, 31).i() == 1);  // logical
  CHECK(Binary(OpKind::Shr, i32, -8, 1).i() == -4);          // arithmetic
  CHECK(Binary(OpKind::Shl, u32, 1, 31).i() == 0x80000000);
  CHECK(Binary(OpKind::Shl, i32, 1, 31).i() == std::numeric_limits<int32_t>::min());
  CHECK(Binary(OpKind::Shl, u8, 0xFF, 4).i() == 0xF0);
  SUBCASE("counts >= the width or negative are undefined: left alone") {
    CHECK_FALSE(Binary(OpKind::Shl, u32, 1, 32).folded());
    CHECK_FALSE(Binary(OpKind::Shr, i32, 1, -1).folded());
    CHECK_FALSE(Binary(OpKind::Shr, i8, 1, 8).folded());
  }
}

TEST_CASE("fold: integer division truncates, by zero and MIN / -1 stay") {
  CHECK(Binary(OpKind::Div, i32, -7, 2).i() == -3);
  CHECK(Binary(OpKind::Rem, i32, -7, 2).i() == -1);
  CHECK(Binary(OpKind::Rem, i32, 7, -2).i() == 1);
  CHECK_FALSE(Binary(OpKind::Div, i32, 1, 0).folded());
  CHECK_FALSE(Binary(OpKind::Rem, u32, 1, 0).folded());
  CHECK_FALSE(Binary(OpKind::Div, i32, std::numeric_limits<int32_t>::min(), -1).folded());
  CHECK_FALSE(Binary(OpKind::Div, i64, std::numeric_limits<int64_t>::min(), -1).folded());
  CHECK(Binary(OpKind::Div, i8, -128, 2).i() == -64);
}

TEST_CASE("fold: i1 is an unsigned 1-bit integer") {
  CHECK(Binary(OpKind::Xor, i1, 1, 1).i() == 0);
  CHECK(Binary(OpKind::Add, i1, 1, 1).i() == 0);
  CHECK(Binary(OpKind::CmpEq, i1, 1, 1, i1).i() == 1);
  CHECK(Binary(OpKind::CmpLt, i1, 0, 1, i1).i() == 1);  // 0 < 1, not 0 < -1
  CHECK(Binary(OpKind::Max, i1, 0, 1).i() == 1);
  CHECK(Binary(OpKind::Div, i1, 1, 1).i() == 1);
  Kernel k;
  Value* n = k.op(OpKind::Not, {k.cint(i1, 1)}, i1);
  fold_constants(k.m);
  k.verify();
  CHECK(value_of(n).i == 0);
}

TEST_CASE("fold: f16 and bf16 results are rounded once, to nearest even") {
  // 1 + 2^-11 lies halfway between 1 and the next f16; ties go to the even 1.0.
  CHECK(Binary(OpKind::Add, f16, 1.0, 0x1p-11).f() == 1.0);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9; ties go to 1 + 2^-9.
  CHECK(Binary(OpKind::Add, f16, 1.0, 3 * 0x1p-11).f() == 1.0 + 0x1p-9);
  CHECK(Binary(OpKind::Mul, f16, 300.0, 300.0).f() == kInf);  // overflows f16
  CHECK(Binary(OpKind::Div, f16, 1.0, 3.0).f() == f16_to_double(f16_from_double(1.0 / 3.0)));
  CHECK(Binary(OpKind::Add, bf16, 1.0, 0x1p-8).f() == 1.0);
  CHECK(Binary(OpKind::Add, bf16, 256.0, 1.0).f() == 256.0);
  CHECK(Binary(OpKind::Mul, bf16, 300.0, 300.0).f() == bf16_to_double(bf16_from_double(90000)));
}

TEST_CASE("fold: f32 arithmetic is done in float") {
  CHECK(Binary(OpKind::Div, f32, 1.0, 3.0).f() == static_cast<double>(1.0f / 3.0f));
  CHECK(Binary(OpKind::Add, f32, 0.1, 0.2).f() == static_cast<double>(0.1f + 0.2f));
  CHECK(Binary(OpKind::Add, f32, 3e38, 3e38).f() == kInf);
  CHECK(Binary(OpKind::Rem, f32, 5.5, 2.0).f() == 1.5);
  CHECK(Binary(OpKind::Add, f64, 0.1, 0.2).f() == 0.1 + 0.2);
  CHECK(std::isnan(Binary(OpKind::Div, f32, 0.0, 0.0).f()));
  CHECK(Binary(OpKind::Div, f32, -1.0, 0.0).f() == -kInf);
}

TEST_CASE("fold: fma rounds once") {
  Kernel k;
  Value* r = k.op(OpKind::Fma, {k.cfloat(f32, 0.1), k.cfloat(f32, 10.0), k.cfloat(f32, -1.0)}, f32);
  Value* h =
      k.op(OpKind::Fma,
           {k.cfloat(f16, 1.0 + 0x1p-10), k.cfloat(f16, 1.0 + 0x1p-10), k.cfloat(f16, -1.0)}, f16);
  fold_constants(k.m);
  k.verify();
  CHECK(value_of(r).f == static_cast<double>(std::fma(0.1f, 10.0f, -1.0f)));
  CHECK(value_of(r).f != 0.0);  // (0.1f * 10.0f) - 1.0f rounds twice and gives 0
  // (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20 exactly; one f16 rounding of that.
  CHECK(value_of(h).f == f16_to_double(f16_from_double(0x1p-9 + 0x1p-20)));
}

TEST_CASE("fold: min and max follow the NaN rule and order -0 < +0") {
  CHECK(std::isnan(Binary(OpKind::Min, f32, kNan, 1.0).f()));
  CHECK(std::isnan(Binary(OpKind::Max, f32, 1.0, kNan).f()));
  CHECK(Binary(OpKind::Min, f32, kNan, 1.0, {}, {{"nan", std::string("ignore")}}).f() == 1.0);
  CHECK(Binary(OpKind::Max, f16, 2.0, kNan, {}, {{"nan", std::string("ignore")}}).f() == 2.0);
  CHECK(std::isnan(Binary(OpKind::Max, f32, kNan, kNan, {}, {{"nan", std::string("ignore")}}).f()));
  CHECK(bits_of(Binary(OpKind::Max, f32, -0.0, 0.0).f()) == bits_of(0.0));
  CHECK(bits_of(Binary(OpKind::Max, f32, 0.0, -0.0).f()) == bits_of(0.0));
  CHECK(bits_of(Binary(OpKind::Min, f32, 0.0, -0.0).f()) == bits_of(-0.0));
  CHECK(bits_of(Binary(OpKind::Min, f64, -0.0, 0.0).f()) == bits_of(-0.0));
  CHECK(Binary(OpKind::Min, f32, -3.0, 2.0).f() == -3.0);
}

TEST_CASE("fold: float compares are ordered except cmp_ne") {
  CHECK(Binary(OpKind::CmpNe, f32, kNan, kNan, i1).i() == 1);
  CHECK(Binary(OpKind::CmpEq, f32, kNan, kNan, i1).i() == 0);
  CHECK(Binary(OpKind::CmpLt, f32, kNan, 1.0, i1).i() == 0);
  CHECK(Binary(OpKind::CmpGe, f32, kNan, 1.0, i1).i() == 0);
  CHECK(Binary(OpKind::CmpEq, f32, -0.0, 0.0, i1).i() == 1);
  CHECK(Binary(OpKind::CmpLe, f16, 1.0, 1.0, i1).i() == 1);
}

TEST_CASE("fold: math functions are computed in double and rounded once") {
  Kernel k;
  Value* e = k.op(OpKind::Exp, {k.cfloat(f32, 1.0)}, f32);
  Value* s = k.op(OpKind::Sqrt, {k.cfloat(f16, 2.0)}, f16);
  Value* l = k.op(OpKind::Log, {k.cfloat(f32, -1.0)}, f32);
  Value* r = k.op(OpKind::Rsqrt, {k.cfloat(f64, 4.0)}, f64);
  Value* fl = k.op(OpKind::Floor, {k.cfloat(f32, -1.5)}, f32);
  Value* t = k.op(OpKind::Tanh, {k.cfloat(bf16, 0.5)}, bf16);
  Value* n = k.op(OpKind::Neg, {k.cfloat(f32, 0.0)}, f32);
  Value* a = k.op(OpKind::Abs, {k.cfloat(f32, -0.0)}, f32);
  fold_constants(k.m);
  k.verify();
  CHECK(value_of(e).f == static_cast<double>(static_cast<float>(std::exp(1.0))));
  CHECK(value_of(s).f == f16_to_double(f16_from_double(std::sqrt(2.0))));
  CHECK(std::isnan(value_of(l).f));
  CHECK(value_of(r).f == 0.5);
  CHECK(value_of(fl).f == -2.0);
  CHECK(value_of(t).f == bf16_to_double(bf16_from_double(std::tanh(0.5))));
  CHECK(bits_of(value_of(n).f) == bits_of(-0.0));
  CHECK(bits_of(value_of(a).f) == bits_of(0.0));
}

/// Folds cast (or bitcast) of a constant of `from` to `to`; null if it was left alone.
struct Conversion {
  Kernel k;
  Value* r;
  Conversion(OpKind kind, Type from, double v, Type to) {
    Value* c = from.is_float() ? k.cfloat(from, v) : k.cint(from, static_cast<int64_t>(v));
    r = k.op(kind, {c}, to);
    fold_constants(k.m);
    k.verify();
  }
  bool folded() const { return is_op(r, OpKind::Constant); }
};

TEST_CASE("fold: casts between integers truncate or extend by the source's signedness") {
  CHECK(value_of(Conversion(OpKind::Cast, i32, -1, u32).r).i == 4294967295);
  CHECK(value_of(Conversion(OpKind::Cast, u8, 255, i32).r).i == 255);
  CHECK(value_of(Conversion(OpKind::Cast, i8, -1, i32).r).i == -1);
  CHECK(value_of(Conversion(OpKind::Cast, i8, -1, u64).r).i == -1);  // all 64 bits set
  CHECK(value_of(Conversion(OpKind::Cast, i32, 300, i8).r).i == 44);
  CHECK(value_of(Conversion(OpKind::Cast, i32, 256, i1).r).i == 1);  // x != 0, not bit 0
  CHECK(value_of(Conversion(OpKind::Cast, i1, 1, i32).r).i == 1);    // 0/1, not -1
}

TEST_CASE("fold: float casts round to nearest even, bad float->int casts stay") {
  CHECK(value_of(Conversion(OpKind::Cast, f32, 3.7, i32).r).i == 3);
  CHECK(value_of(Conversion(OpKind::Cast, f32, -3.7, i32).r).i == -3);
  CHECK(value_of(Conversion(OpKind::Cast, f32, 3e9, u32).r).i == 3000000000);
  CHECK(value_of(Conversion(OpKind::Cast, f32, -0.5, u32).r).i == 0);
  CHECK_FALSE(Conversion(OpKind::Cast, f32, 3e9, i32).folded());
  CHECK_FALSE(Conversion(OpKind::Cast, f32, kNan, i32).folded());
  CHECK_FALSE(Conversion(OpKind::Cast, f32, -1.0, u8).folded());
  CHECK_FALSE(Conversion(OpKind::Cast, f64, kInf, i64).folded());
  CHECK(value_of(Conversion(OpKind::Cast, f32, 0.1, f16).r).f ==
        f16_to_double(f16_from_double(static_cast<float>(0.1))));
  CHECK(value_of(Conversion(OpKind::Cast, f32, 70000.0, f16).r).f == kInf);
  CHECK(value_of(Conversion(OpKind::Cast, i32, 16777217, f32).r).f == 16777216.0);
  CHECK(value_of(Conversion(OpKind::Cast, i32, 2049, f16).r).f == 2048.0);
  CHECK(value_of(Conversion(OpKind::Cast, f32, 0.5, i1).r).i == 1);
  CHECK(value_of(Conversion(OpKind::Cast, f32, -0.0, i1).r).i == 0);
  CHECK(value_of(Conversion(OpKind::Cast, f32, kNan, i1).r).i == 1);
}

TEST_CASE("fold: bitcasts reinterpret bits, NaN patterns are left alone") {
  CHECK(value_of(Conversion(OpKind::Bitcast, f32, 1.0, i32).r).i == 0x3f800000);
  CHECK(value_of(Conversion(OpKind::Bitcast, f16, -0.0, i16).r).i == -32768);
  CHECK(value_of(Conversion(OpKind::Bitcast, i32, 0x40490fdb, f32).r).f ==
        static_cast<double>(3.14159274f));
  CHECK(value_of(Conversion(OpKind::Bitcast, i32, -1, u32).r).i == 0xFFFFFFFF);
  CHECK_FALSE(Conversion(OpKind::Bitcast, i32, 0x7fc00000, f32).folded());
  CHECK_FALSE(Conversion(OpKind::Bitcast, f32, kNan, i32).folded());
}

TEST_CASE("fold: tile constants fold to tile constants") {
  Kernel k;
  const Type t = tile(DType::i32, {4, 8});
  Value* s = k.op(OpKind::Splat, {k.cint(i32, 3)}, tile(DType::i32, {8}));
  Value* e = k.op(OpKind::ExpandDims, {s}, tile(DType::i32, {1, 8}), {{"axis", int64_t{0}}});
  Value* bc = k.op(OpKind::Broadcast, {e}, t);
  Value* sum = k.op(OpKind::Add, {bc, k.cint(t, 4)}, t);
  Value* c = k.op(OpKind::CmpLt, {sum, k.cint(t, 10)}, tile(DType::i1, {4, 8}));
  Value* w =
      k.op(OpKind::Where,
           {c, k.cfloat(tile(DType::f32, {4, 8}), 1.5), k.cfloat(tile(DType::f32, {4, 8}), 2.5)},
           tile(DType::f32, {4, 8}));
  fold_constants(k.m);
  k.verify();
  CHECK(value_of(sum).i == 7);
  CHECK(sum->type == t);
  CHECK(value_of(c).i == 1);
  CHECK(value_of(w).f == 1.5);
  CHECK(w->type == tile(DType::f32, {4, 8}));
}

TEST_CASE("fold: non-constant operands, loads and arange are not folded") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* a = k.op(OpKind::Add, {n, k.cint(i32, 1)}, i32);
  Value* r = k.op(OpKind::Arange, {}, tile(DType::i32, {16}),
                  {{"start", int64_t{0}}, {"end", int64_t{16}}});
  Value* p = k.param(Type::pointer(DType::f32), "p");
  Value* l = k.op(OpKind::Load, {p}, f32);
  CHECK_FALSE(fold_constants(k.m));
  k.verify();
  CHECK(is_op(a, OpKind::Add));
  CHECK(is_op(r, OpKind::Arange));
  CHECK(is_op(l, OpKind::Load));
}

TEST_CASE("fold: ops inside regions fold too") {
  Kernel k;
  Value* c = k.cint(i32, 6);
  ir::Op* loop = k.b.create(OpKind::For, {k.cint(i32, 0), k.cint(i32, 4), k.cint(i32, 1)}, {});
  ir::Region* body = k.b.add_region(loop);
  k.m.add_arg(body, i32);
  ir::Builder inner(k.m, body);
  Value* x = inner.create_value(OpKind::Mul, {c, inner.constant_int(i32, 7)}, i32);
  inner.create(OpKind::Print, {x}, {});
  inner.create(OpKind::Yield, {}, {});
  CHECK(fold_constants(k.m));
  k.verify();
  CHECK(value_of(x).i == 42);
}

}  // namespace
}  // namespace tessera::test
