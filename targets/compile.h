/// \file The compile driver shared by the GPU backends: an optimized tile-IR kernel, lowered once
/// to the SIMT IR (core/lower) and emitted for its target's instruction set.
#pragma once

#include <memory>

#include "core/ir/ir.h"
#include "core/target/artifact.h"
#include "core/target/target.h"

namespace tessera::targets {

struct CompileOptions {
  int num_warps = 4;   ///< threads per workgroup = 32 x num_warps on every target
  int num_stages = 3;  ///< pipelining depth of loops with loads
};

/// Lowers `tile_ir` (verified, optimized) for `target` to SIMT IR. Throws tessera::Error:
/// Unsupported when the kernel needs more shared memory than the target has (naming the kernel,
/// the bytes, the limit and the knobs), or a feature the target lacks.
std::unique_ptr<ir::Module> lower_to_simt(const ir::Module& tile_ir, const target::Target& target,
                                          const CompileOptions& options);

/// Lowers and emits: SPIR-V for targets whose isa starts with "spirv", PTX for "ptx".
target::Artifact compile(const ir::Module& tile_ir, const target::Target& target,
                         const CompileOptions& options);

}  // namespace tessera::targets
