/// \file The shared rewrite helpers: constant normalization and in-place edits.
#include "core/passes/rewrite.h"

#include <doctest/doctest.h>

#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::constant_value;
using passes::Scalar;
using passes::wrap_int;

TEST_CASE("rewrite: integers wrap to the dtype and extend by its signedness") {
  CHECK(wrap_int(DType::i8, 200) == -56);
  CHECK(wrap_int(DType::u8, static_cast<uint64_t>(-1)) == 255);
  CHECK(wrap_int(DType::i1, 3) == 1);
  CHECK(wrap_int(DType::i1, 2) == 0);
  CHECK(wrap_int(DType::u32, static_cast<uint64_t>(-1)) == 4294967295);
  CHECK(wrap_int(DType::i64, ~uint64_t{0}) == -1);
}

TEST_CASE("rewrite: constant values are read in their dtype") {
  Kernel k;
  Value* b = k.b.create_value(OpKind::Constant, {}, scalar(DType::i1), {{"value", int64_t{-1}}});
  Value* h = k.cfloat(scalar(DType::f16), 0.1);
  Value* f = k.b.create_value(OpKind::Constant, {}, scalar(DType::f32), {{"value", int64_t{3}}});
  Value* huge =
      k.b.create_value(OpKind::Constant, {}, scalar(DType::f32), {{"value", int64_t{1} << 60}});
  Value* bad = k.b.create_value(OpKind::Constant, {}, scalar(DType::i32), {{"value", 1.5}});
  Value* t = k.cint(tile(DType::u8, {4}), 255);
  CHECK(value_of(b).i == 1);
  CHECK(value_of(h).f == 0.0999755859375);
  CHECK(value_of(f).f == 3.0);
  CHECK_FALSE(constant_value(huge).has_value());
  CHECK_FALSE(constant_value(bad).has_value());
  CHECK(value_of(t).i == 255);
  CHECK(passes::is_all_ones(t));
  CHECK_FALSE(constant_value(k.param(scalar(DType::i32))).has_value());
}

TEST_CASE("rewrite: -0.0 and +0.0 differ in bits, NaNs with one pattern agree") {
  const Scalar pz = Scalar::from_double(DType::f32, 0.0);
  const Scalar nz = Scalar::from_double(DType::f32, -0.0);
  CHECK_FALSE(passes::same_bits(pz, nz));
  CHECK(passes::same_bits(Scalar::from_double(DType::f32, std::nan("")),
                          Scalar::from_double(DType::f32, std::nan(""))));
  CHECK_FALSE(
      passes::same_bits(Scalar::from_bits(DType::i32, 1), Scalar::from_bits(DType::u32, 1)));
}

TEST_CASE("rewrite: replace_op moves every use, nested ones included, and unlinks the op") {
  Kernel k;
  Value* x = k.param(scalar(DType::i32), "x");
  Value* y = k.op(OpKind::Neg, {x}, scalar(DType::i32));
  ir::Op* loop = k.b.create(OpKind::If, {k.cint(scalar(DType::i1), 1)}, {});
  ir::Builder then(k.m, k.b.add_region(loop));
  ir::Op* inner = then.create(OpKind::Print, {y, y}, {});
  then.create(OpKind::Yield, {}, {});
  ir::Builder other(k.m, k.b.add_region(loop));
  other.create(OpKind::Yield, {}, {});
  ir::Op* outer = k.sink(y);
  ir::Op* def = y->def;
  CHECK(passes::count_uses_of(def, y) == 3);
  passes::replace_op(def, x);
  CHECK(inner->operands == std::vector<Value*>{x, x});
  CHECK(outer->operand(0) == x);
  CHECK(def->parent == nullptr);
  CHECK(k.ops().size() == 3);
  CHECK(passes::function_body(inner) == k.fn->body);
  k.verify();
}

TEST_CASE("rewrite: filtering results and arguments renumbers what stays") {
  Kernel k;
  ir::Op* op = k.b.create(OpKind::If, {k.cint(scalar(DType::i1), 1)},
                          {scalar(DType::i32), scalar(DType::f32), scalar(DType::i8)});
  Value* last = op->result(2);
  passes::filter_results(op, {true, false, true});
  REQUIRE(op->results.size() == 2);
  CHECK(op->result(1) == last);
  CHECK(last->index == 1);
  ir::Region* r = k.m.new_region(op);
  k.m.add_arg(r, scalar(DType::i32));
  Value* a = k.m.add_arg(r, scalar(DType::i32));
  passes::filter_args(r, {false, true});
  CHECK(r->args == std::vector<Value*>{a});
  CHECK(a->index == 0);
}

}  // namespace
}  // namespace tessera::test
