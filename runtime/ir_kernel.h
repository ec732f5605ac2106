/// \file A kernel made from tile IR instead of a C++ function: for IR written by hand, parsed
/// from text, or generated (the fuzzer), launched through the same runtime path as every
/// traced kernel (argument checks, specialization, the optimizing pipeline, per-device caches).
///
///   auto k = tessera::IrKernel(ir::parse(text));
///   k[{grid}](x_buffer, out_buffer, n);
#pragma once

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "../core/ir/ir.h"
#include "kernel.h"

namespace tessera {

class IrKernel : public KernelBase {
 public:
  /// `module`'s first function is the kernel (it should verify). Its parameters become the
  /// kernel's: pointers take buffers of their pointee dtype, scalars numbers of their dtype.
  explicit IrKernel(std::shared_ptr<const ir::Module> module);
  explicit IrKernel(std::unique_ptr<ir::Module> module)
      : IrKernel(std::shared_ptr<const ir::Module>(std::move(module))) {}

  /// The module as given (before specialization and optimization).
  const ir::Module& module() const { return *module_; }

  class Launcher {
   public:
    Launcher(const IrKernel* k, LaunchConfig c) : kernel_(k), config_(c) {}
    template <class... Args>
    void operator()(const Args&... args) const {
      std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
      kernel_->launch(config_, std::span<const KernelArg>(erased.data(), erased.size()));
    }

   private:
    const IrKernel* kernel_;
    LaunchConfig config_;
  };
  Launcher operator[](const LaunchConfig& config) const { return Launcher(this, config); }

 protected:
  /// A clone of the module with the launch's specialization facts on its parameters (16-byte
  /// alignment and 16-divisibility as `divisibility = 16`; an integer equal to 1 as
  /// `equal_to = 1` with its uses replaced by the constant 1), as the tracer records them.
  std::unique_ptr<ir::Module> trace(const std::vector<tl::ArgSpec>& specs) const override;

 private:
  std::shared_ptr<const ir::Module> module_;
};

}  // namespace tessera
