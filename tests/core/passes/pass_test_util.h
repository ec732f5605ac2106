/// \file A small kernel builder for the pass tests: parameters, constants, ops and a `print`
/// sink whose operands show what a value became after a rewrite.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ir.h"
#include "core/ir/verifier.h"
#include "core/passes/rewrite.h"

namespace tessera::test {

using ir::DType;
using ir::OpKind;
using ir::Type;
using ir::Value;

inline Type scalar(DType t) {
  return Type::scalar(t);
}
inline Type tile(DType t, ir::Shape s) {
  return Type::tile(t, std::move(s));
}

/// One function `k` and a builder appending to its body.
struct Kernel {
  ir::Module m;
  ir::Function* fn = m.add_function("k");
  ir::Builder b{m, fn->body};

  /// A kernel parameter; a tile "parameter" is loaded through a pointer parameter (kernel
  /// parameters are scalars or pointers).
  Value* param(Type t, std::string name = "") {
    if (name.empty()) name = "p" + std::to_string(fn->params.size());
    if (t.is_tile()) {
      Value* base = param(Type::pointer(t.dtype), name);
      Value* ptrs = op(OpKind::Splat, {base}, Type::ptr_tile(t.dtype, t.shape));
      return op(OpKind::Load, {ptrs}, t);
    }
    Value* v = m.add_arg(fn->body, std::move(t));
    fn->params.push_back({name, v, {}});
    return v;
  }
  Value* cint(Type t, int64_t v) { return b.constant_int(std::move(t), v); }
  Value* cfloat(Type t, double v) { return b.constant_float(std::move(t), v); }
  Value* op(OpKind k, std::vector<Value*> operands, Type t, std::vector<ir::Attribute> attrs = {}) {
    return b.create_value(k, std::move(operands), std::move(t), std::move(attrs));
  }
  /// A side-effecting use of `v` (kept by every pass); its operand shows what `v` became.
  ir::Op* sink(Value* v) { return b.create(OpKind::Print, {v}, {}); }
  /// A store of `v` through a fresh pointer parameter.
  ir::Op* store(Value* v) {
    Value* p = param(Type::pointer(v->type.dtype));
    if (v->type.is_tile()) p = op(OpKind::Splat, {p}, Type::ptr_tile(v->type.dtype, v->type.shape));
    return b.create(OpKind::Store, {p, v}, {});
  }

  /// Checks that the module passes the verifier (run after the pass under test).
  void verify() const {
    std::string all;
    for (const std::string& d : ir::verify_all(m)) all += d + "\n";
    INFO(all);
    CHECK(all.empty());
  }

  /// Top-level ops of the body, in order.
  const std::vector<ir::Op*>& ops() const { return fn->body->ops; }
  int count(OpKind k) const {
    int n = 0;
    ir::walk(fn->body, [&](ir::Op* op) { n += op->kind == k; });
    return n;
  }
};

/// The constant `v` holds; fails the test if it is not a constant.
inline passes::Scalar value_of(const Value* v) {
  auto c = passes::constant_value(v);
  INFO("expected a constant, got " << (v->def ? std::string(v->def->name()) : "an argument"));
  REQUIRE(c.has_value());
  return *c;
}

inline bool is_op(const Value* v, OpKind k) {
  return v->def && v->def->kind == k;
}

inline uint64_t bits_of(double d) {
  return std::bit_cast<uint64_t>(d);
}

}  // namespace tessera::test
