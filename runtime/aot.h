/// \file Kernels compiled ahead of time: the artifacts tessera_add_kernels() (cmake/
/// TesseraKernels.cmake) built at build time, embedded in the program, launched with the same
/// syntax as a JIT kernel, with no compiler in the process (libtessera_runtime suffices):
///
///   // with the generated header included (it declares aot::vector_add, an AotKernel):
///   aot::vector_add[{tessera::cdiv(n, 1024)}](x, y, out, n, 1024);
///
/// A launch picks the built specialization that applies: the same constants, the arguments'
/// dtypes, facts the arguments have (a 16-byte aligned buffer, an integer divisible by 16 or equal
/// to 1), the launch's num_warps, num_stages, maxnreg and debug, and a target the device runs
/// (docs/guide.md, "Ahead-of-time kernels"). None applies: an ErrorKind::Unsupported error naming
/// the kernel, the launch and what was built, or, built with JIT_FALLBACK, the JIT compiles it.
/// Each embedded entry carries a checksum: a damaged one is an error at the kernel's first launch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel.h"

namespace tessera {

namespace target {
struct Target;
}

namespace aot {

/// One compiled specialization as the generator embeds it.
struct Entry {
  const char* target;          ///< the profile it was built for ("host", "cuda-sm_80", ...)
  const char* label;           ///< the specialization as written ("BLOCK=1024 num_warps=4")
  const unsigned char* bytes;  ///< the encoded entry (encode_entry)
  size_t size;                 ///< bytes in `bytes`
};

/// What an entry holds once decoded.
struct Decoded {
  std::string target;              ///< Target::str() of the profile built for
  bool is_ir = false;              ///< true: `payload` is tile IR as traced (interpreters)
  CompileOptions options;          ///< the options it was compiled with
  std::vector<tl::ArgSpec> specs;  ///< the specialization, one per parameter
  std::string payload;             ///< IR text, or a serialized artifact
};

/// The bytes of an entry: a magic, a checksum, then `entry`'s fields.
std::string encode_entry(const Decoded& entry);
/// The entry of `bytes`; nullopt for bytes that are damaged (a checksum or a length that does
/// not match) or not an entry.
std::optional<Decoded> decode_entry(std::string_view bytes);

/// Whether code built for `built` runs on a device described by `device`: the same instruction
/// set; on PTX a compute capability the device has (an `a` target only on its own); what the
/// code assumes of the device (capabilities, matrix shapes of both scopes, subgroup size, loop
/// limit, push constant space) the device has; and every driver bug the device has is worked around
/// in the code. What the artifact itself uses (threads, shared memory) is checked against the
/// device's limits apart (fits). Dependent launches are not asked of the device: code that waits
/// for its predecessor runs the same in plain stream order (the runtime then launches it so).
bool target_runs_on(const target::Target& built, const target::Target& device);

}  // namespace aot

/// A kernel compiled ahead of time (tessera_add_kernels generates one per kernel): checked like
/// a JIT kernel (same argument errors), launched from its embedded artifacts.
class AotKernel : public KernelBase {
 public:
  /// The kernel `name` with parameters `params` named `param_names` ("x, y, n, BLOCK"), built as
  /// `entries` (static data, kept by pointer). `fallback`, when given (JIT_FALLBACK), is the JIT
  /// kernel of the same function, which compiles a launch no entry serves.
  AotKernel(std::string name, std::string_view param_names, std::vector<tl::ParamDesc> params,
            std::span<const aot::Entry> entries, const KernelBase* fallback = nullptr);

  /// What `kernel[config]` returns: call it with the arguments to launch.
  class Launcher {
   public:
    /// `k` launched with `c`.
    Launcher(const AotKernel* k, LaunchConfig c) : kernel_(k), config_(c) {}
    /// Checks `args` as a JIT kernel does, picks the built specialization and launches it.
    template <class... Args>
    void operator()(const Args&... args) const {
      std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
      kernel_->launch(config_, std::span<const KernelArg>(erased.data(), erased.size()));
    }

   private:
    const AotKernel* kernel_;
    LaunchConfig config_;
  };
  /// The launch with grid, options and stream `config`: `k[{grid}](args...)`.
  Launcher operator[](const LaunchConfig& config) const { return Launcher(this, config); }

  /// What was built, one line each: "cuda-sm_80: BLOCK=1024 num_warps=4".
  std::vector<std::string> built() const;

 protected:
  /// The fallback's trace; without a fallback, an Unsupported error (no kernel function here).
  std::unique_ptr<ir::Module> trace(const std::vector<tl::ArgSpec>& specs) const override;
  /// The entry that serves the launch, loaded; else the fallback's compile, else an error.
  std::shared_ptr<const rt::CompiledKernel> compile_for(
      rt::DeviceImpl& device, const std::vector<tl::ArgSpec>& specs,
      const LaunchOptions& options) const override;

 private:
  /// Decodes every entry once; a damaged one is an ErrorKind::Runtime error naming it (at every
  /// launch that needs a new compile).
  const std::vector<aot::Decoded>& decoded() const;

  std::span<const aot::Entry> entries_;
  const KernelBase* fallback_;
  mutable std::mutex decode_mutex_;
  mutable bool decoded_ok_ = false;
  mutable std::vector<aot::Decoded> decoded_;
};

}  // namespace tessera
