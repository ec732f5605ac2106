/// \file The pass registry and the standard pipeline, logged step by step on request.
#include "core/passes/pipeline.h"

#include <array>
#include <chrono>
#include <iostream>

#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/passes/canonicalize.h"
#include "core/passes/cse.h"
#include "core/passes/dce.h"
#include "core/passes/fold.h"
#include "core/support/error.h"

namespace tessera::passes {
namespace {

constexpr std::array<PassInfo, 4> kPasses = {{
    {"fold", fold_constants, "evaluate pure ops whose operands are all constants"},
    {"cse", eliminate_common_subexpressions, "merge equal pure ops, scoped by regions"},
    {"dce", eliminate_dead_code,
     "remove ops, loop-carried values and branches that no side effect needs"},
    {"canonicalize", canonicalize, "local rewrites to simpler forms, to a fixed point"},
}};

/// Rounds of the whole list before giving up on a fixed point (each round shrinks the IR or
/// makes it more canonical, so real kernels settle in two or three).
constexpr int kMaxRounds = 16;

const PassInfo& pass(std::string_view name) {
  const PassInfo* p = find_pass(name);
  TESSERA_CHECK(p, "unknown pass '", name, "'");
  return *p;
}

/// Runs one pass; after a change, verifies and logs as `options` ask. Returns the pass's answer.
bool step(ir::Module& m, const PassInfo& p, const PipelineOptions& options, int round) {
  const auto start = std::chrono::steady_clock::now();
  const bool changed = p.run(m);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (options.timings) {
    std::ostream& os = options.dump ? *options.dump : std::cerr;
    os << "// " << p.name << " (round " << round << "): " << took.count() << " ms"
       << (changed ? "" : ", no change") << "\n";
  }
  if (!changed) return false;
  if (options.verify_each) ir::verify(m);
  if (options.dump) {
    *options.dump << "// -----// IR after " << p.name << " (round " << round << ") //----- //\n";
    *options.dump << ir::print(m);
  }
  return true;
}

}  // namespace

std::span<const PassInfo> all_passes() {
  return kPasses;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

void optimize(ir::Module& m, const PipelineOptions& options) {
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    changed |= step(m, pass("canonicalize"), options, round);  // constants and simple forms
    changed |= step(m, pass("fold"), options, round);          // evaluate what is constant
    changed |= step(m, pass("cse"), options, round);           // merge what is equal
    changed |= step(m, pass("dce"), options, round);           // drop what nobody needs
    if (!changed) return;
  }
}

}  // namespace tessera::passes
