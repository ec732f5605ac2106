/// \file Axis info: what is provable about the integer and pointer values of a tile-IR kernel,
/// dimension by dimension (Triton's AxisInfo). It decides vector widths: a load is 128-bit wide
/// only where contiguity, alignment and mask constancy prove it safe.
///
/// For each dimension d of a value (one entry for scalars):
///   contiguity[d]   runs of this many elements along d hold consecutive integers (pointers:
///                   consecutive elements), each run starting at a multiple of this many
///   divisibility[d] the first element of each run is a multiple of this (pointers: in bytes)
///   constancy[d]    runs of this many elements along d are equal
/// All three are powers of two. Seeds: constants, arange, kernel parameters specialized as
/// 16-byte aligned / divisible by 16 / equal to 1, and the multiple_of / max_contiguous hints.
///
/// `%` and `/` keep runs only where their left side is non-negative (C's truncating division
/// breaks a run that starts at a negative multiple of the divisor: -8 % 8 = 0, -7 % 8 = -7): where
/// provably_nonneg() proves it, or where the op carries the attribute `nonneg` (a fact that the
/// remainder-versioning pass, core/passes/rem_version.h, establishes by a run-time test).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/ir/ir.h"

namespace tessera::lower {

struct AxisInfo {
  std::vector<int64_t> contiguity;
  std::vector<int64_t> divisibility;
  std::vector<int64_t> constancy;

  /// Nothing known about a value of `rank` dimensions (rank 0: one entry).
  static AxisInfo unknown(int rank);
  bool operator==(const AxisInfo&) const = default;
};

class AxisInfoMap {
 public:
  /// Analyzes every value of `fn` (loops iterate to a fixed point).
  explicit AxisInfoMap(const ir::Function& fn);
  /// The info of an integer, pointer or i1 value (unknown for others).
  const AxisInfo& get(const ir::Value* v) const;

 private:
  std::unordered_map<const ir::Value*, AxisInfo> info_;
  AxisInfo unknown_scalar_ = AxisInfo::unknown(0);
};

/// Is every element of the integer value `v` provably >= 0 from the IR alone? program_id,
/// num_programs, non-negative constants and aranges, sums, products, min, max, quotients and
/// remainders of such values (wrap-around of a non-negative i32 sum or product counts as not
/// happening, as in Triton), `and` with one, loop counters that start and step so, and `%` or `/`
/// marked `nonneg` whose left side is. Kernel parameters are of unknown sign.
bool provably_nonneg(const ir::Value* v);

/// The attribute of a `rem` or `div` op stating that its left operand is >= 0 in every element.
inline constexpr const char* kNonnegAttr = "nonneg";

/// The largest power of two dividing `v` (v == 0 gives a large power of two).
int64_t pow2_divisor(int64_t v);

}  // namespace tessera::lower
