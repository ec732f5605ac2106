/// \file The numbers of SPV_KHR_cooperative_matrix (SPIR-V registry, revision 10), in one place:
/// Debian 12's SPIRV-Headers (1.3.239) and SPIRV-Tools (2023.1) predate the extension, so
/// spirv.hpp has none of them and SPIRV-Tools can neither validate, optimize nor disassemble a
/// module that uses it (targets/spirv/tools.cpp prints these instructions itself).
#pragma once

#include <cstdint>
#include <string_view>

#include <spirv/unified1/spirv.hpp>

namespace tessera::spirv::khr {

inline constexpr std::string_view kCooperativeMatrixExtension = "SPV_KHR_cooperative_matrix";
inline constexpr auto kCapabilityCooperativeMatrix = static_cast<spv::Capability>(6022);

/// %t = OpTypeCooperativeMatrixKHR %component %scope %rows %columns %use (ids of u32 constants)
inline constexpr auto kOpTypeCooperativeMatrix = static_cast<spv::Op>(4456);
/// %r = OpCooperativeMatrixLoadKHR %type %pointer %layout %stride [memory operands]
inline constexpr auto kOpCooperativeMatrixLoad = static_cast<spv::Op>(4457);
/// OpCooperativeMatrixStoreKHR %pointer %object %layout %stride [memory operands]
inline constexpr auto kOpCooperativeMatrixStore = static_cast<spv::Op>(4458);
/// %r = OpCooperativeMatrixMulAddKHR %type %a %b %c [cooperative matrix operands]
inline constexpr auto kOpCooperativeMatrixMulAdd = static_cast<spv::Op>(4459);

/// SPV_KHR_bfloat16: bf16 is OpTypeFloat 16 with the BFloat16KHR encoding; bf16 cooperative
/// matrices need both capabilities.
inline constexpr std::string_view kBFloat16Extension = "SPV_KHR_bfloat16";
inline constexpr auto kCapabilityBFloat16Type = static_cast<spv::Capability>(5116);
inline constexpr auto kCapabilityBFloat16CooperativeMatrix = static_cast<spv::Capability>(5118);
inline constexpr uint32_t kFPEncodingBFloat16 = 0;

/// Cooperative Matrix Use (the type's Use operand).
enum class MatrixUse : uint32_t { A = 0, B = 1, Accumulator = 2 };
/// Cooperative Matrix Layout (a load's or store's MemoryLayout operand).
enum class Layout : uint32_t { RowMajor = 0, ColumnMajor = 1 };

/// Cooperative Matrix Operands (a literal mask on OpCooperativeMatrixMulAddKHR): integer
/// components are unsigned unless their bit is set.
inline constexpr uint32_t kMatrixASigned = 0x1;
inline constexpr uint32_t kMatrixBSigned = 0x2;
inline constexpr uint32_t kMatrixCSigned = 0x4;
inline constexpr uint32_t kMatrixResultSigned = 0x8;

}  // namespace tessera::spirv::khr
