/// \file A compiled kernel as a target produces it and a runtime backend consumes it: the binary,
/// the parameter ABI and the launch facts. Runtime backends never see the IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/abi.h"

namespace tessera::target {

struct Artifact {
  std::string kernel;            ///< entry point name (the kernel function's name)
  /// The entry point's symbol in the binary where it differs from `kernel` (PTX: a kernel name
  /// that is no PTX identifier, made one: ptx::kernel_symbol); empty: `kernel`.
  std::string symbol;
  const std::string& entry_symbol() const { return symbol.empty() ? kernel : symbol; }
  std::string isa;               ///< "spirv" or "ptx"
  std::vector<uint32_t> spirv;   ///< SPIR-V words (isa "spirv")
  std::string ptx;               ///< PTX text (isa "ptx")
  std::string target;            ///< Target::str() of the target it was compiled for

  /// The packed parameter block (core/ir/abi.h) of the user's parameters, followed, when
  /// `grid_offset` is set, by three u32: the logical grid size (x, y, z). Backends whose hardware
  /// grid is smaller than the logical one (lavapipe: 65535 per dimension) dispatch a folded grid;
  /// the kernel rebuilds program ids from the linear workgroup index and the logical grid, and
  /// workgroups past the end return at once.
  ir::ParamLayout params;
  uint32_t param_bytes = 0;      ///< size of the whole block, hidden words included
  int64_t grid_offset = -1;      ///< byte offset of the logical grid in the block, or -1
  /// Vulkan: the block did not fit in push constants; push only its 64-bit device address
  /// (a buffer the runtime fills per launch).
  bool params_by_address = false;

  uint32_t threads = 0;          ///< threads per workgroup (x dimension only)
  uint32_t subgroup = 0;         ///< the subgroup size the code was lowered for (required)
  uint64_t shared_bytes = 0;     ///< static shared (workgroup) memory
};

}  // namespace tessera::target
