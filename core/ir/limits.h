/// \file The documented limits of a kernel (docs/design.md, "Limits"): the tracer (core/lang) and
/// the text parser refuse a kernel over them with a user error at its line, instead of letting a
/// later stage spend minutes and gigabytes on it or overflow the stack.
#pragma once

#include <cstdint>

#include "types.h"

namespace tessera::ir {

/// Elements of one tile (Triton's TRITON_MAX_TENSOR_NUMEL). Lowering gives each thread its
/// share of a tile as registers, so code size grows with it: arange(0, 1 << 24) took 80 s and
/// 9 GB in SPIR-V emission. The tiles of the tests, samples, bench and conformance are far
/// smaller (the bench's widest rows are 16384 columns).
inline constexpr int64_t kMaxTileElements = int64_t{1} << 20;

/// Nesting depth of regions (for, if, while, combine regions). Passes, lowering, emitters and
/// interpreters recurse once or twice per level: 10000 nested ifs overflowed the 8 MiB stack in
/// constant folding, 20000 in the parser; 256 levels use a small fraction of it, also with the
/// larger frames of an AddressSanitizer build.
inline constexpr int kMaxRegionDepth = 256;

/// Ops of one kernel, as traced or parsed (a C++ loop that traces without end stops here, not
/// when memory runs out). Every stage is about linear in it.
inline constexpr int64_t kMaxOps = 200000;

/// Elements of one tile that one thread holds, in the lowering to threads (GPU targets and the
/// SIMT interpreter): a kernel over it is Unsupported for its num_warps. A 2^20-element tile over
/// 128 threads (8192 registers a thread) did not finish compiling on lavapipe in 300 s; 2^19 (4096
/// a thread) took 0.4 s. The bench's and conformance's largest tiles hold 128 a thread.
inline constexpr int64_t kMaxElementsPerThread = 4096;

/// The elements of `shape`, or kMaxTileElements + 1 if there are more (no overflow).
inline int64_t capped_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0) return 0;
    if (n > kMaxTileElements / d) return kMaxTileElements + 1;
    n *= d;
  }
  return n;
}

}  // namespace tessera::ir
