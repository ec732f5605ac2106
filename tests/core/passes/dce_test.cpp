/// \file eliminate_dead_code: dead ops, dead loop-carried values and branches, and what stays.
#include "core/passes/dce.h"

#include <doctest/doctest.h>

#include "core/ir/ops.h"
#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::eliminate_dead_code;

const Type i32 = scalar(DType::i32), f32 = scalar(DType::f32), i1 = scalar(DType::i1);

TEST_CASE("dce: unused pure chains and loads go, stores and their operands stay") {
  Kernel k;
  Value* x = k.param(i32, "x");
  Value* p = k.param(Type::pointer(DType::i32), "p");
  Value* a = k.op(OpKind::Add, {x, x}, i32);
  k.op(OpKind::Mul, {a, a}, i32);  // dead, and makes `a` dead
  k.op(OpKind::Load, {p}, i32);    // an unused load may go
  Value* kept = k.op(OpKind::Sub, {x, k.cint(i32, 1)}, i32);
  k.b.create(OpKind::Store, {p, kept}, {});
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  REQUIRE(k.ops().size() == 3);
  CHECK(k.ops()[0]->kind == OpKind::Constant);
  CHECK(k.ops()[1]->kind == OpKind::Sub);
  CHECK(k.ops()[2]->kind == OpKind::Store);
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
}

TEST_CASE("dce: side effects stay even with unused results") {
  Kernel k;
  Value* p = k.param(Type::pointer(DType::i32), "p");
  Value* v = k.cint(i32, 1);
  k.op(OpKind::AtomicRmw, {p, v}, i32, {{"op", std::string("add")}});
  k.b.create(OpKind::AtomicCas, {p, v, v}, {i32});
  k.b.create(OpKind::Assume, {k.cint(i1, 1)}, {});
  k.b.create(OpKind::Assert, {k.cint(i1, 1)}, {});
  k.b.create(OpKind::Print, {}, {});
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
  CHECK(k.ops().size() == 8);
}

/// A `for` over [0, n) with the given inits; returns the op (body args: iv, then one per init).
ir::Op* make_loop(Kernel& k, Value* n, std::vector<Value*> inits) {
  std::vector<Value*> operands = {k.cint(i32, 0), n, k.cint(i32, 1)};
  std::vector<Type> types;
  for (Value* v : inits) {
    operands.push_back(v);
    types.push_back(v->type);
  }
  ir::Op* loop = k.b.create(OpKind::For, operands, types);
  ir::Region* body = k.b.add_region(loop);
  k.m.add_arg(body, i32);
  for (Value* v : inits) k.m.add_arg(body, v->type);
  return loop;
}

TEST_CASE("dce: an accumulator whose result is unused is removed from the loop") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* p = k.param(Type::pointer(DType::f32), "p");
  Value* acc0 = k.cfloat(f32, 0.0);
  Value* cnt0 = k.cint(i32, 0);
  ir::Op* loop = make_loop(k, n, {acc0, cnt0});
  ir::ForOp view(loop);
  ir::Builder in(k.m, view.body());
  Value* x = in.create_value(OpKind::Load, {p}, f32);
  Value* acc = in.create_value(OpKind::Add, {view.iter_args()[0], x}, f32);
  in.create(OpKind::Store, {p, x}, {});  // keeps the loop
  Value* cnt = in.create_value(OpKind::Add, {view.iter_args()[1], in.constant_int(i32, 1)}, i32);
  in.create(OpKind::Yield, {acc, cnt}, {});
  Value* count = loop->result(1);
  ir::Op* use = k.sink(count);
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  REQUIRE(loop->results.size() == 1);
  CHECK(loop->result(0) == count);
  CHECK(count->index == 0);
  REQUIRE(loop->operands.size() == 4);
  CHECK(loop->operand(3) == cnt0);
  REQUIRE(view.body()->args.size() == 2);
  CHECK(view.iter_args()[0]->index == 1);
  CHECK(view.body()->terminator()->operands == std::vector<Value*>{cnt});
  CHECK(acc->def->parent == nullptr);
  CHECK(acc0->def->parent == nullptr);   // the init constant is dead too
  CHECK(x->def->parent == view.body());  // the load feeds the store
  CHECK(use->operand(0) == count);
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
}

TEST_CASE("dce: a loop-carried value that feeds a live one stays") {
  Kernel k;
  Value* n = k.param(i32, "n");
  ir::Op* loop = make_loop(k, n, {k.cint(i32, 0), k.cint(i32, 0)});
  ir::ForOp view(loop);
  ir::Builder in(k.m, view.body());
  Value* a = in.create_value(OpKind::Add, {view.iter_args()[0], view.iv()}, i32);
  Value* b = in.create_value(OpKind::Add, {view.iter_args()[1], view.iter_args()[0]}, i32);
  in.create(OpKind::Yield, {a, b}, {});
  k.sink(loop->result(1));  // result 0 is unused, but iteration 0 feeds iteration 1
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
  CHECK(loop->results.size() == 2);
}

TEST_CASE("dce: an unused result whose iteration argument feeds a store stays") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* p = k.param(Type::pointer(DType::i32), "p");
  ir::Op* loop = make_loop(k, n, {k.cint(i32, 0)});
  ir::ForOp view(loop);
  ir::Builder in(k.m, view.body());
  in.create(OpKind::Store, {p, view.iter_args()[0]}, {});
  in.create(OpKind::Yield, {in.create_value(OpKind::Add, {view.iter_args()[0], view.iv()}, i32)},
            {});
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
  CHECK(loop->results.size() == 1);
  CHECK(view.body()->ops.size() == 3);
}

TEST_CASE("dce: a loop without side effects and with unused results goes whole") {
  Kernel k;
  Value* n = k.param(i32, "n");
  ir::Op* loop = make_loop(k, n, {k.cint(i32, 0)});
  ir::ForOp view(loop);
  ir::Builder in(k.m, view.body());
  in.create(OpKind::Yield, {in.create_value(OpKind::Add, {view.iter_args()[0], view.iv()}, i32)},
            {});
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  CHECK(k.ops().empty());
}

TEST_CASE("dce: a loop that stores stays, with its bounds") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* p = k.param(Type::pointer(DType::i32), "p");
  Value* ub = k.op(OpKind::Mul, {n, n}, i32);
  ir::Op* loop = make_loop(k, ub, {});
  ir::Builder in(k.m, loop->region(0));
  in.create(OpKind::Store, {p, ub}, {});
  in.create(OpKind::Yield, {}, {});
  CHECK_FALSE(eliminate_dead_code(k.m));
  k.verify();
  CHECK(ub->def->parent == k.fn->body);
}

/// if %c -> (i32, i32) yielding (a, b) and (b, a); `store_in_then` adds a store to `then`.
ir::Op* make_if(Kernel& k, Value* c, Value* a, Value* b, Value* store_to) {
  ir::Op* branch = k.b.create(OpKind::If, {c}, {i32, i32});
  for (int i = 0; i < 2; ++i) {
    ir::Builder in(k.m, k.b.add_region(branch));
    Value* x = in.create_value(OpKind::Add, {i == 0 ? a : b, a}, i32);
    if (store_to && i == 0) in.create(OpKind::Store, {store_to, x}, {});
    in.create(OpKind::Yield, {x, i == 0 ? b : a}, {});
  }
  return branch;
}

TEST_CASE("dce: an if without side effects and with unused results goes whole") {
  Kernel k;
  Value* c = k.param(i1, "c");
  Value* a = k.param(i32, "a");
  make_if(k, c, a, a, nullptr);
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  CHECK(k.ops().empty());
}

TEST_CASE("dce: unused results of a live if are pruned from both yields") {
  Kernel k;
  Value* c = k.param(i1, "c");
  Value* a = k.param(i32, "a");
  Value* b = k.param(i32, "b");
  ir::Op* branch = make_if(k, c, a, b, nullptr);
  Value* second = branch->result(1);
  k.sink(second);
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  REQUIRE(branch->results.size() == 1);
  CHECK(second->index == 0);
  for (ir::Region* r : branch->regions) {
    REQUIRE(r->ops.size() == 1);  // the adds went with result 0
    CHECK(r->terminator()->operands.size() == 1);
  }
  CHECK(branch->region(0)->terminator()->operand(0) == b);
  CHECK(branch->region(1)->terminator()->operand(0) == a);
}

TEST_CASE("dce: an if with a store stays, its results go") {
  Kernel k;
  Value* c = k.param(i1, "c");
  Value* a = k.param(i32, "a");
  Value* p = k.param(Type::pointer(DType::i32), "p");
  ir::Op* branch = make_if(k, c, a, a, p);
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  CHECK(branch->parent == k.fn->body);
  CHECK(branch->results.empty());
  CHECK(branch->region(0)->ops.size() == 3);  // add, store, yield
  CHECK(branch->region(1)->ops.size() == 1);  // yield
}

TEST_CASE("dce: a while loop stays, its dead carried and forwarded values go") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* junk0 = k.cfloat(f32, 1.0);
  ir::Op* loop = k.b.create(OpKind::While, {k.cint(i32, 0), junk0}, {i32, f32});
  ir::Region* before = k.b.add_region(loop);
  Value* i = k.m.add_arg(before, i32);
  Value* junk = k.m.add_arg(before, f32);
  ir::Builder bb(k.m, before);
  Value* go = bb.create_value(OpKind::CmpLt, {i, n}, i1);
  Value* doubled = bb.create_value(OpKind::Mul, {junk, junk}, f32);
  bb.create(OpKind::Condition, {go, i, doubled}, {});
  ir::Region* after = k.b.add_region(loop);
  Value* ai = k.m.add_arg(after, i32);
  Value* aj = k.m.add_arg(after, f32);
  ir::Builder ab(k.m, after);
  Value* next = ab.create_value(OpKind::Add, {ai, ab.constant_int(i32, 1)}, i32);
  ab.create(OpKind::Yield, {next, aj}, {});
  CHECK(eliminate_dead_code(k.m));
  k.verify();
  CHECK(loop->parent == k.fn->body);
  CHECK(loop->operands.size() == 1);
  CHECK(before->args.size() == 1);
  CHECK(after->args.size() == 1);
  CHECK(loop->results.size() == 1);
  CHECK(before->terminator()->operands == std::vector<Value*>{go, i});
  CHECK(after->terminator()->operands == std::vector<Value*>{next});
  CHECK(doubled->def->parent == nullptr);
  CHECK(junk0->def->parent == nullptr);
}

}  // namespace
}  // namespace tessera::test
