/// \file The PTX target: a SIMT function to LLVM IR with NVVM intrinsics, LLVM's optimizer and its
/// NVPTX backend, giving PTX text that the CUDA driver JIT-compiles (runtime/cuda).
///
/// The kernel's parameters are the packed block of core/ir/abi.h, one PTX parameter per kernel
/// parameter: pointers as .u64, scalars in their dtype's width (i1 as one byte). PTX aligns each
/// parameter to its size, exactly as ir::param_layout does, so the runtime passes the block as
/// it is (CU_LAUNCH_PARAM_BUFFER_POINTER).
///
/// Shared buffers (`shared_<i>` attributes) live in one dynamic shared-memory arena laid out as
/// ir::shared_offsets says (16- or 1024-byte aligned); Artifact::shared_bytes is the arena's size,
/// which the launch passes as dynamic shared memory (opting in above 48 KiB).
///
/// Accuracy of the math functions against the exact value (targets/math/algorithms.h; f64 uses
/// the same algorithms with longer polynomials; f16 and bf16 compute in f32 and round once more):
///   sqrt, fma, floor, ceil, abs, fmod (rem): exact;  rsqrt: 1 / sqrt, <= 1 ulp
///   exp, exp2, log, log2, log1p: <= 1 ulp;  sin, cos, erf: <= 1.5 ulp (sin and cos over the
///   whole range: Payne-Hanek reduction beyond 105615 (f32) / 2^30 (f64));  tanh: <= 2.5 ulp.
///   cbrt: <= 1 ulp;  log10: <= 1.5;  expm1, cosh, atan: <= 2;  sinh, asin, acos: <= 2.5;
///   pow: <= 1;  atan2: <= 2.5;  hypot: <= 0.5;  erfinv: <= 2.5.
/// tests/targets/math measures these bounds on the CPU (the algorithms are IEEE operations only,
/// so the GPU computes the same bits; tests/runtime/cuda checks that on a GPU).
///
/// Device asserts: a failing thread records the message, its program and thread ids and the
/// element index in the device's fault record (host-mapped memory whose address the runtime
/// stores in the module's `kFaultRecordSymbol`), then executes `trap`. The launch fails; the
/// runtime reads the record and raises ErrorKind::DeviceFault naming the kernel and message.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/ir.h"
#include "core/target/artifact.h"
#include "core/target/target.h"

/// The PTX target's sources build with hidden visibility (LLVM must not leak); its API is exported.
#define TESSERA_PTX_API __attribute__((visibility("default")))

namespace tessera::ptx {

/// The PTX ISA version written in every module: accepted by CUDA 12.0+ drivers and ptxas 12/13
/// (and required for sm_90a).
inline constexpr int kPtxVersionMajor = 8;
inline constexpr int kPtxVersionMinor = 0;

/// Where a failing device assert leaves its story (host-mapped, written once per context: the
/// first failing thread wins `claimed`).
struct FaultRecord {
  uint32_t claimed = 0;      ///< 0 until a thread fails; then 1
  uint32_t program[3] = {};  ///< program id (ctaid) of the failing thread
  uint32_t thread = 0;       ///< thread index in the workgroup
  uint32_t rank = 0;         ///< how many of `index` are valid
  int32_t index[4] = {};     ///< the element index in the tile
  uint32_t num_values = 0;   ///< how many of `values` the assert reported
  uint32_t unused = 0;
  uint64_t values[3] = {};  ///< the assert's reported values (ir::AssertOp::values)
  /// "<heading> in kernel <kernel> at <file:line>: <message>", NUL-terminated, truncated; the
  /// message's `{k}` stand for `values` (ir::format_assert_message).
  char message[256] = {};
};
/// A module global (`.global .u64`) that holds the FaultRecord's device address; present only in
/// modules that contain asserts.
inline constexpr const char* kFaultRecordSymbol = "__tessera_fault_record";

/// The PTX symbol of a kernel named `name`: the name itself when it is a PTX identifier
/// ([A-Za-z_$][A-Za-z0-9_$]*); else (a template's `<float>`, a namespace's `::`) every other
/// character becomes `_` and `_t` + 8 hex digits of the name's FNV-1a hash follow, so that two
/// names differing only there stay apart (Artifact::symbol).
TESSERA_PTX_API std::string kernel_symbol(std::string_view name);

/// SIMT function -> LLVM IR (NVVM intrinsics) -> LLVM optimization -> NVPTX -> PTX text.
/// Throws Unsupported for what the target cannot run (a subgroup other than 32, an sm below 80).
/// With `llvm_ir`, also gives the optimized LLVM IR it compiled (TESSERA_DUMP=llvm).
TESSERA_PTX_API target::Artifact emit(const ir::Function& fn, const target::Target& target,
                                      std::string* llvm_ir = nullptr);
/// The LLVM IR (after optimization) that emit() compiles, for dumps (TESSERA_DUMP=llvm).
TESSERA_PTX_API std::string emit_llvm_ir(const ir::Function& fn, const target::Target& target);

}  // namespace tessera::ptx
