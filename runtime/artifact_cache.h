/// \file The artifact cache: a kernel's compiled artifact (PTX or SPIR-V with every launch fact a
/// backend reads: parameter layout, shared memory, fault and print channels) on disk at
/// `$TESSERA_CACHE_DIR/artifacts/<hash>.artifact`, keyed by the traced tile IR as printed (with
/// its specialization facts and source locations), the target description, the compile options
/// and the compiler build. A process's first launch of a kernel an earlier process compiled
/// traces it, reads the entry and loads it, skipping the pipeline, lowering and emission (on CUDA
/// the cubin then comes from the cubin cache, keyed by the PTX, so the driver's JIT is skipped
/// too).
///
/// An entry is trusted only whole: its magic and format, its length, the full key stored in it
/// (not only the hash that names the file) and a checksum over the artifact must all match, else
/// it reads as absent and the kernel is compiled and the entry written again. Writes go to a
/// temporary file renamed into place. A folder that cannot be written warns once and kernels are
/// compiled as without a cache; TESSERA_CACHE=0 turns every disk cache off (runtime/cache.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "../core/ir/ir.h"
#include "../core/target/artifact.h"
#include "../core/target/options.h"
#include "../core/target/target.h"
#include "backend.h"

namespace tessera::rt {

/// The compiler build: "<version> <build id>", the GNU build id of the binary that holds the
/// compiler (libtessera.so, or the program it is linked into), else that file's size and time.
/// Two builds of the same version never share entries; computed once per process.
const std::string& compiler_identity();

/// Everything that decides a compile's result, as one text: the cache format, the compiler
/// build, the target description (Target::str()), the options and the traced IR as printed.
std::string artifact_key(const ir::Module& traced, std::string_view target,
                         const CompileOptions& options);

/// The cache's folder ("" when there is no cache root, or with TESSERA_CACHE=0).
std::string artifact_cache_dir();
/// The file of the entry for `key` ("" when there is no folder).
std::string artifact_path(const std::string& key);
/// The entry for `key`, if present and intact in every check.
std::optional<target::Artifact> artifact_read(const std::string& key);
/// Stores the entry; a failure only means no caching (it warns once per folder).
void artifact_write(const std::string& key, const target::Artifact& artifact);
/// Removes the entry (one whose artifact a device refused to load).
void artifact_remove(const std::string& key);

/// The artifact as the bytes of an entry's payload, and back (nullopt for bytes that are not
/// exactly one artifact).
std::string serialize_artifact(const target::Artifact& artifact);
std::optional<target::Artifact> deserialize_artifact(std::string_view bytes);

/// What a backend whose devices load artifacts (CUDA, Vulkan) gives the cache: whether a device
/// is one of its own, and the kernel it makes of an artifact (CudaDevice::load,
/// VulkanDevice::load). The compile itself is the JIT compiler's (jit_compile).
struct ArtifactBackend {
  bool (*owns)(const DeviceImpl& device);
  std::shared_ptr<const CompiledKernel> (*load)(DeviceImpl& device,
                                                const target::Artifact& artifact);
  /// Whether its launches encode Artifact::tensor_maps (CUDA); load_artifact refuses an
  /// artifact with maps on the others.
  bool encodes_tensor_maps = false;
};
/// `backend.load(device, artifact)`, after checking that the backend can launch the artifact:
/// one with TMA tensor maps on a backend that does not encode them is an Unsupported error
/// naming the kernel and the device.
std::shared_ptr<const CompiledKernel> load_artifact(const ArtifactBackend& backend,
                                                    DeviceImpl& device,
                                                    const target::Artifact& artifact);
/// Registers a backend, once, from a static initializer in its folder (runtime/cuda/module.cpp,
/// runtime/vulkan/artifact_loader.cpp); returns true.
bool register_artifact_backend(const ArtifactBackend& backend);
/// The backend that loads artifacts on `device`, or null (the interpreters).
const ArtifactBackend* artifact_backend_of(const DeviceImpl& device);

/// The compiler of the GPU targets: a traced kernel to an artifact (targets::compile).
using JitCompiler = target::Artifact (*)(const ir::Module& traced, const target::Target& target,
                                         const CompileOptions& options);
/// Registers the compiler, once, from a static initializer of runtime/jit/ (linked into
/// libtessera only; libtessera_runtime has none); returns true.
bool register_jit_compiler(JitCompiler compiler);
/// Whether a compiler is registered (false in libtessera_runtime).
bool has_jit_compiler();
/// Compiles `traced` for `target` with the registered compiler; without one (a program linked
/// with Tessera::runtime alone) an ErrorKind::Unsupported error naming the kernel and the target.
target::Artifact jit_compile(const ir::Module& traced, const target::Target& target,
                             const CompileOptions& options);

/// What a launch runs to get its kernel: for a device whose backend registered (CUDA, Vulkan),
/// the artifact from the cache or from the backend's compile, written to the cache, loaded;
/// otherwise DeviceImpl::compile (the interpreters). With TESSERA_DUMP set the cache is not
/// read, so every requested stage prints.
std::shared_ptr<const CompiledKernel> compile_cached(DeviceImpl& device, const ir::Module& traced,
                                                     const CompileOptions& options);

}  // namespace tessera::rt
