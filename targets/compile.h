/// \file The one compile of the GPU targets: a traced tile-IR kernel through the target-neutral
/// pipeline (core/passes/pipeline.h) to SIMT IR, then through its instruction set's stages
/// (emit, validate, optimize: a table keyed by the target's ISA) to a loadable artifact.
#pragma once

#include <span>
#include <string_view>

#include "core/ir/ir.h"
#include "core/support/dump.h"
#include "core/target/artifact.h"
#include "core/target/options.h"
#include "core/target/target.h"

namespace tessera::targets {

/// Compiles `traced` for `target`. Throws tessera::Error: User for an invalid kernel,
/// Unsupported for what the target cannot run (naming the kernel, the feature and the limits) or
/// a target without a code generator.
target::Artifact compile(const ir::Module& traced, const target::Target& target,
                         const CompileOptions& options, const Dumps& dumps = Dumps::from_env());

/// The SIMT-IR-to-artifact part alone (what compile() runs after the pipeline), for a SIMT
/// function `fn` lowered for `target`.
target::Artifact emit(const ir::Function& fn, const target::Target& target,
                      const Dumps& dumps = Dumps::from_env());

/// The code printed as `tessera dump` and TESSERA_DUMP show it (PTX text, SPIR-V disassembly).
std::string code_text(const target::Artifact& artifact);

/// One stage of an instruction set's list.
struct EmitStep {
  std::string_view name;
  void (*run)(const ir::Function& fn, const target::Target& target, target::Artifact& artifact,
              const Dumps& dumps);
};

/// An instruction set: the Target::isa prefix it serves, its stages in order, and the
/// TESSERA_DUMP word that prints its code.
struct Emitter {
  std::string_view isa;
  std::span<const EmitStep> steps;
  std::string_view dump_word;
};
/// Every instruction set Tessera emits.
std::span<const Emitter> emitters();

}  // namespace tessera::targets
