/// \file The options of one compile, which ride with a launch's grid (`kernel[{grid, {.num_warps =
/// 8}}]`): declared once, read by the lowering, the targets and the runtime's caches.
#pragma once

namespace tessera {

struct CompileOptions {
  int num_warps = 4;   ///< 32 x num_warps threads per program (workgroup) on every target; a
                       ///< power of two in 1..32 (else the launch is an Argument error)
  int num_stages = 3;  ///< software-pipelining depth of loops that load the operands of a dot
  /// At most this many registers per thread (Triton's `maxnreg`; PTX `.maxnreg`), so that more
  /// programs fit on a multiprocessor at once; 0: the code generator's choice. Targets without
  /// such a limit (SPIR-V, the interpreters) ignore it. 0 or 16..255 (else an Argument error).
  int maxnreg = 0;
  /// Debug mode: every global load, store and atomic is checked against the buffer its pointer
  /// came from (core/passes/bounds.h), a violation is a DeviceFault. On at every launch with
  /// TESSERA_DEBUG=1, and always on the host and simt devices.
  bool debug = false;
  /// Floating-point contraction (Triton's `enable_fp_fusion`): an f32 or f64 product whose only
  /// use is a sum or difference is computed with it as one fused multiply-add, rounded once
  /// (core/passes/contract.h), on every target whose fma rounds once (Cap::FusedFma: PTX,
  /// NVIDIA's Vulkan, the interpreters; not lavapipe). Off (the default, unlike Triton's: on the
  /// H200 it made the layer-norm rows 6-16 % slower, docs/performance.md): every product is
  /// rounded before its sum.
  bool fp_fusion = false;
  bool operator==(const CompileOptions&) const = default;
};

}  // namespace tessera
