/// \file eliminate_common_subexpressions: what merges, what must not, and region scoping.
#include "core/passes/cse.h"

#include <doctest/doctest.h>

#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::eliminate_common_subexpressions;

const Type i32 = scalar(DType::i32), f32 = scalar(DType::f32), i1 = scalar(DType::i1);

TEST_CASE("cse: equal pure ops merge and their uses move to the first") {
  Kernel k;
  Value* x = k.param(i32, "x");
  Value* y = k.param(i32, "y");
  Value* a = k.op(OpKind::Add, {x, y}, i32);
  Value* b = k.op(OpKind::Add, {x, y}, i32);
  Value* ma = k.op(OpKind::Mul, {a, x}, i32);
  Value* mb = k.op(OpKind::Mul, {b, x}, i32);  // equal once b is a
  ir::Op* use_b = k.sink(b);
  ir::Op* use_mb = k.sink(mb);
  CHECK(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(use_b->operand(0) == a);
  CHECK(use_mb->operand(0) == ma);
  CHECK(k.count(OpKind::Add) == 1);
  CHECK(k.count(OpKind::Mul) == 1);
  CHECK(b->def->parent == nullptr);  // erased
  CHECK_FALSE(eliminate_common_subexpressions(k.m));
  k.verify();
}

TEST_CASE("cse: constants merge by type and by bits") {
  Kernel k;
  Value* one = k.cfloat(f32, 1.0);
  Value* one_again = k.cfloat(f32, 1.0);
  Value* zero = k.cfloat(f32, 0.0);
  Value* neg_zero = k.cfloat(f32, -0.0);
  Value* nan = k.cfloat(f32, std::nan(""));
  Value* nan_again = k.cfloat(f32, std::nan(""));
  Value* one_i32 = k.cint(i32, 1);
  Value* one_tile = k.cint(tile(DType::i32, {16}), 1);
  ir::Op* uses =
      k.b.create(OpKind::Print, {one_again, neg_zero, nan_again, one_i32, one_tile, zero}, {});
  CHECK(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(uses->operand(0) == one);
  CHECK(uses->operand(1) == neg_zero);  // -0.0 is not 0.0
  CHECK(uses->operand(2) == nan);       // same bits
  CHECK(uses->operand(3) == one_i32);   // another type
  CHECK(uses->operand(4) == one_tile);
  CHECK(uses->operand(5) == zero);
  CHECK(k.count(OpKind::Constant) == 6);
}

TEST_CASE("cse: attributes and operand order distinguish ops") {
  Kernel k;
  Value* p0 = k.op(OpKind::ProgramId, {}, i32, {{"axis", int64_t{0}}});
  Value* p1 = k.op(OpKind::ProgramId, {}, i32, {{"axis", int64_t{1}}});
  Value* p0b = k.op(OpKind::ProgramId, {}, i32, {{"axis", int64_t{0}}});
  Value* s1 = k.op(OpKind::Sub, {p0, p1}, i32);
  Value* s2 = k.op(OpKind::Sub, {p1, p0}, i32);
  Value* mx = k.op(OpKind::Max, {p0, p1}, i32, {{"nan", std::string("ignore")}});
  Value* my = k.op(OpKind::Max, {p0, p1}, i32);
  ir::Op* uses = k.b.create(OpKind::Print, {p0b, s1, s2, mx, my}, {});
  CHECK(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(uses->operand(0) == p0);
  CHECK(uses->operand(1) == s1);
  CHECK(uses->operand(2) == s2);
  CHECK(uses->operand(3) == mx);
  CHECK(uses->operand(4) == my);
}

TEST_CASE("cse: loads, atomics and stores never merge") {
  Kernel k;
  Value* p = k.param(Type::pointer(DType::f32), "p");
  Value* a = k.op(OpKind::Load, {p}, f32);
  k.b.create(OpKind::Store, {p, a}, {});
  Value* b = k.op(OpKind::Load, {p}, f32);
  k.b.create(OpKind::Store, {p, a}, {});
  ir::Op* use = k.sink(b);
  CHECK_FALSE(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(use->operand(0) == b);
  CHECK(k.count(OpKind::Load) == 2);
  CHECK(k.count(OpKind::Store) == 2);
}

/// for %i in [0, n): body ops come from `fill`; the loop has no iteration arguments.
ir::Region* add_loop(Kernel& k, Value* n) {
  ir::Op* loop = k.b.create(OpKind::For, {k.cint(i32, 0), n, k.cint(i32, 1)}, {});
  ir::Region* body = k.b.add_region(loop);
  k.m.add_arg(body, i32);
  return body;
}

TEST_CASE("cse: an outer value is reused inside a region, never the other way round") {
  Kernel k;
  Value* x = k.param(i32, "x");
  Value* outer = k.op(OpKind::Mul, {x, x}, i32);
  ir::Region* body = add_loop(k, x);
  ir::Builder in(k.m, body);
  Value* inner = in.create_value(OpKind::Mul, {x, x}, i32);
  Value* only_inner = in.create_value(OpKind::Add, {x, x}, i32);
  ir::Op* inner_use = in.create(OpKind::Print, {inner, only_inner}, {});
  in.create(OpKind::Yield, {}, {});
  Value* after = k.op(OpKind::Add, {x, x}, i32);
  ir::Op* after_use = k.sink(after);
  CHECK(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(inner_use->operand(0) == outer);
  CHECK(inner_use->operand(1) == only_inner);
  CHECK(after_use->operand(0) == after);  // the loop's add is not visible after the loop
  CHECK(body->ops.size() == 3);
}

TEST_CASE("cse: sibling regions of an if do not share") {
  Kernel k;
  Value* x = k.param(i32, "x");
  Value* c = k.param(i1, "c");
  ir::Op* branch = k.b.create(OpKind::If, {c}, {i32});
  Value* r[2];
  for (int i = 0; i < 2; ++i) {
    ir::Builder in(k.m, k.b.add_region(branch));
    r[i] = in.create_value(OpKind::Add, {x, x}, i32);
    in.create(OpKind::Yield, {r[i]}, {});
  }
  k.sink(branch->result());
  CHECK_FALSE(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(branch->region(0)->ops.front()->result() == r[0]);
  CHECK(branch->region(1)->ops.front()->result() == r[1]);
}

TEST_CASE("cse: a merged value is substituted in nested regions and yields") {
  Kernel k;
  Value* x = k.param(i32, "x");
  Value* a = k.op(OpKind::Neg, {x}, i32);
  Value* b = k.op(OpKind::Neg, {x}, i32);
  ir::Op* loop = k.b.create(OpKind::For, {k.cint(i32, 0), x, k.cint(i32, 1), b}, {i32});
  ir::Region* body = k.b.add_region(loop);
  k.m.add_arg(body, i32);
  Value* acc = k.m.add_arg(body, i32);
  ir::Builder in(k.m, body);
  Value* next = in.create_value(OpKind::Add, {acc, b}, i32);
  in.create(OpKind::Print, {next}, {});
  ir::Op* yield = in.create(OpKind::Yield, {b}, {});
  k.sink(loop->result());
  CHECK(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(loop->operand(3) == a);
  CHECK(next->def->operand(1) == a);
  CHECK(yield->operand(0) == a);
}

TEST_CASE("cse: ops with regions are not merged") {
  Kernel k;
  Value* t = k.param(tile(DType::f32, {16}), "t");
  Value* r[2];
  for (int i = 0; i < 2; ++i) {
    ir::Op* red = k.b.create(OpKind::ReduceGeneric, {t}, {f32}, {{"axis", int64_t{0}}});
    ir::Region* combine = k.b.add_region(red);
    Value* l = k.m.add_arg(combine, f32);
    Value* rr = k.m.add_arg(combine, f32);
    ir::Builder in(k.m, combine);
    in.create(OpKind::Yield, {in.create_value(OpKind::Add, {l, rr}, f32)}, {});
    r[i] = red->result();
  }
  ir::Op* use = k.b.create(OpKind::Print, {r[0], r[1]}, {});
  CHECK_FALSE(eliminate_common_subexpressions(k.m));
  k.verify();
  CHECK(use->operand(1) == r[1]);
}

}  // namespace
}  // namespace tessera::test
