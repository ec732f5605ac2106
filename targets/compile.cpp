/// \file The compile driver: lower once (core/lower), clean up the SIMT IR with the scalar passes,
/// verify, and emit for the target's instruction set.
#include "targets/compile.h"

#include <iostream>
#include <string_view>

#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/lower/simt_lowering.h"
#include "core/passes/pipeline.h"
#include "core/support/dump.h"
#include "core/support/error.h"
#include "targets/ptx/ptx.h"
#include "targets/spirv/spirv.h"

namespace tessera::targets {

std::unique_ptr<ir::Module> lower_to_simt(const ir::Module& tile_ir, const target::Target& target,
                                          const CompileOptions& options) {
  lower::SimtOptions o;
  o.num_warps = options.num_warps;
  o.num_stages = options.num_stages;
  std::unique_ptr<ir::Module> simt = lower::to_simt(tile_ir, target, o);
  passes::optimize(*simt);
  ir::verify(*simt);
  if (dump_enabled("simt")) std::cerr << "// SIMT IR for " << target.name << "\n" << ir::print(*simt);
  return simt;
}

target::Artifact compile(const ir::Module& tile_ir, const target::Target& target,
                         const CompileOptions& options) {
  std::unique_ptr<ir::Module> simt = lower_to_simt(tile_ir, target, options);
  const ir::Function& fn = simt->kernel();
  if (target.isa.starts_with("spirv")) {
    target::Artifact a = spirv::emit(fn, target);
    if (dump_enabled("spirv")) std::cerr << spirv::disassemble(a.spirv);
    return a;
  }
  if (target.isa.starts_with("ptx")) {
    if (dump_enabled("llvm")) std::cerr << ptx::emit_llvm_ir(fn, target);
    target::Artifact a = ptx::emit(fn, target);
    if (dump_enabled("ptx")) std::cerr << a.ptx;
    return a;
  }
  fail(ErrorKind::Unsupported, "kernel '", fn.name, "': target '", target.name,
       "' has no code generator (isa '", target.isa, "')");
}

}  // namespace tessera::targets
