/// \file The generator program tessera_add_kernels() (cmake/TesseraKernels.cmake) builds and runs
/// at build time: it traces each listed kernel for each listed specialization, compiles it for
/// each listed target (PTX and SPIR-V need no GPU; the interpreters take the traced tile IR) and
/// writes a .cpp of the artifacts as bytes and a header of AotKernel launchers (runtime/aot.h).
/// Defined in libtessera only (it compiles); a program of kernels built ahead of time links
/// libtessera_runtime.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "kernel.h"

namespace tessera::aot {

/// One kernel the generator builds.
struct GeneratorKernel {
  const char* name;          ///< the launcher's name in the generated namespace ("vector_add")
  const char* function;      ///< the kernel function as written ("samples::vector_add_kernel")
  const KernelBase* kernel;  ///< a JIT kernel of that function, which traces it
};

/// Reads the plan at `plan` (below), traces and compiles every (kernel, specialization, target)
/// and writes the embedded entries to `out_cpp` and the launchers to `out_h`; returns the number
/// of entries. Throws tessera::Error (Argument: an unknown kernel, parameter or profile, a value of
/// the wrong kind, a constant without a value; the compile's own error for a kernel that does not
/// compile for a target).
size_t generate(const std::string& plan, const std::string& out_cpp, const std::string& out_h,
                std::span<const GeneratorKernel> kernels);

/// The generator's main: `<program> PLAN OUT_CPP OUT_H`, where PLAN is the file
/// tessera_add_kernels writes (lines "namespace N", "header H", "source S", "fallback 0|1",
/// "target PROFILE", "spec KERNEL: NAME=VALUE ..."). Returns 0, or 1 after printing the error
/// (an unknown kernel, parameter or profile, a value of the wrong kind, a kernel that does not
/// compile for a target) to stderr.
int generator_main(int argc, char** argv, std::span<const GeneratorKernel> kernels);

}  // namespace tessera::aot
