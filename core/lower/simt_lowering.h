/// \file Lowering a tile-IR kernel to the SIMT IR, following its plan (plan.h): each tile op
/// becomes per-thread scalar code in the layouts the plan chose (with shuffles, shared memory and
/// barriers where data crosses threads). Written once, here; every target emits from its result.
#pragma once

#include <memory>

#include "core/ir/ir.h"
#include "core/lower/plan.h"

namespace tessera::lower {

/// Lowers the kernel `plan` was made for. The result is a module with one SIMT function
/// (core/ir/simt.h). Throws tessera::Error: Unsupported when shared memory would exceed the
/// target's limit (naming the kernel, the bytes, the limit and the knobs), the workgroup is too
/// large for the target, or the kernel needs a dtype the target lacks.
std::unique_ptr<ir::Module> to_simt(const LoweringPlan& plan);

}  // namespace tessera::lower
