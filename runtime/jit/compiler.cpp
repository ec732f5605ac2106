/// \file The JIT compiler of the GPU targets (targets::compile), registered with the runtime when
/// libtessera loads. libtessera_runtime (Tessera::runtime) is built without this folder, so it
/// links neither targets/ nor LLVM and SPIRV-Tools, and loads only kernels built ahead of time.
#include "runtime/artifact_cache.h"
#include "targets/compile.h"

namespace tessera::rt {
namespace {

[[maybe_unused]] const bool kJitCompiler = register_jit_compiler(
    [](const ir::Module& traced, const target::Target& target, const CompileOptions& options) {
      target::Artifact a = targets::compile(traced, target, options);
      // The parameters' names, for the runtime's errors (tensor maps name their parameter);
      // only where the traced kernel's parameters are the artifact's user parameters.
      const std::vector<ir::Param>& params = traced.kernel().params;
      if (params.size() + a.tensor_maps.size() == a.params.slots.size())
        for (const ir::Param& p : params) a.param_names.push_back(p.name);
      return a;
    });

}  // namespace
}  // namespace tessera::rt
