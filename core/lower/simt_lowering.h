/// \file Lowering a tile-IR kernel to the SIMT IR: every tile gets a distributed layout, and each
/// tile op becomes per-thread scalar code (with shuffles, shared memory and barriers where data
/// crosses threads). Written once, here; every target emits from its result.
#pragma once

#include <memory>

#include "core/ir/ir.h"
#include "core/target/target.h"

namespace tessera::lower {

struct SimtOptions {
  int num_warps = 4;   ///< 32 x num_warps threads per workgroup, on every target
  int num_stages = 3;  ///< pipelining depth of loops with loads (not used by the FMA path)
};

/// Lowers the kernel of `tile` (verified) for `target`. The result is a module with one SIMT
/// function (core/ir/simt.h). Throws tessera::Error: Unsupported when shared memory would exceed
/// the target's limit (naming the kernel, the bytes, the limit and the knobs) or the kernel needs
/// a dtype the target lacks.
std::unique_ptr<ir::Module> to_simt(const ir::Module& tile, const target::Target& target,
                                    const SimtOptions& options);

}  // namespace tessera::lower
