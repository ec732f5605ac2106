/// \file The kernel parameter ABI shared by every device: one packed, C-layout block.
///
/// Parameters appear in declaration order; a pointer is its 64-bit device address; a scalar is
/// stored in its dtype's size (i1 as one byte) at an offset aligned to that size. The CUDA path
/// passes the block as the kernel's parameters, the Vulkan path as push constants (or through a
/// buffer whose address is pushed), and the host interpreter reads it directly.
#pragma once

#include <cstdint>
#include <vector>

#include "ir.h"

namespace tessera::ir {

struct ParamSlot {
  uint32_t offset = 0;
  uint32_t size = 0;
};

struct ParamLayout {
  std::vector<ParamSlot> slots;  ///< one per function parameter
  uint32_t size = 0;             ///< total bytes, rounded up to 8
};

/// Size of one parameter of `type` in the block.
uint32_t param_size(const Type& type);
ParamLayout param_layout(const std::vector<Type>& param_types);
ParamLayout param_layout(const Function& fn);

}  // namespace tessera::ir
