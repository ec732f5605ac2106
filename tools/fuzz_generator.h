/// \file The fuzzer's program generator: random, well-typed tile-IR kernels built directly with
/// ir::Builder (no tracer), free of undefined behaviour by construction.
///
/// A program loads a few inputs as tiles of one random shape (masked against a runtime count,
/// with `other`), applies a random chain of ops (arithmetic, bitwise, compares and where, casts
/// and bitcasts, math, reductions and scans and broadcasts back, layout moves, dot, and `for`,
/// `if` and `while` carrying values), and stores some results, each to its own output buffer.
/// Integer division uses divisors in [1, 8], shift counts are masked below the width, floats are
/// sanitized (NaN -> 0, clamped) before converting to integers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/ir/ir.h"

namespace tessera::tools::fuzz {

struct GenOptions {
  int ops = 24;                   ///< random ops at the top level (regions add their own)
  int shape_shift = 0;            ///< halve every tile dimension this many times (shrinking)
  std::vector<ir::DType> dtypes;  ///< dtypes the device computes in
  /// Bitwise comparison (the host). Otherwise floats are compared with a tolerance, so nothing
  /// may turn a last-bit difference into a large one: no float compares, remainders, floor,
  /// ceil, float -> int conversions or bitcasts, float argmax/argmin or products.
  bool exact = true;
  /// > 0: sin and cos arguments with |x| above it (inf and NaN aside) become 0 first. Vulkan
  /// specifies sin and cos only in [-pi, pi]; Tessera's SPIR-V reduces arguments to it and is
  /// accurate while |x| < 2^16 * 2pi, beyond which it promises only a value in [-1, 1]
  /// (targets/spirv/spirv.h). Set for SPIR-V targets: exactly that freedom, nothing wider.
  double trig_range = 0;
};

/// One kernel parameter: a buffer (input or output) or the i32 element count `n`.
struct ParamSpec {
  enum class Kind { Input, Output, Count } kind = Kind::Input;
  ir::DType dtype = ir::DType::i32;
  size_t count = 0;  ///< buffer elements
};

struct Program {
  std::unique_ptr<ir::Module> module;
  std::vector<ParamSpec> params;  ///< one per function parameter, in order
  int32_t n = 0;                  ///< the value of the Count parameter
  uint32_t grid = 1;
};

/// The program of `seed` (deterministic; `shape_shift` changes only the shapes).
Program generate(uint64_t seed, const GenOptions& options);

}  // namespace tessera::tools::fuzz
