/// \file The numbers of SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing (SPIR-V registry;
/// the opcodes and enumerants of SPIRV-Headers' unified1 grammar), in one place: Debian 12's
/// SPIRV-Headers and SPIRV-Tools (2023.1) predate both extensions, so spirv.hpp has none of these
/// and SPIRV-Tools can neither validate nor disassemble them (tools.cpp prints them itself).
/// Only what a workgroup-scope dot with tensor-layout loads needs is here: no reductions,
/// per-element operations, conversions, block loads or decode functions.
#pragma once

#include <cstdint>
#include <string_view>

#include <spirv/unified1/spirv.hpp>

namespace tessera::spirv::nv {

/// OpCooperativeMatrixLoadTensorNV/StoreTensorNV are SPV_NV_cooperative_matrix2's.
inline constexpr std::string_view kCooperativeMatrix2Extension = "SPV_NV_cooperative_matrix2";
/// The tensor layout and view types and their instructions are SPV_NV_tensor_addressing's.
inline constexpr std::string_view kTensorAddressingExtension = "SPV_NV_tensor_addressing";
inline constexpr auto kCapabilityCooperativeMatrixTensorAddressing =
    static_cast<spv::Capability>(5433);
inline constexpr auto kCapabilityTensorAddressing = static_cast<spv::Capability>(5439);

/// %r = OpCooperativeMatrixLoadTensorNV %type %pointer %object %layout <memory operand>
///      <tensor addressing operands> (both masks always present, 0 for none)
inline constexpr auto kOpCooperativeMatrixLoadTensor = static_cast<spv::Op>(5367);
/// OpCooperativeMatrixStoreTensorNV %pointer %object %layout <memory operand> <tensor operands>
inline constexpr auto kOpCooperativeMatrixStoreTensor = static_cast<spv::Op>(5368);
/// %t = OpTypeTensorLayoutNV %dim %clamp_mode (ids of u32 constants)
inline constexpr auto kOpTypeTensorLayout = static_cast<spv::Op>(5370);
/// %t = OpTypeTensorViewNV %dim %has_dimensions %p0 %p1 ... (ids of constants: u32, bool, u32s)
inline constexpr auto kOpTypeTensorView = static_cast<spv::Op>(5371);
/// %l = OpCreateTensorLayoutNV %type
inline constexpr auto kOpCreateTensorLayout = static_cast<spv::Op>(5372);
/// %l2 = OpTensorLayoutSetDimensionNV %type %l %dim0 %dim1 ... (one u32 id per dimension)
inline constexpr auto kOpTensorLayoutSetDimension = static_cast<spv::Op>(5373);
/// %l2 = OpTensorLayoutSetStrideNV %type %l %stride0 %stride1 ...
inline constexpr auto kOpTensorLayoutSetStride = static_cast<spv::Op>(5374);
/// %l2 = OpTensorLayoutSliceNV %type %l %offset0 %span0 %offset1 %span1 ...
inline constexpr auto kOpTensorLayoutSlice = static_cast<spv::Op>(5375);
/// %l2 = OpTensorLayoutSetClampValueNV %type %l %value
inline constexpr auto kOpTensorLayoutSetClampValue = static_cast<spv::Op>(5376);
/// %v = OpCreateTensorViewNV %type
inline constexpr auto kOpCreateTensorView = static_cast<spv::Op>(5377);
/// %v2 = OpTensorViewSetDimensionNV %type %v %dim0 %dim1 ...
inline constexpr auto kOpTensorViewSetDimension = static_cast<spv::Op>(5378);
/// %v2 = OpTensorViewSetStrideNV %type %v %stride0 %stride1 ...
inline constexpr auto kOpTensorViewSetStride = static_cast<spv::Op>(5379);
/// %v2 = OpTensorViewSetClipNV %type %v %row_offset %row_span %col_offset %col_span
inline constexpr auto kOpTensorViewSetClip = static_cast<spv::Op>(5382);

/// Tensor Clamp Mode (a tensor layout type's ClampMode): what a load reads outside the layout's
/// dimensions. Undefined: anything (the fast path, for tiles known to be in bounds).
enum class ClampMode : uint32_t {
  Undefined = 0,
  Constant = 1,  ///< the layout's clamp value (OpTensorLayoutSetClampValueNV; 0 by default)
  ClampToEdge = 2,
  Repeat = 3,
  RepeatMirrored = 4,
};

/// Tensor Addressing Operands (a mask after the memory operand of a tensor load or store).
inline constexpr uint32_t kTensorAddressingNone = 0x0;
inline constexpr uint32_t kTensorAddressingView = 0x1;  ///< followed by the tensor view's id
inline constexpr uint32_t kTensorAddressingDecodeFunc = 0x2;

}  // namespace tessera::spirv::nv
