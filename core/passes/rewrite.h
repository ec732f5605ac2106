/// \file What the tile-IR passes share: constant values, use counts, and in-place edits
/// (replace uses, erase ops, drop results and region arguments) on the arena-owned IR.
///
/// The IR keeps no use lists, so uses are found by walking the function that holds an op
/// (`function_body`). Erasing an op only unlinks it from its region: the Module owns it until
/// the end, so pointers held by a pass stay valid.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/ir.h"

namespace tessera::passes {

/// One element value of a dtype, normalized: what every element of a `constant` op holds.
struct Scalar {
  ir::DType dtype = ir::DType::i32;
  /// Integer dtypes: the value sign-extended (signed dtypes) or zero-extended (unsigned ones)
  /// from the dtype's width; i1 is 0 or 1. u64 keeps its bit pattern.
  int64_t i = 0;
  /// Float dtypes: the value, exactly representable in the dtype.
  double f = 0.0;

  bool is_float() const { return ir::is_float(dtype); }
  /// The integer value as unsigned bits (for unsigned compares and shifts).
  uint64_t bits() const { return static_cast<uint64_t>(i); }

  /// Wraps `bits` to the dtype's width (two's complement).
  static Scalar from_bits(ir::DType dtype, uint64_t bits);
  /// Rounds `x` to the float dtype (nearest even, exactly once).
  static Scalar from_double(ir::DType dtype, double x);
  /// 0 or 1 in i1.
  static Scalar boolean(bool b) { return from_bits(ir::DType::i1, b ? 1 : 0); }
};

/// Wraps `bits` to an integer dtype: truncate to the width, then sign- or zero-extend.
int64_t wrap_int(ir::DType dtype, uint64_t bits);
/// Rounds `x` to a float dtype (f16/bf16 through core/support/float16.h, f32 through float).
double round_float(ir::DType dtype, double x);
/// Two scalars of one dtype hold the same bits (so -0.0 differs from +0.0, and NaN == NaN).
bool same_bits(const Scalar& a, const Scalar& b);

/// The element value of `v` if it is the result of a `constant` op (scalar or tile) of a
/// non-pointer type whose attribute fits its dtype; nullopt otherwise.
std::optional<Scalar> constant_value(const ir::Value* v);
inline bool is_constant(const ir::Value* v) {
  return constant_value(v).has_value();
}
/// `v` is a constant integer or float equal to 0 (either sign of zero for floats).
bool is_zero(const ir::Value* v);
/// `v` is a constant integer 1 or float 1.0.
bool is_one(const ir::Value* v);
/// `v` is a constant integer with every bit set.
bool is_all_ones(const ir::Value* v);
/// `v` is a constant float with exactly these bits (`-0.0` matches -0.0 only).
bool is_float_bits(const ir::Value* v, double x);

/// Turns `op` (a pure op without regions) into `constant {value = s}` in place, keeping its
/// one result (so its uses, type, position and location stay).
void make_constant_in_place(ir::Op* op, const Scalar& s);

/// The function body that (transitively) holds `op`.
ir::Region* function_body(const ir::Op* op);
/// Replaces every use of `from` in the function holding `op` by `to`.
void replace_uses(const ir::Op* op, ir::Value* from, ir::Value* to);
/// Replaces the uses of `op`'s only result by `to`, then erases `op`.
void replace_op(ir::Op* op, ir::Value* to);
/// Unlinks `op` from its region (with everything in its regions); `op->parent` becomes null.
void erase_op(ir::Op* op);

/// Every op of `region` and its nested regions, pre-order: a stable list to iterate while
/// rewriting (skip ops whose `parent` became null).
std::vector<ir::Op*> collect_ops(ir::Region* region);
/// Number of operand slots in the function holding `op` that name `v`.
int count_uses_of(const ir::Op* op, const ir::Value* v);

/// Keeps the operands of `op` whose index has keep[i] true.
void filter_operands(ir::Op* op, const std::vector<bool>& keep);
/// Keeps the results of `op` with keep[i] true, renumbering the kept ones.
void filter_results(ir::Op* op, const std::vector<bool>& keep);
/// Keeps the arguments of `region` with keep[i] true, renumbering the kept ones.
void filter_args(ir::Region* region, const std::vector<bool>& keep);

}  // namespace tessera::passes
