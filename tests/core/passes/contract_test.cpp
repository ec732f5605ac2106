/// \file contract_fp: which products fuse into fma (single use, f32/f64, sum or difference) and
/// which stay; the fused kernel computes one rounding, as the interpreter shows.
#include "core/passes/contract.h"

#include <doctest/doctest.h>

#include "core/ir/ops.h"
#include "pass_test_util.h"

namespace tessera::test {
namespace {

using passes::contract_fp;

const Type f32 = scalar(DType::f32), f64 = scalar(DType::f64), f16 = scalar(DType::f16),
           i32 = scalar(DType::i32);

/// The ops of the kernel's body, by kind, in order.
std::vector<OpKind> kinds(const Kernel& k) {
  std::vector<OpKind> out;
  for (const ir::Op* op : k.ops()) out.push_back(op->kind);
  return out;
}

TEST_CASE("contract: a*b + c and c + a*b become fma(a, b, c)") {
  for (bool product_first : {true, false}) {
    Kernel k;
    Value* a = k.param(f32, "a");
    Value* b = k.param(f32, "b");
    Value* c = k.param(f32, "c");
    Value* p = k.param(Type::pointer(DType::f32), "p");
    Value* m = k.op(OpKind::Mul, {a, b}, f32);
    Value* s =
        k.op(OpKind::Add, product_first ? std::vector<Value*>{m, c} : std::vector{c, m}, f32);
    k.b.create(OpKind::Store, {p, s}, {});
    CHECK(contract_fp(k.m));
    k.verify();
    REQUIRE(kinds(k) == std::vector{OpKind::Fma, OpKind::Store});
    CHECK(k.ops()[0]->operands == std::vector<Value*>{a, b, c});
    CHECK_FALSE(contract_fp(k.m));
  }
}

TEST_CASE("contract: differences negate the subtrahend (exact), f64 too") {
  Kernel k;
  Value* a = k.param(f64, "a");
  Value* b = k.param(f64, "b");
  Value* c = k.param(f64, "c");
  Value* p = k.param(Type::pointer(DType::f64), "p");
  Value* d1 = k.op(OpKind::Sub, {k.op(OpKind::Mul, {a, b}, f64), c}, f64);  // a*b - c
  Value* d2 = k.op(OpKind::Sub, {c, k.op(OpKind::Mul, {a, b}, f64)}, f64);  // c - a*b
  k.b.create(OpKind::Store, {p, d1}, {});
  k.b.create(OpKind::Store, {p, d2}, {});
  CHECK(contract_fp(k.m));
  k.verify();
  REQUIRE(kinds(k) == std::vector{OpKind::Neg, OpKind::Fma, OpKind::Neg, OpKind::Fma, OpKind::Store,
                                  OpKind::Store});
  CHECK(k.ops()[0]->operands == std::vector<Value*>{c});
  CHECK(k.ops()[1]->operands == std::vector<Value*>{a, b, k.ops()[0]->result()});
  CHECK(k.ops()[2]->operands == std::vector<Value*>{a});
  CHECK(k.ops()[3]->operands == std::vector<Value*>{k.ops()[2]->result(), b, c});
}

TEST_CASE("contract: a product used twice, integer and f16 arithmetic stay as written") {
  Kernel k;
  Value* p32 = k.param(Type::pointer(DType::f32), "p");
  Value* a = k.param(f32, "a");
  Value* m = k.op(OpKind::Mul, {a, a}, f32);
  k.b.create(OpKind::Store, {p32, k.op(OpKind::Add, {m, a}, f32)}, {});
  k.b.create(OpKind::Store, {p32, m}, {});  // the product's second use
  Value* i = k.param(i32, "i");
  Value* pi = k.param(Type::pointer(DType::i32), "q");
  k.b.create(OpKind::Store, {pi, k.op(OpKind::Add, {k.op(OpKind::Mul, {i, i}, i32), i}, i32)}, {});
  Value* h = k.param(f16, "h");
  Value* ph = k.param(Type::pointer(DType::f16), "r");
  k.b.create(OpKind::Store, {ph, k.op(OpKind::Add, {k.op(OpKind::Mul, {h, h}, f16), h}, f16)}, {});
  CHECK_FALSE(contract_fp(k.m));
}

}  // namespace
}  // namespace tessera::test
