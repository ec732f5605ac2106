/// \file The compiler's table of contents: every target-neutral step of a compile, in order, and
/// the tile-IR pass registry. Every device, `tessera dump`, conformance, fuzz and bench compile
/// through compile() (GPU targets through targets::compile, which continues from its result), so
/// a dump shows exactly what a launch compiles.
///
///   tile IR as traced
///     verify
///     descriptors     tensor-descriptor loads and stores as masked pointer accesses
///                     (core/passes/descriptors.h)
///     optimize        canonicalize, fold, cse, dce, to a fixed point
///     single-trip     loops over one range that load the same tiles, opened up in a copy of the
///                     code for a run-time test that proves one trip each and the memory between
///                     them untouched (core/passes/single_trip.h), then optimize
///     rem-version     the code after a `%` whose left side's sign is unproven, copied for a
///                     run-time test that proves it >= 0 (core/passes/rem_version.h)
///     grouped-launch  CompileOptions::grouped_launch: a matmul-like kernel's 2-D grid renamed
///                     to run in groups of 8 rows (core/passes/grouped_launch.h), then optimize
///     contract        CompileOptions::fp_fusion: a*b+c as fma (core/passes/contract.h), then
///                     optimize again
///     bounds          debug mode (CompileOptions::debug): every access checked against its
///                     buffer (core/passes/bounds.h), then optimize again
///     descriptor-loads  TMA targets: masked pointer loads feeding a loop's dot as descriptor
///                     loads where provably the same (core/passes/descriptor_loads.h)
///     verify                                      -> Stage::Tile: what the host interpreter runs
///     plan            layouts, dot plans, loop plans (core/lower/plan.h)
///     to-simt         per-thread code following the plans (core/lower/simt_lowering.h)
///     simt-optimize   canonicalize, fold, cse, dce on the SIMT IR, to a fixed point
///     verify                                      -> Stage::Simt: what the SIMT interpreter runs
///                                                    and targets emit from
///
/// TESSERA_DUMP (core/support/dump.h) shows the steps: `ir` the tile IR before and after the tile
/// steps, `passes` the IR after every step and pass that changed it, `times` their times,
/// `layouts` the plans, `simt` the SIMT IR, `noloc` without locations.
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "core/ir/ir.h"
#include "core/lower/plan.h"
#include "core/support/dump.h"
#include "core/target/options.h"
#include "core/target/target.h"

namespace tessera::passes {

/// A pass rewrites a module in place and returns true if it changed anything.
using PassFn = bool (*)(ir::Module&);

struct PassInfo {
  std::string_view name;  ///< what `// RUN:` lines and tools call it
  PassFn run;
  std::string_view summary;
};

/// Every cleanup pass: "fold", "cse", "dce", "canonicalize" (they work on tile and SIMT IR alike).
std::span<const PassInfo> all_passes();
/// The pass called `name`, or null.
const PassInfo* find_pass(std::string_view name);

struct PipelineOptions {
  bool verify_each = false;         ///< verify the module after each pass that changed it
  std::ostream* dump = nullptr;     ///< print the IR after each pass that changed it
  std::ostream* timings = nullptr;  ///< print each pass's time
  bool locations = true;            ///< print locations in the dumped IR
};

/// The cleanup passes run until nothing changes (the `optimize` and `simt-optimize` steps).
void optimize(ir::Module& m, const PipelineOptions& options = {});

/// Where a compile stops.
enum class Stage {
  Tile,  ///< the optimized tile IR
  Simt,  ///< the SIMT IR
};

/// What a compile made, up to its stage.
struct Compiled {
  std::unique_ptr<ir::Module> tile;           ///< the optimized tile IR
  std::unique_ptr<lower::LoweringPlan> plan;  ///< Stage::Simt: the plans (of `tile`)
  std::unique_ptr<ir::Module> simt;           ///< Stage::Simt: the SIMT IR
  /// The tile IR before `descriptor-loads` rewrote pointer loads (descriptor_loads.h), kept
  /// until the plan copies every descriptor load by TMA; the plan goes back to it otherwise.
  std::unique_ptr<ir::Module> before_descriptor_loads;
};

/// Runs the steps above on a copy of `traced` (a tile-IR kernel as traced) up to `stop`. Throws
/// tessera::Error: User for an invalid kernel, Unsupported for what the target cannot run (too
/// many threads, too much shared memory, a dtype it lacks).
Compiled compile(const ir::Module& traced, const target::Target& target,
                 const CompileOptions& options, Stage stop, const Dumps& dumps = Dumps::from_env());

/// The steps from `plan` on, for an optimized tile-IR kernel (golden tests lower hand-written
/// tile IR with it). `compiled.tile` must hold the tile IR; plan and simt are filled.
void lower(Compiled& compiled, const target::Target& target, const CompileOptions& options,
           const Dumps& dumps = Dumps::from_env());

/// One step of the list above, by name, for the golden runner's `// RUN:` lines and tests.
struct StepInfo {
  std::string_view name;
  Stage stage;  ///< the part of the list it belongs to
  std::string_view summary;
};
std::span<const StepInfo> all_steps();

}  // namespace tessera::passes
