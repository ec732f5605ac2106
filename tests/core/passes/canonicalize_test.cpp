/// \file canonicalize: each rewrite, and the look-alikes that must stay (floats, -0.0, NaN).
#include "core/passes/canonicalize.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>

#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::canonicalize;

const Type i32 = scalar(DType::i32), u32 = scalar(DType::u32), f32 = scalar(DType::f32),
           i1 = scalar(DType::i1), f16 = scalar(DType::f16);

/// Builds `kind(lhs, rhs)` over a parameter x of type `t` (null operands mean x), canonicalizes,
/// and returns what the sink sees in its place.
struct Rewrite {
  Kernel k;
  Value* x;
  Value* r;
  Value* seen = nullptr;
  template <class MakeOperands>
  Rewrite(OpKind kind, Type t, MakeOperands make, std::optional<Type> rt = {}) {
    x = k.param(t, "x");  // in the body: clang-19 takes `k` in the init list as uninitialized
    auto [a, b] = make(k, x);
    r = k.op(kind, {a, b}, rt.value_or(t));
    ir::Op* use = k.sink(r);
    canonicalize(k.m);
    k.verify();
    seen = use->operand(0);
  }
  bool unchanged() const { return seen == r && r->def->parent != nullptr; }
};

/// Operand makers: x with a constant on the left or the right.
auto right_int(int64_t v) {
  return [v](Kernel& k, Value* x) { return std::pair{x, k.cint(x->type, v)}; };
}
auto left_int(int64_t v) {
  return [v](Kernel& k, Value* x) { return std::pair{k.cint(x->type, v), x}; };
}
auto right_float(double v) {
  return [v](Kernel& k, Value* x) { return std::pair{x, k.cfloat(x->type, v)}; };
}
auto left_float(double v) {
  return [v](Kernel& k, Value* x) { return std::pair{k.cfloat(x->type, v), x}; };
}
auto twice() {
  return [](Kernel&, Value* x) { return std::pair{x, x}; };
}

TEST_CASE("canonicalize: integer additive identities") {
  CHECK(Rewrite(OpKind::Add, i32, right_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Add, i32, left_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Sub, i32, right_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Sub, u32, left_int(0)).unchanged());  // 0 - x is a negation
  CHECK(Rewrite(OpKind::Add, i32, right_int(1)).unchanged());
  Rewrite self(OpKind::Sub, i32, twice());
  CHECK(value_of(self.seen).i == 0);
}

TEST_CASE("canonicalize: x + 0.0 is not an identity for floats, x + (-0.0) is") {
  CHECK(Rewrite(OpKind::Add, f32, right_float(0.0)).unchanged());  // -0.0 + 0.0 == +0.0
  CHECK(Rewrite(OpKind::Add, f32, left_float(0.0)).unchanged());
  CHECK(Rewrite(OpKind::Add, f32, right_float(-0.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Add, f16, left_float(-0.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Sub, f32, right_float(0.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Sub, f32, right_float(-0.0)).unchanged());  // -0.0 - -0.0 == +0.0
  CHECK(Rewrite(OpKind::Sub, f32, twice()).unchanged());            // inf - inf is NaN
}

TEST_CASE("canonicalize: multiplicative identities, x * 0 only for integers") {
  CHECK(Rewrite(OpKind::Mul, i32, right_int(1)).seen->is_arg());
  CHECK(Rewrite(OpKind::Mul, i32, left_int(1)).seen->is_arg());
  CHECK(Rewrite(OpKind::Mul, f32, right_float(1.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Mul, f16, left_float(1.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Div, i32, right_int(1)).seen->is_arg());
  CHECK(Rewrite(OpKind::Div, f32, right_float(1.0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Div, i32, left_int(1)).unchanged());
  CHECK(value_of(Rewrite(OpKind::Mul, i32, right_int(0)).seen).i == 0);
  CHECK(value_of(Rewrite(OpKind::Mul, u32, left_int(0)).seen).i == 0);
  CHECK(Rewrite(OpKind::Mul, f32, right_float(0.0)).unchanged());  // inf * 0 is NaN
}

TEST_CASE("canonicalize: bitwise and shift identities") {
  CHECK(Rewrite(OpKind::And, i32, right_int(-1)).seen->is_arg());
  CHECK(Rewrite(OpKind::And, u32, right_int(0xFFFFFFFF)).seen->is_arg());
  CHECK(Rewrite(OpKind::And, u32, right_int(0x7FFFFFFF)).unchanged());
  CHECK(Rewrite(OpKind::And, i1, left_int(1)).seen->is_arg());
  CHECK(value_of(Rewrite(OpKind::And, i32, right_int(0)).seen).i == 0);
  CHECK(Rewrite(OpKind::Or, i32, right_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Xor, i32, left_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Shl, i32, right_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Shr, u32, right_int(0)).seen->is_arg());
  CHECK(Rewrite(OpKind::Shl, i32, left_int(0)).unchanged());  // 0 << x stays (x may be >= 32)
  CHECK(value_of(Rewrite(OpKind::Xor, i32, twice()).seen).i == 0);
}

TEST_CASE("canonicalize: integer compares of x with itself") {
  CHECK(value_of(Rewrite(OpKind::CmpEq, i32, twice(), i1).seen).i == 1);
  CHECK(value_of(Rewrite(OpKind::CmpLe, u32, twice(), i1).seen).i == 1);
  CHECK(value_of(Rewrite(OpKind::CmpGe, i32, twice(), i1).seen).i == 1);
  CHECK(value_of(Rewrite(OpKind::CmpNe, i32, twice(), i1).seen).i == 0);
  CHECK(value_of(Rewrite(OpKind::CmpLt, i32, twice(), i1).seen).i == 0);
  CHECK(value_of(Rewrite(OpKind::CmpGt, i32, twice(), i1).seen).i == 0);
  CHECK(Rewrite(OpKind::CmpEq, f32, twice(), i1).unchanged());  // NaN != NaN
}

TEST_CASE("canonicalize: constants of commutative ops move to the right") {
  Rewrite add(OpKind::Add, i32, left_int(5));
  CHECK(add.unchanged());
  CHECK(add.r->def->operand(0) == add.x);
  CHECK(value_of(add.r->def->operand(1)).i == 5);
  Rewrite sub(OpKind::Sub, i32, left_int(5));
  CHECK(sub.r->def->operand(0) != sub.x);  // not commutative
  Rewrite ne(OpKind::CmpNe, f32, left_float(2.0), i1);
  CHECK(ne.r->def->operand(0) == ne.x);
}

TEST_CASE("canonicalize: neg(neg x) and not(not x)") {
  for (OpKind kind : {OpKind::Neg, OpKind::Not}) {
    Kernel k;
    Value* x = k.param(i32, "x");
    Value* once = k.op(kind, {x}, i32);
    ir::Op* use = k.sink(k.op(kind, {once}, i32));
    ir::Op* use_once = k.sink(once);
    CHECK(canonicalize(k.m));
    k.verify();
    CHECK(use->operand(0) == x);
    CHECK(use_once->operand(0) == once);
  }
  Kernel k;
  Value* x = k.param(f32, "x");
  ir::Op* use = k.sink(k.op(OpKind::Neg, {k.op(OpKind::Neg, {x}, f32)}, f32));
  canonicalize(k.m);
  k.verify();
  CHECK(use->operand(0) == x);
}

TEST_CASE("canonicalize: splat of a constant and reshapes of a splat") {
  Kernel k;
  Value* s = k.param(f32, "s");
  const Type row = tile(DType::f32, {1, 64});
  Value* c = k.op(OpKind::Splat, {k.cfloat(f32, 2.5)}, tile(DType::f32, {64}));
  Value* e = k.op(OpKind::ExpandDims, {k.op(OpKind::Splat, {s}, tile(DType::f32, {64}))}, row,
                  {{"axis", int64_t{0}}});
  Value* bc = k.op(OpKind::Broadcast, {e}, tile(DType::f32, {32, 64}));
  Value* rs = k.op(OpKind::Reshape, {c}, tile(DType::f32, {8, 8}));
  ir::Op* use = k.b.create(OpKind::Print, {c, bc, rs}, {});
  CHECK(canonicalize(k.m));
  k.verify();
  CHECK(value_of(use->operand(0)).f == 2.5);
  CHECK(use->operand(0)->type == tile(DType::f32, {64}));
  REQUIRE(is_op(use->operand(1), OpKind::Splat));
  CHECK(use->operand(1)->def->operand(0) == s);
  CHECK(use->operand(1)->type == tile(DType::f32, {32, 64}));
  CHECK(value_of(use->operand(2)).f == 2.5);
  CHECK(use->operand(2)->type == tile(DType::f32, {8, 8}));
}

TEST_CASE("canonicalize: shape ops and casts to the same type vanish") {
  Kernel k;
  const Type t = tile(DType::f32, {16, 32});
  Value* x = k.param(t, "x");
  Value* bc = k.op(OpKind::Broadcast, {x}, t);
  Value* id = k.op(OpKind::Permute, {x}, t, {{"order", std::vector<int64_t>{0, 1}}});
  Value* tr = k.op(OpKind::Permute, {x}, tile(DType::f32, {32, 16}),
                   {{"order", std::vector<int64_t>{1, 0}}});
  Value* cs = k.op(OpKind::Cast, {x}, t);
  Value* bits = k.op(OpKind::Bitcast, {k.op(OpKind::Bitcast, {x}, tile(DType::i32, {16, 32}))},
                     tile(DType::u32, {16, 32}));
  Value* back = k.op(OpKind::Bitcast, {k.op(OpKind::Bitcast, {x}, tile(DType::i32, {16, 32}))}, t);
  Value* widen = k.op(OpKind::Cast, {x}, tile(DType::f64, {16, 32}));
  ir::Op* use = k.b.create(OpKind::Print, {bc, id, tr, cs, bits, back, widen}, {});
  CHECK(canonicalize(k.m));
  k.verify();
  CHECK(use->operand(0) == x);
  CHECK(use->operand(1) == x);
  CHECK(use->operand(2) == tr);
  CHECK(use->operand(3) == x);
  CHECK(use->operand(4) == bits);
  CHECK(bits->def->operand(0) == x);  // bitcast of bitcast -> one bitcast
  CHECK(use->operand(5) == x);
  CHECK(use->operand(6) == widen);
}

TEST_CASE("canonicalize: where with a constant condition or equal branches") {
  Kernel k;
  const Type t = tile(DType::f32, {8});
  Value* c = k.param(tile(DType::i1, {8}), "c");
  Value* a = k.param(t, "a");
  Value* b = k.param(t, "b");
  Value* yes = k.op(OpKind::Where, {k.cint(tile(DType::i1, {8}), 1), a, b}, t);
  Value* no = k.op(OpKind::Where, {k.cint(tile(DType::i1, {8}), 0), a, b}, t);
  Value* same = k.op(OpKind::Where, {c, b, b}, t);
  Value* open = k.op(OpKind::Where, {c, a, b}, t);
  ir::Op* use = k.b.create(OpKind::Print, {yes, no, same, open}, {});
  CHECK(canonicalize(k.m));
  k.verify();
  CHECK(use->operand(0) == a);
  CHECK(use->operand(1) == b);
  CHECK(use->operand(2) == b);
  CHECK(use->operand(3) == open);
}

TEST_CASE("canonicalize: hints on constants are dropped") {
  Kernel k;
  Value* n = k.param(i32, "n");
  Value* c = k.cint(i32, 64);
  Value* h = k.op(OpKind::MultipleOf, {c}, i32, {{"values", std::vector<int64_t>{16}}});
  Value* m = k.op(OpKind::MaxContiguous, {c}, i32, {{"values", std::vector<int64_t>{16}}});
  Value* kept = k.op(OpKind::MultipleOf, {n}, i32, {{"values", std::vector<int64_t>{16}}});
  ir::Op* use = k.b.create(OpKind::Print, {h, m, kept}, {});
  CHECK(canonicalize(k.m));
  k.verify();
  CHECK(use->operand(0) == c);
  CHECK(use->operand(1) == c);
  CHECK(use->operand(2) == kept);
}

/// acc + dot(a, b, zero) in either order; `extra_use` adds a second use of the dot.
struct DotSum {
  Kernel k;
  Value *a, *b, *acc, *dot, *sum;
  ir::Op* use;
  DotSum(bool dot_on_left, bool extra_use, double zero = 0.0) {
    const Type ct = tile(DType::f32, {16, 16});
    a = k.param(tile(DType::f16, {16, 32}), "a");
    b = k.param(tile(DType::f16, {32, 16}), "b");
    acc = k.param(ct, "acc");
    dot = k.op(OpKind::Dot, {a, b, k.cfloat(ct, zero)}, ct, {{"precision", std::string("ieee")}});
    sum = dot_on_left ? k.op(OpKind::Add, {dot, acc}, ct) : k.op(OpKind::Add, {acc, dot}, ct);
    use = k.sink(sum);
    if (extra_use) k.sink(dot);
    canonicalize(k.m);
    k.verify();
  }
};

TEST_CASE("canonicalize: add(dot(a, b, 0), c) -> dot(a, b, c) with a single use") {
  for (bool left : {true, false}) {
    DotSum d(left, false);
    ir::Value* r = d.use->operand(0);
    REQUIRE(is_op(r, OpKind::Dot));
    CHECK(r->def->operands == std::vector<Value*>{d.a, d.b, d.acc});
    CHECK(r->def->str_attr("precision") == "ieee");
    CHECK(d.k.count(OpKind::Dot) == 1);
    CHECK(d.k.count(OpKind::Add) == 0);
  }
  DotSum shared(true, true);
  CHECK(is_op(shared.use->operand(0), OpKind::Add));
  CHECK(shared.k.count(OpKind::Dot) == 1);
  DotSum nonzero(true, false, 1.0);
  CHECK(is_op(nonzero.use->operand(0), OpKind::Add));
}

TEST_CASE("canonicalize: a dot outside a loop is not pulled into the loop's add") {
  Kernel k;
  const Type ct = tile(DType::f32, {16, 16});
  Value* a = k.param(ct, "a");
  Value* n = k.param(i32, "n");
  Value* dot = k.op(OpKind::Dot, {a, a, k.cfloat(ct, 0.0)}, ct);
  ir::Op* loop = k.b.create(OpKind::For, {k.cint(i32, 0), n, k.cint(i32, 1), a}, {ct});
  ir::Region* body = k.b.add_region(loop);
  k.m.add_arg(body, i32);
  Value* acc = k.m.add_arg(body, ct);
  ir::Builder in(k.m, body);
  Value* next = in.create_value(OpKind::Add, {acc, dot}, ct);
  in.create(OpKind::Yield, {next}, {});
  k.sink(loop->result());
  canonicalize(k.m);
  k.verify();
  CHECK(is_op(next, OpKind::Add));
  CHECK(dot->def->parent == k.fn->body);
}

TEST_CASE("canonicalize: the dot moves to the add, after the accumulator's definition") {
  Kernel k;
  const Type ct = tile(DType::f32, {16, 16});
  Value* a = k.param(tile(DType::f32, {16, 16}), "a");
  Value* dot = k.op(OpKind::Dot, {a, a, k.cfloat(ct, 0.0)}, ct);
  Value* late = k.op(OpKind::Exp, {a}, ct);  // defined after the dot
  Value* sum = k.op(OpKind::Add, {late, dot}, ct);
  k.sink(sum);
  CHECK(canonicalize(k.m));
  k.verify();
  REQUIRE(is_op(sum, OpKind::Dot));
  const auto& ops = k.ops();
  auto pos = [&](Value* v) { return std::find(ops.begin(), ops.end(), v->def) - ops.begin(); };
  CHECK(pos(late) < pos(sum));
  CHECK(dot->def->parent == nullptr);
}

}  // namespace
}  // namespace tessera::test
