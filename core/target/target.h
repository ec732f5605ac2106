/// \file The target description: what the lowering may ask of a device. A value type, printable
/// and parseable, filled from a live device or from a named profile ("vulkan-lavapipe",
/// "vulkan-nvidia", "cuda-sm_80", "cuda-sm_90"). Passes ask it questions (subgroup size, shared
/// memory, capabilities); nothing in core/ asks which backend runs.
///
/// Text form (one line, wrapped here):
///   vulkan-lavapipe{isa=spirv1.6, subgroup=8, threads=256, shared=32768, push=128,
///                   grid=65535x65535x65535, caps=int64+int8+int16+fp16+fp64+subgroup_shuffle+
///                   float_atomic_add+int64_atomics+bda+inf_nan_preserve, matrix=}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/types.h"

namespace tessera::target {

/// Capability bits, one row each: enum name and text. Each is read by a pass or an emitter (a
/// capability nothing reads is noise in every target's text: remove it).
#define TESSERA_CAPS(X)                         \
  X(Int64, "int64")                             \
  X(Int8, "int8")                               \
  X(Int16, "int16")                             \
  X(Fp16, "fp16")                               \
  X(Fp64, "fp64")                               \
  X(SubgroupShuffle, "subgroup_shuffle")        \
  X(FloatAtomicAdd, "float_atomic_add")         \
  X(Int64Atomics, "int64_atomics")              \
  X(BufferDeviceAddress, "bda")                 \
  X(MmaSync, "mma_sync")                        \
  X(CpAsync, "cp_async")                        \
  X(Wgmma, "wgmma")                             \
  X(CooperativeMatrix, "coopmat")              \
  X(FusedFma, "fused_fma")                      \
  X(InfNanPreserve, "inf_nan_preserve")        \
  X(DenormPreserve32, "denorm_preserve32")     \
  X(IeeeMinMax, "ieee_minmax")                 \
  X(NanMinMax, "nan_minmax")

enum class Cap : uint8_t {
#define X(name, text) name,
  TESSERA_CAPS(X)
#undef X
};

std::string_view cap_name(Cap c);
std::optional<Cap> parse_cap(std::string_view text);

/// One supported cooperative-matrix (tensor-core) shape: A[MxK] x B[KxN] + C[MxN].
struct MatrixShape {
  int m = 0, n = 0, k = 0;
  ir::DType a = ir::DType::f16, b = ir::DType::f16, c = ir::DType::f32;
  bool operator==(const MatrixShape&) const = default;
  std::string str() const;  ///< "16x16x16:f16*f16+f32"
};

struct Target {
  std::string name = "generic";  ///< profile or device name
  std::string isa = "none";      ///< "ptx", "spirv1.6", "none" (interpreters): for emitters only
  int sm = 0;                    ///< CUDA compute capability x 10 (90 for sm_90), else 0
  bool sm_arch_specific = false; ///< sm_90a
  int subgroup_size = 32;
  int max_threads = 1024;        ///< per workgroup / block
  int64_t max_shared_bytes = 49152;
  int push_constant_bytes = 128;
  int64_t max_grid[3] = {2147483647, 65535, 65535};
  uint64_t caps = 0;
  std::vector<MatrixShape> matrix_shapes;

  bool has(Cap c) const { return (caps >> static_cast<int>(c)) & 1; }
  void set(Cap c, bool on = true);
  /// Can kernels use this dtype (fp16, fp64, int64 ... by their capabilities)? bf16 always:
  /// stored as 16 bits and computed in f32 where the device has no bf16 arithmetic.
  bool supports_dtype(ir::DType t) const;

  std::string str() const;
  bool operator==(const Target& o) const;
};

/// Parses Target::str()'s form, or a bare profile name. nullopt (with `error` set) on failure.
std::optional<Target> parse_target(std::string_view text, std::string* error = nullptr);
/// A named profile: "vulkan-lavapipe", "vulkan-nvidia", "cuda-sm_80", "cuda-sm_86",
/// "cuda-sm_89", "cuda-sm_90", "cuda-sm_90a", "host".
std::optional<Target> profile(std::string_view name);
std::vector<std::string> profile_names();

}  // namespace tessera::target
