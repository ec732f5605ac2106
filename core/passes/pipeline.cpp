/// \file The compile pipeline (pipeline.h): the list of steps, run in order, each dumped and timed
/// on request; and the cleanup passes' registry and fixed-point loop.
#include "core/passes/pipeline.h"

#include <array>
#include <chrono>
#include <iostream>
#include <unordered_set>

#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/lower/simt_lowering.h"
#include "core/lower/tma.h"
#include "core/passes/bounds.h"
#include "core/passes/canonicalize.h"
#include "core/passes/contract.h"
#include "core/passes/cse.h"
#include "core/passes/descriptor_loads.h"
#include "core/passes/descriptors.h"
#include "core/passes/grouped_launch.h"
#include "core/passes/dce.h"
#include "core/passes/fold.h"
#include "core/passes/rem_version.h"
#include "core/passes/single_trip.h"
#include "core/support/error.h"

namespace tessera::passes {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// --- the cleanup passes --------------------------------------------------------------------------

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
bool run_pass(ir::Module& m, const PassInfo& p, const PipelineOptions& options, int round) {
  const auto start = Clock::now();
  const bool changed = p.run(m);
  if (options.timings)
    *options.timings << "// " << p.name << " (round " << round << "): " << ms_since(start) << " ms"
                     << (changed ? "" : ", no change") << "\n";
  if (!changed) return false;
  if (options.verify_each) ir::verify(m);
  if (options.dump) {
    *options.dump << "// -----// IR after " << p.name << " (round " << round << ") //----- //\n";
    *options.dump << ir::print(m, {.locations = options.locations});
  }
  return true;
}

// --- the compile steps
// -----------------------------------------------------------------------------

/// What the steps work on.
struct State {
  const target::Target& target;
  const CompileOptions& options;
  const Dumps& dumps;
  Compiled& out;
  /// The module the last step worked on (for dumps after it).
  const ir::Module& current() const { return out.simt ? *out.simt : *out.tile; }
};

/// A step; returns true if it changed the IR.
using StepFn = bool (*)(State&);

PipelineOptions pass_options(const State& s) {
  return {.verify_each = false,
          .dump = s.dumps.has("passes") ? &s.dumps.out() : nullptr,
          .timings = s.dumps.has("times") ? &s.dumps.out() : nullptr,
          .locations = s.dumps.locations()};
}

bool verify(State& s) {
  ir::verify(s.current());
  return false;
}

/// Is desc_load `op` a rank-2 block read directly by a `dot` of its own region (what a
/// workgroup-scope cooperative-matrix dot may load itself)?
bool feeds_dot_directly(const ir::Op& op) {
  if (op.kind != ir::OpKind::DescLoad || !op.parent || op.result()->type.rank() != 2) return false;
  for (const ir::Op* user : op.parent->ops)
    if (user->kind == ir::OpKind::Dot &&
        (user->operand(0) == op.result() || user->operand(1) == op.result()))
      return true;
  return false;
}

bool descriptors(State& s) {
  const ir::Function& fn = s.out.tile->kernel();
  if (s.dumps.has("layouts")) s.dumps.out() << lower::tma_report(fn, s.target);
  // On a target with TMA the loads it can copy into a loop's ring stay for the loop planner
  // (debug mode checks expanded accesses only); with coopmat2 (the option and the target's
  // capability) the loads a dot reads directly stay for the dot planner, in debug mode too: the
  // SIMT interpreter checks every element of a tensor load itself (on a GPU debug mode does not
  // check these loads). make_plan expands what no plan
  // takes.
  // With tma_store, the stores TMA can write stay for the plan too (lower::plan_tma_store).
  const bool coopmat2 = s.options.coopmat2 && s.target.has(target::Cap::CooperativeMatrix2);
  if (coopmat2) return expand_descriptors(*s.out.tile, feeds_dot_directly);
  if (!s.target.has(target::Cap::Tma) || s.options.debug) return expand_descriptors(*s.out.tile);
  return expand_descriptors(*s.out.tile, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::DescStore)
      return s.options.tma_store && lower::plan_tma_store(fn, op, s.target, nullptr).has_value();
    return lower::feeds_loop_dot(op) && lower::plan_tma(fn, op, s.target, nullptr);
  });
}

bool has_desc_store(const ir::Module& m) {
  bool found = false;
  ir::walk(m.kernel().body,
           [&](const ir::Op* op) { found = found || op->kind == ir::OpKind::DescStore; });
  return found;
}

bool optimize_tile(State& s) {
  optimize(*s.out.tile, pass_options(s));
  return false;  // its passes dump themselves
}

bool single_trip(State& s) {
  if (!version_single_trips(*s.out.tile)) return false;
  optimize(*s.out.tile, pass_options(s));  // the opened loops' loads and arithmetic merged
  return true;
}

bool rem_version(State& s) {
  return version_remainders(*s.out.tile);
}

bool grouped_launch(State& s) {
  if (!s.options.grouped_launch || !group_launch_order(*s.out.tile)) return false;
  optimize(*s.out.tile, pass_options(s));  // the old program ids, now unused, removed
  return true;
}

bool contract(State& s) {
  // Only where an fma rounds once (a Vulkan driver may round GLSL Fma twice: lavapipe does).
  if (!s.options.fp_fusion || !s.target.has(target::Cap::FusedFma) || !contract_fp(*s.out.tile))
    return false;
  optimize(*s.out.tile, pass_options(s));  // the negations of constants, folded
  return true;
}

bool bounds(State& s) {
  if (!s.options.debug || !add_bounds_checks(*s.out.tile)) return false;
  optimize(*s.out.tile, pass_options(s));  // the checks' splats and compares, merged and folded
  return true;
}

/// Plans the kernel (`lean_rings`: see LoweringPlan). The descriptor loads kept for TMA
/// (descriptors) that a ring takes are copied by TMA; the others are expanded as on other targets
/// and the kernel planned again (all of them, should that plan leave one). True if it expanded
/// any. `heading` introduces the plan in the layouts dump.
bool descriptor_loads(State& s) {
  // Only where descriptor loads can be copied by TMA; debug mode checks the accesses as written.
  if (!s.target.has(target::Cap::Tma) || s.options.debug) return false;
  std::unique_ptr<ir::Module> before = s.out.tile->clone();
  if (!pointer_loads_to_descriptors(*s.out.tile, s.target)) return false;
  s.out.before_descriptor_loads = std::move(before);
  optimize(*s.out.tile, pass_options(s));  // the masks and carried pointers no longer used
  return true;
}

bool plan_kernel(State& s, bool lean_rings, std::string_view heading) {
  auto plan = [&](std::string_view why) {
    s.out.plan = std::make_unique<lower::LoweringPlan>(s.out.tile->kernel(), s.target, s.options,
                                                       lean_rings);
    if (s.dumps.has("layouts")) s.dumps.out() << why << s.out.plan->str();
  };
  plan(heading);
  for (int round = 0;; ++round) {
    std::unordered_set<const ir::Op*> taken;
    bool left = false;
    ir::walk(s.out.tile->kernel().body, [&](const ir::Op* op) {
      if (op->kind != ir::OpKind::DescLoad) return;
      if (s.out.plan->lowered_by_loop(*op))
        taken.insert(op);
      else
        left = true;
    });
    if (!left) return round > 0;
    s.out.plan.reset();
    if (s.out.before_descriptor_loads) {
      // A load `descriptor-loads` rewrote that no ring copies by TMA: the kernel as it was.
      s.out.tile = std::move(s.out.before_descriptor_loads);
      plan("// re-planned without the descriptor loads rewritten from pointer loads\n");
      round = -1;  // the kernel's own descriptor loads, as if planned first
      continue;
    }
    expand_descriptors(*s.out.tile, [&](const ir::Op& op) {
      return op.kind == ir::OpKind::DescStore || (round == 0 && taken.count(&op) != 0);
    });
    optimize(*s.out.tile, pass_options(s));
    plan("// re-planned with the descriptor loads no ring copies by TMA expanded\n");
  }
}

bool make_plan(State& s) {
  return plan_kernel(s, /*lean_rings=*/true, "");
}

bool to_simt(State& s) {
  for (;;) {
    try {
      s.out.simt = lower::to_simt(*s.out.plan);
      return true;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Unsupported) throw;
      // A lean ring (wgmma's, or a register ring) counts on reusing its buffers after the loop;
      // where the kernel needs more (a conversion of another dtype), plan the rings with room
      // beside them and lower again (a ring that no longer fits leaves its descriptor loads to
      // the expansion).
      if (s.out.plan->lean_rings() && s.out.plan->has_lean_ring()) {
        plan_kernel(s, /*lean_rings=*/false, "// re-planned with room beside the rings\n");
        continue;
      }
      // A TMA store's staging buffer that does not fit: the stores as masked stores.
      if (!has_desc_store(*s.out.tile)) throw;
      expand_descriptors(*s.out.tile,
                         [](const ir::Op& op) { return op.kind != ir::OpKind::DescStore; });
      optimize(*s.out.tile, pass_options(s));
      plan_kernel(s, /*lean_rings=*/true, "// re-planned with the descriptor stores expanded\n");
    }
  }
}

bool optimize_simt(State& s) {
  optimize(*s.out.simt, pass_options(s));
  return false;
}

struct Step {
  StepInfo info;
  StepFn run;
};

constexpr std::array<Step, 14> kSteps = {{
    {{"verify", Stage::Tile, "check the kernel as traced"}, verify},
    {{"descriptors", Stage::Tile, "tensor-descriptor accesses as masked pointer accesses"},
     descriptors},
    {{"optimize", Stage::Tile, "the cleanup passes on the tile IR, to a fixed point"},
     optimize_tile},
    {{"single-trip", Stage::Tile,
      "loops over one range reading the same tiles, opened where a test proves one trip each"},
     single_trip},
    {{"rem-version", Stage::Tile, "the code after a `%` copied for a left side a test proves >= 0"},
     rem_version},
    {{"grouped-launch", Stage::Tile,
      "grouped_launch: a matmul-like kernel's 2-D grid run in groups of rows, for L2 reuse"},
     grouped_launch},
    {{"contract", Stage::Tile, "fp_fusion: single-use f32/f64 products fused into their sums"},
     contract},
    {{"bounds", Stage::Tile, "debug mode: every access checked against its buffer"}, bounds},
    {{"descriptor-loads", Stage::Tile,
      "TMA targets: pointer loads feeding a loop's dot as descriptor loads, where the same"},
     descriptor_loads},
    {{"verify", Stage::Tile, "check the optimized tile IR"}, verify},
    {{"plan", Stage::Simt, "layouts, dot plans and loop plans"}, make_plan},
    {{"to-simt", Stage::Simt, "per-thread code following the plans"}, to_simt},
    {{"simt-optimize", Stage::Simt, "the cleanup passes on the SIMT IR, to a fixed point"},
     optimize_simt},
    {{"verify", Stage::Simt, "check the SIMT IR"}, verify},
}};

void run_steps(State& s, Stage from, Stage to) {
  for (const Step& step : kSteps) {
    if (step.info.stage < from || step.info.stage > to) continue;
    const auto start = Clock::now();
    const bool changed = step.run(s);
    if (s.dumps.has("times"))
      s.dumps.out() << "// step " << step.info.name << ": " << ms_since(start) << " ms\n";
    if (changed && s.dumps.has("passes"))
      s.dumps.out() << "// -----// IR after " << step.info.name << " //----- //\n"
                    << ir::print(s.current(), {.locations = s.dumps.locations()});
  }
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
    changed |= run_pass(m, pass("canonicalize"), options, round);  // constants and simple forms
    changed |= run_pass(m, pass("fold"), options, round);          // evaluate what is constant
    changed |= run_pass(m, pass("cse"), options, round);           // merge what is equal
    changed |= run_pass(m, pass("dce"), options, round);           // drop what nobody needs
    if (!changed) return;
  }
}

std::span<const StepInfo> all_steps() {
  static const std::array<StepInfo, kSteps.size()> infos = [] {
    std::array<StepInfo, kSteps.size()> out{};
    for (size_t i = 0; i < kSteps.size(); ++i) out[i] = kSteps[i].info;
    return out;
  }();
  return infos;
}

Compiled compile(const ir::Module& traced, const target::Target& target,
                 const CompileOptions& options, Stage stop, const Dumps& dumps) {
  Compiled out;
  out.tile = traced.clone();
  State s{target, options, dumps, out};
  const ir::PrintOptions print{.locations = dumps.locations()};
  const std::string& name = out.tile->kernel().name;
  if (dumps.has("ir"))
    dumps.out() << "// tile IR of '" << name << "' as traced\n" << ir::print(*out.tile, print);
  run_steps(s, Stage::Tile, Stage::Tile);
  if (dumps.has("ir"))
    dumps.out() << "// tile IR of '" << name << "' optimized\n" << ir::print(*out.tile, print);
  if (stop == Stage::Simt) lower(out, target, options, dumps);
  return out;
}

void lower(Compiled& compiled, const target::Target& target, const CompileOptions& options,
           const Dumps& dumps) {
  TESSERA_CHECK(compiled.tile, "lower() without tile IR");
  State s{target, options, dumps, compiled};
  run_steps(s, Stage::Simt, Stage::Simt);
  if (dumps.has("simt"))
    dumps.out() << "// SIMT IR for " << target.name << "\n"
                << ir::print(*compiled.simt, {.locations = dumps.locations()});
}

}  // namespace tessera::passes
