/// \file The kernel parameter ABI shared by every device: one packed, C-layout block.
///
/// Parameters appear in declaration order; a pointer is its 64-bit device address; a scalar is
/// stored in its dtype's size (i1 as one byte) at an offset aligned to that size. The CUDA path
/// passes the block as the kernel's parameters, the Vulkan path as push constants (or through a
/// buffer whose address is pushed), and the host interpreter reads it directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

// --- TMA tensor maps (Hopper) ----------------------------------------------------------------

/// Where one number of a tensor map comes from at launch: kernel parameter `param` (a scalar
/// integer; its value read from the parameter block) or, when `param` is -1, `constant`.
struct TensorMapValue {
  int param = -1;
  int64_t constant = 0;
  bool operator==(const TensorMapValue&) const = default;
  std::string str() const;  ///< "%3" (parameter 3) or "64"
};

/// One CUtensorMap the kernel reads (a tensor descriptor copied by TMA): the runtime encodes it
/// at launch from the parameter block's values (cuTensorMapEncodeTiled) and passes its 128 bytes
/// in the block after the user's parameters, 64-byte aligned (a `.param .align 64 .b8 [128]`
/// kernel parameter, read with __grid_constant__ semantics). Dimensions, strides and box are
/// listed outermost first, as the descriptor gives them; the innermost stride is 1 (in elements).
struct TensorMapParam {
  int base_param = -1;  ///< the pointer parameter holding the tensor's base address
  DType dtype = DType::f16;
  std::vector<TensorMapValue> dims;     ///< elements, one per dimension
  std::vector<TensorMapValue> strides;  ///< elements, one per dimension (the last is 1)
  std::vector<int64_t> box;             ///< the block copied, elements per dimension
  int swizzle = 0;                      ///< shared-memory swizzle in bytes: 0, 32, 64 or 128
  /// Copies per block along the innermost dimension: a block row wider than the 128-byte swizzle
  /// span is copied as `copies` boxes of 128 bytes per row, box i at i x box_bytes() in shared
  /// memory (wgmma's column blocks).
  int copies = 1;
  int rank() const { return static_cast<int>(dims.size()); }
  /// Bytes one copy (one box) writes to shared memory; the block's are copies x box_bytes().
  int64_t box_bytes() const;
  bool operator==(const TensorMapParam&) const = default;
  /// "tensor_map(%0: f16 [%4 x %5] strides [%5, 1] box [128 x 64] swizzle 128)", then
  /// " x 2 copies" where copies > 1.
  std::string str() const;
};

/// The map TensorMapParam::str() printed (with " x N copies" when N > 1); nullopt for any other
/// text. SIMT functions carry their maps so (attribute tensor_map_<i>, core/ir/simt.h).
std::optional<TensorMapParam> parse_tensor_map(std::string_view text);

/// Bytes of one encoded tensor map (CUtensorMap) and its alignment in the parameter block.
inline constexpr uint32_t kTensorMapBytes = 128;
inline constexpr uint32_t kTensorMapAlign = 64;

/// The layout of `fn`'s parameters followed by `maps` tensor maps: one slot per map appended
/// after the user's parameters' slots (slots[params.size() + i] is map i), each 128 bytes at a
/// 64-byte aligned offset; with no maps, param_layout(fn) exactly.
ParamLayout param_layout(const std::vector<Type>& param_types, size_t maps);

}  // namespace tessera::ir
