/// \file Constant folding of pure ops over uniform constants. Elementwise ops are evaluated by the
/// interpreter's code (core/interp/evaluate.h), not a copy of it, and left alone where ops.h
/// leaves them undefined.
#include "core/passes/fold.h"

#include <cmath>
#include <optional>
#include <vector>

#include "core/interp/evaluate.h"
#include "core/ir/ops.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using MaybeScalar = std::optional<Scalar>;

/// `s` as the interpreter holds it: a scalar of its dtype.
interp::RuntimeValue runtime_value(const Scalar& s) {
  return s.is_float() ? interp::float_scalar(s.dtype, s.f) : interp::int_scalar(s.dtype, s.i);
}

/// The constant a scalar of the interpreter holds (floats exactly; a NaN as some NaN).
Scalar constant_of(const interp::RuntimeValue& v) {
  if (ir::is_float(v.dtype)) return Scalar::from_double(v.dtype, interp::float_element(v));
  return Scalar::from_bits(v.dtype, static_cast<uint64_t>(interp::int_element(v)));
}

/// The operands' dtypes are the ones the interpreter's elementwise code expects (the verifier's
/// rules; folding may meet IR that has not been verified yet).
bool well_typed(const Op* op, const std::vector<Scalar>& args) {
  switch (op->kind) {
    case OpKind::Cast:
      return true;
    case OpKind::Bitcast:
      return ir::dtype_bits(args[0].dtype) == ir::dtype_bits(op->result()->type.dtype);
    case OpKind::Where:
      return args[0].dtype == DType::i1 && args[1].dtype == args[2].dtype;
    default:
      for (const Scalar& a : args)
        if (a.dtype != args[0].dtype) return false;
      return true;
  }
}

/// A NaN's payload is not part of a constant (its attribute is a double), so a bitcast from or to
/// a NaN pattern is left to run.
bool is_nan(const Scalar& s) {
  return s.is_float() && std::isnan(s.f);
}

/// An elementwise op evaluated by the interpreter's own code (core/interp/evaluate.h).
MaybeScalar evaluate_elementwise(const Op* op, const std::vector<Scalar>& args) {
  if (!interp::evaluates(op->kind) || !well_typed(op, args)) return std::nullopt;
  const bool bitcast = op->kind == OpKind::Bitcast;
  if (bitcast && is_nan(args[0])) return std::nullopt;
  std::vector<interp::RuntimeValue> values;
  for (const Scalar& a : args) values.push_back(runtime_value(a));
  auto r = interp::evaluate_elementwise(*op, values);
  if (!r) return std::nullopt;  // undefined by ops.h: left to run
  Scalar c = constant_of(*r);
  if (bitcast && is_nan(c)) return std::nullopt;
  return c;
}

/// The constant `op` evaluates to, if it is a foldable op over constant operands.
MaybeScalar evaluate(const Op* op) {
  if (!op->has(ir::kPure) || !op->regions.empty() || op->results.size() != 1) return std::nullopt;
  if (op->operands.empty() || op->result()->type.is_ptr) return std::nullopt;
  std::vector<Scalar> args;
  for (const ir::Value* v : op->operands) {
    auto c = constant_value(v);
    if (!c) return std::nullopt;
    args.push_back(*c);
  }
  switch (op->kind) {
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Permute:
      return args[0];  // every element stays the same value
    case OpKind::Cat:
      return same_bits(args[0], args[1]) ? std::optional(args[0]) : std::nullopt;
    default:
      return evaluate_elementwise(op, args);
  }
}

bool fold_region(ir::Region* body) {
  bool changed = false;
  // Pre-order visits each op after the ops defining its operands, so chains fold in one sweep.
  ir::walk(body, [&](Op* op) {
    auto value = evaluate(op);
    if (!value || value->dtype != op->result()->type.dtype) return;
    make_constant_in_place(op, *value);
    changed = true;
  });
  return changed;
}

}  // namespace

bool fold_constants(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= fold_region(fn->body);
  return changed;
}

}  // namespace tessera::passes
