/// \file The SPIR-V target: a SIMT-stage function (core/ir/simt.h) as a SPIR-V 1.6 compute module
/// for Vulkan 1.3, validated and optimized in-process with SPIRV-Tools.
///
/// The module's contract with the Vulkan runtime (runtime/vulkan):
///  - One GLCompute entry point named after the kernel, `LocalSize (threads, 1, 1)`. The pipeline
///    must require the subgroup size the kernel was lowered for (Artifact::subgroup) with full
///    subgroups; lane_id is SubgroupLocalInvocationId and subgroup_id is SubgroupId.
///  - No descriptors. The parameters are the packed block of core/ir/abi.h followed, at
///    Artifact::grid_offset, by three u32 holding the logical grid (x, y, z); Artifact::param_bytes
///    is the whole size. When it fits in the target's push constants the block *is* the push
///    constant range (offset 0); otherwise (Artifact::params_by_address) the push constants hold
///    one u64: the device address of a buffer holding the block (8-byte aligned).
///  - Pointers are 64-bit buffer device addresses. Every access is through a PhysicalStorageBuffer
///    pointer with `Aligned N`, N the alignment the SIMT IR proved.
///  - The dispatched grid may be folded (lavapipe allows 65535 workgroups per dimension): the
///    linear workgroup index is x + y*nx + z*nx*ny over the dispatched grid, workgroups whose
///    index reaches gx*gy*gz return at once, and program_id(0, 1, 2) = (i % gx, i / gx % gy,
///    i / (gx*gy)). The logical grid's product must fit in 32 bits.
///
/// Numerics, where Vulkan leaves freedom (the module asks for what it can):
///  - Float adds, subtracts and multiplies carry NoContraction (the IR forbids FMA contraction);
///    `fma` is GLSL.std.450 Fma, which Vulkan lets a driver round twice (lavapipe does; NVIDIA
///    fuses). Division and sqrt have Vulkan's precision (2.5 ulp for f32 division), not PTX's
///    correctly rounded `.rn` forms; f32 division scales divisors above 2^126 first, beyond which
///    Vulkan leaves it undefined (NVIDIA returns 0 for 3.4e38 / 3.4e38); denormals may be flushed.
///  - exp and exp2 (f32) reduce the argument to |r| <= 1/2 and scale by 2^k exactly, so Exp's
///    3 + 2|x| ulp bound becomes a few ulp everywhere.
///  - `rem` on floats is C's fmod, exactly (OpFRem is not: it may be x - y * trunc(x / y)).
///  - f16 division, remainder and math functions are computed in f32 and rounded once; f64 exp,
///    exp2, log, log2, log1p, sin, cos, tanh and erf (GLSL.std.450 has no 64-bit forms) come
///    from the math library of targets/math, as do f32 sin, cos, log1p and the libdevice
///    functions expm1, log10, sinh, cosh, asin, acos, atan, cbrt, erfinv, pow, atan2 and hypot at
///    every width (GLSL Pow and Atan2 are not accurate on every driver) (math_backend.cpp; the PTX
///    target's bounds, ptx.h, where OpFDiv rounds correctly as lavapipe's does; a driver at
///    Vulkan's 2.5-ulp f32 division may add about an ulp to atan, asin, acos, sinh and cbrt). Its
///    fma is GLSL Fma where the target has fused_fma, else built from exact products. sin and cos
///    reduce huge arguments exactly (Payne-Hanek).
///  - tanh uses an odd polynomial below |x| = 0.625, where GLSL's exp-based Tanh cancels, and
///    clamps |x| to 10.
///  - erf (f32, GLSL has none): x * P(x^2) below |x| = 1, sign(x) * (1 - exp(-x^2) * Q(|x|)) up to
///    3.92 and +-1 beyond; relative error below 2e-7 when Exp meets Vulkan's bound.
///  - bf16 has no SPIR-V type: it is stored as u16 and held in f32 registers whose values are
///    always representable in bf16; every bf16 result is rounded to nearest even exactly as the
///    tile interpreter rounds (NaN stays NaN), fma and conversions from wide integers and f64
///    included (through round-to-odd intermediates).
///  - The interpreter's definitions of cases the IR leaves undefined are kept, so results agree
///    across targets: x / 0 == 0, x % 0 == x, INT_MIN / -1 wraps (the integer remainder is
///    a - (a / b) * b: NVIDIA's driver computes OpSRem as unsigned); shifts by >= the bit width
///    give 0 (or the sign fill); float -> int saturates and maps NaN to 0; constants take the
///    interpreter's value of their attribute; shuffle "up"/"down" past the subgroup give the
///    caller's own value (a negative distance reads the other way).
///  - Driver bugs named by a target::Quirk are worked around where the target has it:
///    narrow_negate_unwrapped (NVIDIA): 8/16-bit integer negation (neg, abs, x / -1) is done in
///    32 bits and wrapped by OpBitFieldSExtract/UExtract before OpSConvert/UConvert back;
///    special_constant_folding (lavapipe): a constant +-0, +-inf or NaN operand of float
///    arithmetic, a comparison or fma is `num_programs(0) == 0 ? 1.5 : c`, so the driver cannot
///    fold `x * 0` to 0 or `0 / x` to 0; wide_compare_folding (lavapipe): the constant operand
///    of a signed 64-bit <, <=, > or >= is `num_programs(0) == 0 ? ~c : c`, since the driver
///    folded `x.to(int64) < 3` of a 32-bit x to false (one uniform compare and select).
///
/// Atomics use the native instruction where there is one (32/64-bit integers; f32 add when the
/// target has float_atomic_add); every other case (float min/max, whose NaN and signed-zero
/// rules SPV_EXT_shader_atomic_float_min_max leaves to the driver; f64, f16, bf16, 8/16-bit
/// integers, f32 add without the capability) is a compare-and-swap loop on the bits, on the
/// aligned 32-bit word around 8/16-bit elements. Its atomics are relaxed and fences before and
/// after the loop give the order: lavapipe (Mesa 22.3) loses updates when an atomic or fence with
/// ordering semantics runs in a loop whose trip count differs between invocations, so user-written
/// spin loops with ordered atomics misbehave there (relaxed ones work). Cache hints on loads are
/// ignored.
///
/// Cooperative matrices are SPV_KHR_cooperative_matrix types of subgroup scope (f16, f32, i8 and
/// i32 components; i8 x i8 + i32 multiplies are signed). Their loads and stores take a pointer to
/// the shared buffer's element at the IR's index, and the IR's stride, with NonPrivatePointer as
/// every shared access has: a shared buffer that a coopmat op touches stays an array of scalars.
/// Such a module is neither validated nor optimized (SPIRV-Tools 2023.1 predates the extension):
/// see uses_cooperative_matrix().
///
/// Faults (target::FaultWords, Artifact::fault_offset and faults): a module with an `assert`, and
/// every module for a target with a loop_limit, takes a u64 fault-record address and a u32 launch
/// tag after the grid words. A failing assert's first invocation claims the record and fills it,
/// and the invocation runs on (no trap). On a loop_limit target (lavapipe) every loop counts its
/// passes as the driver does (emit_fault.cpp) and the first loop that reached the limit while it
/// would go on is reported at the kernel's end; such modules are not optimized (counts_loops()).
///
/// Prints (Artifact::print_offset and prints): a module with a `print` takes a u64 print-buffer
/// address, a u32 capacity in records and a u32 launch tag after the grid (and fault) words; each
/// print appends an Artifact::PrintRecord (emit_print.cpp), which the runtime formats.
///
/// Refused (tessera::Error, ErrorKind::Unsupported, naming the kernel): dtypes the target lacks
/// (Target::supports_dtype), 64-bit atomics without int64 atomics, shuffles without
/// subgroup_shuffle, a `print` of a tile of rank above 4, more threads or shared memory than the
/// target allows,
/// a subgroup size other than the target's, targets without buffer device address, cooperative
/// matrices without the coopmat capability, matrix types and multiplies outside the target's
/// matrix shapes, and bf16 matrices (they would need SPV_KHR_bfloat16).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ir.h"
#include "core/target/artifact.h"
#include "core/target/target.h"

namespace tessera::spirv {

/// Neither applies to a module that uses_cooperative_matrix().
struct EmitOptions {
  bool optimize = true;  ///< run spirv-opt's performance passes (then validate again)
  bool validate = true;  ///< validate with SPIRV-Tools (vulkan1.3 environment)
};

/// Emits `fn` (ir::is_simt) for `target`. Throws tessera::Error: Unsupported naming the feature
/// and the kernel when the target lacks something the kernel needs; Internal when SPIRV-Tools
/// rejects what was emitted (the validator's message and the offending instruction).
target::Artifact emit(const ir::Function& fn, const target::Target& target,
                      const EmitOptions& options = {});

/// "" if `words` is a valid SPIR-V module for Vulkan 1.3; else the validator's message followed by
/// the offending instruction's disassembly. A module that uses_cooperative_matrix() gets
/// kCooperativeMatrixNote: the validator cannot read it.
std::string validate(const std::vector<uint32_t>& words);
/// spirv-opt's performance passes for Vulkan 1.3 (`kernel` names the module in errors); an
/// optimizer failure is an internal error, and so is a module that uses_cooperative_matrix().
std::vector<uint32_t> optimize(const std::vector<uint32_t>& words, std::string_view kernel);
/// The module as text (SPIRV-Tools' disassembly, with friendly names). A module that
/// uses_cooperative_matrix() starts with a comment line holding kCooperativeMatrixNote, and its
/// SPV_KHR_cooperative_matrix instructions are printed by Tessera in SPIRV-Tools' manner.
std::string disassemble(const std::vector<uint32_t>& words);

/// Does the module declare the CooperativeMatrixKHR capability (or SPV_NV_tensor_addressing's or
/// SPV_NV_cooperative_matrix2's TensorAddressingNV, CooperativeMatrixTensorAddressingNV)?
/// SPIRV-Tools 2023.1 (Debian 12) predates these extensions: emit() and targets::emit() neither
/// validate nor optimize such a module, which goes to the driver as emitted.
bool uses_cooperative_matrix(const std::vector<uint32_t>& words);

/// Does the target have a loop limit (Target::loop_limit, lavapipe), so that kernels count their
/// loops' passes? Such modules are validated but not optimized: the checks at the end of a loop
/// body must stay there, and spirv-opt merges a body's last block into the continue construct,
/// which lavapipe runs at the start of the next pass (too late when it cut the loop at the end of
/// this one). lavapipe optimizes the module itself (NIR, LLVM).
inline bool counts_loops(const target::Target& t) {
  return t.loop_limit > 0;
}
inline constexpr std::string_view kLoopCountingNote =
    "the target counts loop passes (loop_limit): spirv-opt would move the counts";
inline constexpr std::string_view kCooperativeMatrixNote =
    "SPIR-V with SPV_KHR_cooperative_matrix: not validated, not optimized: SPIRV-Tools 2023.1 "
    "predates the extension";

}  // namespace tessera::spirv
