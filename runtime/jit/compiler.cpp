/// \file The JIT compiler of the GPU targets (targets::compile), registered with the runtime when
/// libtessera loads. libtessera_runtime (Tessera::runtime) is built without this folder, so it
/// links neither targets/ nor LLVM and SPIRV-Tools, and loads only kernels built ahead of time.
#include "runtime/artifact_cache.h"
#include "targets/compile.h"

namespace tessera::rt {
namespace {

[[maybe_unused]] const bool kJitCompiler = register_jit_compiler(
    [](const ir::Module& traced, const target::Target& target, const CompileOptions& options) {
      return targets::compile(traced, target, options);
    });

}  // namespace
}  // namespace tessera::rt
