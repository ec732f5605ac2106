/// \file The options of one compile, which ride with a launch's grid (`kernel[{grid, {.num_warps =
/// 8}}]`): declared once, read by the lowering, the targets and the runtime's caches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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
  /// Dots on workgroup-scope cooperative matrices (VK_NV_cooperative_matrix2): the dot plan
  /// (core/lower/dot_plan.cpp) reads it only on a target with Cap::CooperativeMatrix2 (Vulkan
  /// with TESSERA_COOPMAT2=1, or a profile that has it), and ignores it everywhere else. Off by
  /// default: the subgroup-scope plan stays the default until the H200 has measured both.
  bool coopmat2 = false;
  /// The programs of a matmul-like kernel's 2-D grid run in groups of 8 rows of the grid's first
  /// axis, for L2 reuse (core/passes/grouped_launch.h: which kernels, and why every program still
  /// runs once with its own ids). On by default; off keeps the hardware's order.
  bool grouped_launch = true;
  /// On a target with TMA (sm_90+), a rank-2 desc_store whose descriptor TMA can copy
  /// (lower::plan_tma) is written through shared memory and stored by TMA (a TMA-store
  /// epilogue), not as masked stores; every other target ignores it. Off by default until the
  /// H200 has measured it (docs/performance.md).
  bool tma_store = false;
  /// Programs per thread-block cluster along the grid's x axis: 1, 2, 4 or 8, and the grid's x a
  /// multiple of it (else the launch is an Argument error, on every device). On a target with
  /// clusters (sm_90+: Cap::Tma) consecutive programs along x run as one cluster, launched with
  /// cuLaunchKernelEx, and a TMA ring whose boxes agree across the cluster's programs copies them
  /// once for all of them (multicast; core/lower/lower_pipeline.cpp says when). Every other target
  /// runs the same grid without clusters: a cluster never changes a result.
  int cluster = 1;
  bool operator==(const CompileOptions&) const = default;
};

/// One field of CompileOptions as its text and binary forms see it. Every form (the artifact
/// cache's key, the kernel cache's hash, AOT entries and labels, TESSERA_CAPTURE's options line,
/// and the parsers of `tessera dump` and tessera_add_kernels) walks kOptionFields, so a new option
/// is its field above and its row here. (A new integer option also changes the AOT entry layout:
/// bump runtime/aot.cpp's magic. A new flag takes the next bit of the entry's flags word.)
struct OptionField {
  std::string_view name;          ///< as the text forms spell it: `name=value`
  int CompileOptions::* integer;  ///< the member of an integer option, else null
  bool CompileOptions::* flag;    ///< the member of an on/off option (written 0 or 1), else null
  bool always_shown;              ///< the short text form shows it at its default value too
  bool captured;                  ///< TESSERA_CAPTURE's options line records it (not debug)
  bool stored_inverted;           ///< AOT entries hold the flag's bit inverted (fp_fusion: entries
                                  ///< were first written while it was on by default;
                                  ///< grouped_launch: entries written before it decode as on)
};

/// The fields in the order every form lists them.
inline constexpr OptionField kOptionFields[] = {
    {"num_warps", &CompileOptions::num_warps, nullptr, true, true, false},
    {"num_stages", &CompileOptions::num_stages, nullptr, true, true, false},
    {"maxnreg", &CompileOptions::maxnreg, nullptr, false, true, false},
    {"debug", nullptr, &CompileOptions::debug, false, false, false},
    {"fp_fusion", nullptr, &CompileOptions::fp_fusion, false, true, true},
    {"coopmat2", nullptr, &CompileOptions::coopmat2, false, true, false},
    {"grouped_launch", nullptr, &CompileOptions::grouped_launch, false, true, true},
    {"tma_store", nullptr, &CompileOptions::tma_store, false, true, false},
    {"cluster", &CompileOptions::cluster, nullptr, false, true, false},
};

/// The value of option `f` in `o` (a flag as 0 or 1).
int64_t option_value(const CompileOptions& o, const OptionField& f);
/// Sets option `f` of `o` to `value` (a flag: value != 0).
void set_option(CompileOptions& o, const OptionField& f, int64_t value);
/// The row of the option called `name`; null when no option has that name.
const OptionField* find_option(std::string_view name);
/// Sets the option called `name`; false when no option has that name.
bool set_option(CompileOptions& o, std::string_view name, int64_t value);
/// "num_warps, num_stages, maxnreg, debug, fp_fusion, coopmat2, grouped_launch, tma_store,
/// cluster": the names, for error messages.
std::string option_names();

/// The text forms of CompileOptions, as space-separated `name=value` words.
enum class OptionsText {
  Every,    ///< every option ("num_warps=4 num_stages=3 maxnreg=0 debug=0 fp_fusion=0
            ///< coopmat2=0 grouped_launch=1 tma_store=0 cluster=1"): the artifact cache's key
  Short,    ///< num_warps and num_stages, the others only where not at their default: AOT
            ///< labels and tessera_add_kernels' specializations
  Capture,  ///< Short, less what a capture does not record: TESSERA_CAPTURE's options line
};
/// `o` in text form `form`.
std::string describe(const CompileOptions& o, OptionsText form);
/// Sets the options named by the `name=value` words of `text` (any form above); words that name
/// no option are left for the caller. False (and `error` set) for an option word whose value is
/// not an integer.
bool parse_options(std::string_view text, CompileOptions& o, std::string* error = nullptr);
/// A hash of every option (the kernel cache's in-memory key).
uint64_t options_hash(const CompileOptions& o);

}  // namespace tessera
