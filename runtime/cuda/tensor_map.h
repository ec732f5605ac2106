/// \file TMA tensor maps (CUtensorMap) for kernels whose descriptor loads are copied by TMA
/// (core/ir/abi.h, ir::TensorMapParam): the arguments of cuTensorMapEncodeTiled computed from a
/// launch's parameter block, checked against TMA's limits with errors that name the argument, and
/// the encoded maps cached per (address, shape, strides, box, dtype, swizzle).
///
/// cuTensorMapEncodeTiled (CUDA 12.0) is resolved from libcuda.so.1 at run time like every driver
/// entry point, but typed here, with the enum values it takes declared below from the CUDA driver
/// API documentation (CUtensorMapDataType, CUtensorMapSwizzle, ...), so that the build needs no
/// cuda.h that knows tensor maps.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/ir/abi.h"

namespace tessera::rt::cuda {

/// The numeric values of the driver API's enums that Tessera passes (CUDA driver API reference,
/// "Tensor Map Object Management"; CUtensorMapDataType and the others are plain C enums).
namespace tensor_map_enum {
inline constexpr uint32_t kUint8 = 0;           ///< CU_TENSOR_MAP_DATA_TYPE_UINT8
inline constexpr uint32_t kUint16 = 1;          ///< CU_TENSOR_MAP_DATA_TYPE_UINT16
inline constexpr uint32_t kUint32 = 2;          ///< CU_TENSOR_MAP_DATA_TYPE_UINT32
inline constexpr uint32_t kInt32 = 3;           ///< CU_TENSOR_MAP_DATA_TYPE_INT32
inline constexpr uint32_t kUint64 = 4;          ///< CU_TENSOR_MAP_DATA_TYPE_UINT64
inline constexpr uint32_t kInt64 = 5;           ///< CU_TENSOR_MAP_DATA_TYPE_INT64
inline constexpr uint32_t kFloat16 = 6;         ///< CU_TENSOR_MAP_DATA_TYPE_FLOAT16
inline constexpr uint32_t kFloat32 = 7;         ///< CU_TENSOR_MAP_DATA_TYPE_FLOAT32
inline constexpr uint32_t kFloat64 = 8;         ///< CU_TENSOR_MAP_DATA_TYPE_FLOAT64
inline constexpr uint32_t kBfloat16 = 9;        ///< CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
inline constexpr uint32_t kInterleaveNone = 0;  ///< CU_TENSOR_MAP_INTERLEAVE_NONE
/// CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B are 0, 1, 2, 3.
inline constexpr uint32_t kSwizzleNone = 0;
inline constexpr uint32_t kL2Promotion128B = 2;  ///< CU_TENSOR_MAP_L2_PROMOTION_L2_128B
/// CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: elements outside the tensor are written as zeros.
inline constexpr uint32_t kOobFillZero = 0;
}  // namespace tensor_map_enum

/// The arguments of one cuTensorMapEncodeTiled call, innermost dimension first (the driver's
/// order, the reverse of the descriptor's). Compared and ordered as the cache's key.
struct TensorMapArgs {
  uint32_t dtype = 0;  ///< a tensor_map_enum data type
  uint32_t rank = 0;
  uint64_t address = 0;
  std::array<uint64_t, 5> dims{};     ///< elements
  std::array<uint64_t, 4> strides{};  ///< bytes, of dimensions 1 .. rank - 1
  std::array<uint32_t, 5> box{};      ///< elements
  uint32_t swizzle = 0;               ///< a tensor_map_enum swizzle (0 none .. 3 for 128 bytes)
  auto operator<=>(const TensorMapArgs&) const = default;
};

/// The CUtensorMap data type that copies `t`'s bits.
uint32_t tensor_map_dtype(ir::DType t);

/// The encoding arguments of `map` for a launch of `kernel` with parameter block `params` laid
/// out as `layout` (`names`: the kernel's parameter names, for errors). Throws an Argument error
/// naming the parameter where the values break TMA's limits: "kernel 'mm': tensor map of
/// parameter 'a' (tensor descriptor): shape[1] = 0 (parameter 'K'): every dimension must be
/// 1 to 2^32" and so on for a base that is not 16-byte aligned and strides that are not
/// multiples of 16 bytes or not below 2^40.
TensorMapArgs tensor_map_args(const ir::TensorMapParam& map, std::span<const std::byte> params,
                              const ir::ParamLayout& layout, const std::vector<std::string>& names,
                              const std::string& kernel);

/// One encoded CUtensorMap: 128 opaque bytes, 64-byte aligned as the kernel parameter is.
struct alignas(64) EncodedTensorMap {
  std::array<std::byte, ir::kTensorMapBytes> bytes{};
};

/// cuTensorMapEncodeTiled's signature, with the enum parameters as their underlying integers.
using EncodeTiledFn = int (*)(void* map, uint32_t dtype, uint32_t rank, void* address,
                              const uint64_t* dims, const uint64_t* strides, const uint32_t* box,
                              const uint32_t* element_strides, uint32_t interleave,
                              uint32_t swizzle, uint32_t l2_promotion, uint32_t oob_fill);

/// The driver's cuTensorMapEncodeTiled, or null (no driver, or one older than CUDA 12.0).
EncodeTiledFn driver_encode_tiled();

/// Encoded tensor maps, per argument set (launches that repeat their arguments reuse the map).
class TensorMapCache {
 public:
  /// The map of `args`, encoded by `encode` the first time. Throws a Runtime error naming the
  /// kernel and `what` (the parameter) when the driver refuses it, or when `encode` is null
  /// ("cuTensorMapEncodeTiled is missing: the driver is older than CUDA 12.0").
  EncodedTensorMap get(const TensorMapArgs& args, EncodeTiledFn encode, const std::string& kernel,
                       const std::string& what);
  size_t size() const;
  /// Entries kept at most: past it the cache starts over (maps of buffers long freed would
  /// otherwise pile up in a program that allocates per launch).
  static constexpr size_t kMaxEntries = 4096;

 private:
  mutable std::mutex mu_;
  std::map<TensorMapArgs, EncodedTensorMap> maps_;
};

/// Writes every tensor map of a launch into its slot of the parameter block (slots after the
/// user's parameters, as ir::param_layout(types, maps) lays them out).
void write_tensor_maps(const std::vector<ir::TensorMapParam>& maps, std::span<std::byte> params,
                       const ir::ParamLayout& layout, const std::vector<std::string>& names,
                       const std::string& kernel, TensorMapCache& cache, EncodeTiledFn encode);

/// Checks, when a kernel is loaded, that `layout` ends with one slot per map of `maps` (128
/// bytes, 64-byte aligned, after at least one user parameter: the map's base pointer) and that
/// every map's parameters are user parameters (the base a pointer slot of 8 bytes); a Runtime
/// error naming the kernel and the map otherwise (an artifact whose maps and layout disagree).
void check_tensor_map_slots(const std::vector<ir::TensorMapParam>& maps,
                            const ir::ParamLayout& layout, const std::string& kernel);

/// A kernel's tensor maps as its launches encode them: the maps, the names of its parameters
/// (for errors; may be shorter than the layout) and its name.
struct LaunchTensorMaps {
  std::vector<ir::TensorMapParam> maps;  ///< in slot order (the block's last slots)
  std::vector<std::string> names;        ///< the user's parameters, by index
  std::string kernel;                    ///< the kernel's name
};

/// The parameter block a launch passes to the driver: `params` itself where `k` has no maps (no
/// copy, no allocation), else `copy` (resized to `params`' size, reused across launches by the
/// caller) holding `params` with every map encoded (through `cache`, by `encode`) into its slot.
/// The caller's block stays as it was.
std::span<const std::byte> block_with_tensor_maps(const LaunchTensorMaps& k,
                                                  std::span<const std::byte> params,
                                                  const ir::ParamLayout& layout,
                                                  std::vector<std::byte>& copy,
                                                  TensorMapCache& cache, EncodeTiledFn encode);

}  // namespace tessera::rt::cuda
