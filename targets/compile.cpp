/// \file The GPU compile (compile.h): the target-neutral pipeline, then the instruction set's
/// stages from the table below, each timed and dumped on request.
#include "targets/compile.h"

#include <array>
#include <chrono>
#include <ostream>

#include "core/passes/pipeline.h"
#include "core/support/error.h"
#include "targets/ptx/ptx.h"
#include "targets/spirv/spirv.h"

namespace tessera::targets {
namespace {

using target::Artifact;

// --- PTX: LLVM IR with NVVM intrinsics, LLVM's optimizer and NVPTX code generation in one step
// (the LLVM module stays inside targets/ptx, whose LLVM symbols are hidden).

void ptx_emit(const ir::Function& fn, const target::Target& t, Artifact& a, const Dumps& dumps) {
  std::string llvm_ir;
  a = ptx::emit(fn, t, dumps.has("llvm") ? &llvm_ir : nullptr);
  if (dumps.has("llvm")) dumps.out() << llvm_ir;
}

// --- SPIR-V: the project's builder, SPIRV-Tools' validator and optimizer.

void spirv_emit(const ir::Function& fn, const target::Target& t, Artifact& a, const Dumps&) {
  a = spirv::emit(fn, t, {.optimize = false, .validate = false});
}

/// SPIRV-Tools 2023.1 cannot read a module with SPV_KHR_cooperative_matrix: it goes to the driver
/// as emitted, and the skipped steps say so in TESSERA_DUMP=times (the disassembly says it too).
bool spirv_tools_skip(const Artifact& a, const Dumps& dumps, std::string_view step) {
  if (!spirv::uses_cooperative_matrix(a.spirv)) return false;
  if (dumps.has("times"))
    dumps.out() << "// spirv step " << step << " skipped: " << spirv::kCooperativeMatrixNote
                << "\n";
  return true;
}

void spirv_validate(const ir::Function& fn, const target::Target&, Artifact& a, const Dumps& dumps,
                    const char* stage) {
  if (spirv_tools_skip(a, dumps, "validate")) return;
  const std::string error = spirv::validate(a.spirv);
  TESSERA_CHECK(error.empty(), "SPIR-V ", stage, " of kernel '", fn.name,
                "' does not validate: ", error);
}

void spirv_validate_emitted(const ir::Function& fn, const target::Target& t, Artifact& a,
                            const Dumps& d) {
  spirv_validate(fn, t, a, d, "emitted");
}

void spirv_optimize(const ir::Function& fn, const target::Target& t, Artifact& a,
                    const Dumps& dumps) {
  if (spirv_tools_skip(a, dumps, "optimize")) return;
  if (spirv::counts_loops(t)) {
    if (dumps.has("times"))
      dumps.out() << "// spirv step optimize skipped: " << spirv::kLoopCountingNote << "\n";
    return;
  }
  a.spirv = spirv::optimize(a.spirv, fn.name);
}

void spirv_validate_optimized(const ir::Function& fn, const target::Target& t, Artifact& a,
                              const Dumps& d) {
  spirv_validate(fn, t, a, d, "optimized");
}

constexpr std::array<EmitStep, 1> kPtxSteps = {{{"emit", ptx_emit}}};
constexpr std::array<EmitStep, 4> kSpirvSteps = {{
    {"emit", spirv_emit},
    {"validate", spirv_validate_emitted},
    {"optimize", spirv_optimize},
    {"validate", spirv_validate_optimized},
}};

constexpr std::array<Emitter, 2> kEmitters = {{
    {"ptx", kPtxSteps, "ptx"},
    {"spirv", kSpirvSteps, "spirv"},
}};

const Emitter* emitter_for(const target::Target& t) {
  for (const Emitter& e : kEmitters)
    if (t.isa.starts_with(e.isa)) return &e;
  return nullptr;
}

}  // namespace

std::span<const Emitter> emitters() {
  return kEmitters;
}

std::string code_text(const Artifact& a) {
  return a.isa == "spirv" ? spirv::disassemble(a.spirv) : a.ptx;
}

Artifact emit(const ir::Function& fn, const target::Target& target, const Dumps& dumps) {
  const Emitter* e = emitter_for(target);
  if (!e)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "': target '", target.name,
         "' has no code generator (isa '", target.isa, "')");
  Artifact a;
  for (const EmitStep& step : e->steps) {
    const auto start = std::chrono::steady_clock::now();
    step.run(fn, target, a, dumps);
    if (dumps.has("times"))
      dumps.out() << "// " << e->isa << " step " << step.name << ": "
                  << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                               start)
                         .count()
                  << " ms\n";
  }
  if (dumps.has(e->dump_word)) dumps.out() << code_text(a);
  return a;
}

Artifact compile(const ir::Module& traced, const target::Target& target,
                 const CompileOptions& options, const Dumps& dumps) {
  if (!emitter_for(target))
    fail(ErrorKind::Unsupported, "kernel '", traced.kernel().name, "': target '", target.name,
         "' has no code generator (isa '", target.isa, "')");
  passes::Compiled c = passes::compile(traced, target, options, passes::Stage::Simt, dumps);
  return emit(c.simt->kernel(), target, dumps);
}

}  // namespace tessera::targets
