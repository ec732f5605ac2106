/// \file The target description: what the lowering may ask of a device. A value type, printable
/// and parseable, filled from a live device or from a named profile ("vulkan-lavapipe",
/// "vulkan-nvidia", "cuda-sm_80", "cuda-sm_90"). Passes ask it questions (subgroup size, shared
/// memory, capabilities); nothing in core/ asks which backend runs.
///
/// Text form (one line, wrapped here):
///   vulkan-lavapipe{isa=spirv1.6, subgroup=8, threads=256, shared=32768, push=128,
///                   grid=65535x65535x65535, caps=int64+int8+int16+fp16+fp64+subgroup_shuffle+
///                   float_atomic_add+int64_atomics+bda+inf_nan_preserve, matrix=,
///                   loops=65535, quirks=special_constant_folding+wide_compare_folding}
/// (`wgmatrix=32x16x16:f16*f16+f32@128|...`, the workgroup-scope shapes, follows `matrix=` on a
/// target that has them.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../ir/types.h"

namespace tessera::target {

/// Capability bits, one row each: enum name and text. Each is read by a pass or an emitter (a
/// capability nothing reads is noise in every target's text: remove it). New rows go last: the
/// bits are positions in this list.
///  - CooperativeMatrix2: VK_NV_cooperative_matrix2 is enabled on the device (opt-in:
///    TESSERA_COOPMAT2=1, runtime/vulkan/physical.h): workgroup-scope cooperative matrices with
///    flexible dimensions and tensor-layout loads. Such a target's max_shared_bytes is the
///    device's limit less the driver's reservation for workgroup-scope matrices.
///  - DependentLaunch (sm_90+, PTX `griddepcontrol`): every kernel waits at its entry for the
///    grid before it in its stream (its completion and its writes), then lets the grid after it
///    be scheduled; the runtime launches such kernels with programmatic stream serialization, so
///    a kernel's launch overlaps the end of the one before (Artifact::dependent_launch).
#define TESSERA_CAPS(X)                    \
  X(Int64, "int64")                        \
  X(Int8, "int8")                          \
  X(Int16, "int16")                        \
  X(Fp16, "fp16")                          \
  X(Fp64, "fp64")                          \
  X(SubgroupShuffle, "subgroup_shuffle")   \
  X(FloatAtomicAdd, "float_atomic_add")    \
  X(Int64Atomics, "int64_atomics")         \
  X(BufferDeviceAddress, "bda")            \
  X(MmaSync, "mma_sync")                   \
  X(CpAsync, "cp_async")                   \
  X(Wgmma, "wgmma")                        \
  X(Tma, "tma")                            \
  X(CooperativeMatrix, "coopmat")          \
  X(FusedFma, "fused_fma")                 \
  X(InfNanPreserve, "inf_nan_preserve")    \
  X(DenormPreserve32, "denorm_preserve32") \
  X(IeeeMinMax, "ieee_minmax")             \
  X(NanMinMax, "nan_minmax")               \
  X(CooperativeMatrix2, "coopmat2")        \
  X(DependentLaunch, "dependent_launch")

enum class Cap : uint8_t {
#define X(name, text) name,
  TESSERA_CAPS(X)
#undef X
};

std::string_view cap_name(Cap c);
std::optional<Cap> parse_cap(std::string_view text);

/// Driver bugs that the lowering works around, one row each: enum name and text. Each row's
/// comment says which driver, what it gets wrong where its SPIR-V is right, and how it was found;
/// the runtime sets them from the driver id (runtime/vulkan/physical.cpp), profiles of that
/// driver carry them, and a conformance case in tests/conformance/drivers.cpp guards each.
///  - NarrowNegateUnwrapped (NVIDIA's proprietary Vulkan driver): OpSNegate on an 8-bit integer
///    leaves the 32-bit register unwrapped, so a later widening sees it: `(-a).to(int32)` gives
///    128 for int8 a = -128 (OpSNegate then OpSConvert; CUDA, lavapipe and the interpreters give
///    -128). Found by `tessera fuzz` on an H200. The emitter negates 8- and 16-bit integers in 32
///    bits and wraps the result explicitly (OpBitFieldSExtract or UExtract) before narrowing.
///  - SpecialConstantFolding (Mesa's lavapipe, 22.3): float arithmetic with a constant operand
///    that is +-0, +-inf or NaN is folded as if no inf, NaN or -0 existed, despite
///    SignedZeroInfNanPreserve and NoContraction: x * 0 gives 0 for inf and NaN (and +0 for -x),
///    0 / x gives 0 for x = 0, x + 0 gives -0 for -0, x / 0 gives NaN (f32) or 0 (f16). Found as
///    "f16 0/0 gives 0" by `tessera fuzz` on lavapipe, narrowed with conformance probes. The
///    emitter makes such constants opaque: selected by a condition on the launch's grid that
///    never holds, so the driver cannot fold them.
///  - NarrowFloatUnrounded (NVIDIA's proprietary Vulkan driver): an f32 value rounded to f16 and
///    widened back keeps its f32 value (f16 sqrt, computed in f32 and rounded, widened to f32 gave
///    1.73205078 for sqrt(3), not f16's 1.73242188; conformance driver/f16_nan on an H200, driver
///    580). ptxas also negates 8/16-bit integers unwrapped: the CUDA profiles carry
///    NarrowNegateUnwrapped, and the PTX emitter wraps with `bfe`. The SPIR-V emitter passes each
///    f16 rounding's bits through an OR with a zero the driver cannot see (the grid condition).
///  - WideCompareFolding (Mesa's lavapipe, 22.3): a signed ordering compare of a 32-bit integer
///    sign-extended to 64 bits against a 64-bit constant that fits in 32 bits is decided as if the
///    value were above the constant: `x.to(int64) < 3` and `<= 3` gave false, `> 3` and `>= 3`
///    true, for every x (-5, 0, 3, 100; `< -1`, `< 0` and `< 1` alike). OpSConvert then
///    OpSLessThan with an OpConstant: correct SPIR-V, miscompiled with and without spirv-opt.
///    Equality, unsigned compares (u32 -> u64), i16 -> i64, i64 loads, a non-constant operand and
///    a constant beyond 32 bits are right. Found by `x.to(int64) < 3` giving 0 where host and simt
///    gave 1, narrowed with conformance probes. The emitter hides the constant operand of every
///    signed 64-bit <, <=, >, >= behind the grid condition, so the driver cannot see it.
///  - WideRoundUnrounded (Mesa's lavapipe, 22.3, with LLVM 15 at 256-bit vectors: an AMD EPYC
///    with AVX2 shows it, 128-bit vectors do not): GLSL RoundEven (and Trunc) of an f64 of
///    magnitude 2^24 or more returns it unrounded, as if 2^24 (f32's bound of the fractional
///    values) were f64's too. sin and cos of f64 in [2^24, 2^30) (their Cody-Waite quadrant,
///    rint(x 2/pi)) came out grossly wrong (conformance math/sin_huge/f64, 2026-12-05); Floor and
///    Ceil are right. The math library rounds f64 by adding and subtracting 2^52 instead.
#define TESSERA_QUIRKS(X)                               \
  X(NarrowNegateUnwrapped, "narrow_negate_unwrapped")   \
  X(SpecialConstantFolding, "special_constant_folding") \
  X(NarrowFloatUnrounded, "narrow_float_unrounded")     \
  X(WideCompareFolding, "wide_compare_folding")         \
  X(WideRoundUnrounded, "wide_round_unrounded")

enum class Quirk : uint8_t {
#define X(name, text) name,
  TESSERA_QUIRKS(X)
#undef X
};

std::string_view quirk_name(Quirk q);
std::optional<Quirk> parse_quirk(std::string_view text);

/// One supported cooperative-matrix (tensor-core) shape: A[MxK] x B[KxN] + C[MxN].
struct MatrixShape {
  int m = 0, n = 0, k = 0;
  ir::DType a = ir::DType::f16, b = ir::DType::f16, c = ir::DType::f32;
  bool operator==(const MatrixShape&) const = default;
  std::string str() const;  ///< "16x16x16:f16*f16+f32"
};

/// One workgroup-scope cooperative-matrix shape of VK_NV_cooperative_matrix2: matrices whose M,
/// N and K are any multiples of the granularity's, held by a workgroup of exactly `invocations`
/// threads (num_warps x 32 on the dot plan's side).
struct WorkgroupShape {
  MatrixShape granularity;
  int invocations = 0;
  bool operator==(const WorkgroupShape&) const = default;
  std::string str() const;  ///< "32x16x16:f16*f16+f32@128"
};

struct Target {
  std::string name = "generic";   ///< profile or device name
  std::string isa = "none";       ///< "ptx", "spirv1.6", "none" (interpreters): for emitters only
  int sm = 0;                     ///< CUDA compute capability x 10 (90 for sm_90), else 0
  bool sm_arch_specific = false;  ///< sm_90a
  int subgroup_size = 32;
  int max_threads = 1024;  ///< per workgroup / block
  int64_t max_shared_bytes = 49152;
  int push_constant_bytes = 128;
  int64_t max_grid[3] = {2147483647, 65535, 65535};
  uint64_t caps = 0;
  std::vector<MatrixShape> matrix_shapes;
  /// The workgroup-scope shapes (only with Cap::CooperativeMatrix2: the device's flexible shapes
  /// of workgroup scope, runtime/vulkan/physical.h). Text: `wgmatrix=a|b`, printed only when set.
  std::vector<WorkgroupShape> workgroup_shapes;
  /// The most loop iterations one invocation may run in all before the driver ends its loops
  /// early without a word (0: no limit). Mesa's llvmpipe (lavapipe) stops every loop of an
  /// invocation once 65535 iterations have run, counting every loop together: a kernel
  /// counting to 100000 gets 65535. On such a target the SPIR-V counts iterations the same way
  /// and a launch that reaches the limit fails with a DeviceFault naming the loop
  /// (targets/spirv/spirv.h). Text: `loops=N`, printed only when set.
  int64_t loop_limit = 0;
  /// The driver bugs this device has (bits of Quirk). Text: `quirks=a+b`, printed only when set.
  uint64_t quirks = 0;

  bool has(Cap c) const { return (caps >> static_cast<int>(c)) & 1; }
  void set(Cap c, bool on = true);
  bool has(Quirk q) const { return (quirks >> static_cast<int>(q)) & 1; }
  void set(Quirk q, bool on = true);
  /// Can kernels use this dtype (fp16, fp64, int64 ... by their capabilities)? bf16 always:
  /// stored as 16 bits and computed in f32 where the device has no bf16 arithmetic.
  bool supports_dtype(ir::DType t) const;

  std::string str() const;
  bool operator==(const Target& o) const;
};

/// Parses Target::str()'s form, or a bare profile name. nullopt (with `error` set) on failure.
std::optional<Target> parse_target(std::string_view text, std::string* error = nullptr);
/// A named profile: "vulkan-lavapipe", "vulkan-nvidia", "vulkan-nvidia-coopmat2", "cuda-sm_80",
/// "cuda-sm_86", "cuda-sm_89", "cuda-sm_90", "cuda-sm_90a", "host".
std::optional<Target> profile(std::string_view name);
std::vector<std::string> profile_names();

}  // namespace tessera::target
