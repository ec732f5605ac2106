/// \file The tile-IR pass registry and the standard optimization pipeline.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "core/ir/ir.h"

namespace tessera::passes {

/// A pass rewrites a module in place and returns true if it changed anything.
using PassFn = bool (*)(ir::Module&);

struct PassInfo {
  std::string_view name;  ///< what `// RUN:` lines and tools call it
  PassFn run;
  std::string_view summary;
};

/// Every tile-IR pass: "fold", "cse", "dce", "canonicalize".
std::span<const PassInfo> all_passes();
/// The pass called `name`, or null.
const PassInfo* find_pass(std::string_view name);

struct PipelineOptions {
  bool verify_each = false;      ///< verify the module after each pass that changed it
  std::ostream* dump = nullptr;  ///< print the IR after each pass that changed it
  bool timings = false;          ///< with `dump`, print each pass's time
};

/// The standard tile-IR pipeline: a straight list of passes run until nothing changes.
void optimize(ir::Module& m, const PipelineOptions& options = {});

}  // namespace tessera::passes
