/// \file Kernels: a traced C++ kernel function, compiled once per device and specialization,
/// launched with a grid and arguments that are checked against its signature.
///
///   auto gelu = TESSERA_KERNEL(gelu_kernel, x, y, n, BLOCK);   // or tessera::Kernel(gelu_kernel)
///   gelu[{tessera::cdiv(n, 1024)}](x, y, n, 1024);              // grid, then arguments
///   gelu[{{gx, gy}, {.num_warps = 8}}](...);                   // options ride with the grid
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../core/lang/trace.h"
#include "backend.h"
#include "buffer.h"
#include "device.h"
#include "stream.h"

namespace tessera {

/// Ceiling division, for grid sizes.
constexpr uint64_t cdiv(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

/// A grid with its launch options and, optionally, a stream to launch on (default: the device's
/// default stream; class Stream says how the streams of a device are ordered).
struct LaunchConfig {
  Grid grid;                       ///< the number of programs along each axis
  LaunchOptions options;           ///< num_warps, debug, ...: part of the compiled kernel's key
  const Stream* stream = nullptr;  ///< the stream to launch on; null: the default stream
  /// Made implicitly from `{grid}`, `{grid, options}` or `{grid, options, &stream}`.
  LaunchConfig(Grid g, LaunchOptions o = {}, const Stream* s = nullptr)
      : grid(g), options(o), stream(s) {}
};

/// A launch argument with its C++ type erased.
struct KernelArg {
  /// What the C++ argument was.
  enum class Kind {
    Buffer,  ///< a Buffer<T> (any element type)
    Int,     ///< a signed integer or an enum value
    UInt,    ///< an unsigned integer
    Float,   ///< float, double, tessera::half or tessera::bfloat16
    Bool,    ///< a bool
    DType,   ///< a tl::DType (a compile-time dtype parameter)
  };
  Kind kind = Kind::Int;             ///< what the argument was
  BufferBase buffer;                 ///< the buffer (Kind::Buffer)
  ir::DType dtype = ir::DType::i32;  ///< buffer element dtype, or the C++ scalar's dtype
  int64_t i = 0;                     ///< the value (Int, UInt as two's complement, Bool, DType)
  double f = 0;                      ///< the value (Float)

  /// The argument for a C++ value; a type that is none of Kind's does not compile.
  template <class T>
  static KernelArg from(const T& value);
  std::string describe() const;  ///< "a buffer of f32 on host", "int 1024", ...
};

template <class T>
KernelArg KernelArg::from(const T& value) {
  KernelArg a;
  if constexpr (std::is_base_of_v<BufferBase, T>) {
    a.kind = Kind::Buffer;
    a.buffer = value;
    a.dtype = value.dtype();
  } else if constexpr (std::is_same_v<T, ir::DType>) {
    a.kind = Kind::DType;
    a.i = static_cast<int64_t>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    a.kind = Kind::Bool;
    a.dtype = ir::DType::i1;
    a.i = value ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                       std::is_same_v<T, bfloat16> || std::is_same_v<T, float8_e4m3> ||
                       std::is_same_v<T, float8_e5m2>) {
    a.kind = Kind::Float;
    a.dtype = tl::dtype_of<T>();
    a.f = static_cast<double>(value);
  } else if constexpr (std::is_enum_v<T>) {
    a.kind = Kind::Int;
    a.i = static_cast<int64_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    a.kind = std::is_signed_v<T> ? Kind::Int : Kind::UInt;
    a.dtype = tl::dtype_of<T>();
    a.i = static_cast<int64_t>(value);
  } else {
    static_assert(sizeof(T) == 0, "unsupported kernel argument type");
  }
  return a;
}

/// The type-independent part of a kernel: argument checking, specialization, caches, launch.
class KernelBase {
 public:
  /// A kernel called `name` (empty: learned from the first trace) whose parameters are
  /// `params`, named `param_names` in argument errors.
  KernelBase(std::string name, std::vector<std::string> param_names,
             std::vector<tl::ParamDesc> params);
  virtual ~KernelBase() = default;

  /// The kernel's name, as errors, caches and TESSERA_DUMP show it.
  const std::string& name() const { return name_; }
  /// The parameters' names ("x", "y", "n", "BLOCK"; "arg0"... when not given).
  const std::vector<std::string>& param_names() const { return param_names_; }

  /// Checks `args`, compiles (or reuses) the kernel for the device and launches it.
  void launch(const LaunchConfig& config, std::span<const KernelArg> args) const;
  /// The optimized tile IR of the specialization `args` select (for tools and tests).
  std::shared_ptr<const ir::Module> ir_for(std::span<const KernelArg> args) const;
  /// The tile IR as traced for `args` (what a launch compiles, and what TESSERA_CAPTURE writes).
  std::shared_ptr<const ir::Module> traced_for(std::span<const KernelArg> args) const;
  /// Number of distinct specializations traced so far (tests check caching with it).
  size_t traced_count() const;
  /// Number of distinct (device, specialization, options) compilations so far.
  size_t compiled_count() const;
  /// The parameters' descriptions (what arguments are checked against).
  const std::vector<tl::ParamDesc>& params() const { return params_; }
  /// The tile IR as traced for a specialization given directly (the ahead-of-time generator,
  /// runtime/aot_generator.h: it traces with no device and no buffers).
  std::shared_ptr<const ir::Module> traced_for_specs(const std::vector<tl::ArgSpec>& specs) const {
    return module_for(specs);
  }

 protected:
  friend class AotKernel;  // its JIT fallback compiles through another kernel's compile_for
  /// Traces the kernel function for one specialization (Kernel does, with its function).
  virtual std::unique_ptr<ir::Module> trace(const std::vector<tl::ArgSpec>& specs) const = 0;
  /// What a launch runs to get the kernel of a specialization not compiled before on `device`:
  /// the default traces it (TESSERA_CAPTURE writes it) and compiles it through the artifact cache
  /// (rt::compile_cached); AotKernel loads an artifact built ahead of time.
  virtual std::shared_ptr<const rt::CompiledKernel> compile_for(
      rt::DeviceImpl& device, const std::vector<tl::ArgSpec>& specs,
      const LaunchOptions& options) const;

 private:
  struct SpecHash {
    size_t operator()(std::span<const tl::ArgSpec> s) const;
    size_t operator()(const std::vector<tl::ArgSpec>& s) const {
      return (*this)(std::span<const tl::ArgSpec>(s));
    }
  };
  struct CompiledKey {
    rt::DeviceImpl* device;
    uint64_t serial;  ///< the device's serial: what is compared (the address can be reused)
    std::vector<tl::ArgSpec> specs;
    LaunchOptions options;
    bool operator==(const CompiledKey&) const = default;
  };
  /// A CompiledKey looked up without building one (no vector on the launch path).
  struct CompiledKeyView {
    rt::DeviceImpl* device;
    uint64_t serial;
    std::span<const tl::ArgSpec> specs;
    const LaunchOptions* options;
  };
  struct CompiledHash {
    using is_transparent = void;
    size_t operator()(const CompiledKey& k) const;
    size_t operator()(const CompiledKeyView& k) const;
  };
  struct CompiledEqual {
    using is_transparent = void;
    bool operator()(const CompiledKey& a, const CompiledKey& b) const { return a == b; }
    bool operator()(const CompiledKeyView& a, const CompiledKey& b) const;
    bool operator()(const CompiledKey& a, const CompiledKeyView& b) const { return (*this)(b, a); }
  };

  std::vector<tl::ArgSpec> check_and_specialize(std::span<const KernelArg> args) const;
  /// Checks `args` (an Argument error names the wrong one) and writes their specialization to
  /// `specs` (args.size() entries).
  void specialize(std::span<const KernelArg> args, std::span<tl::ArgSpec> specs) const;
  /// The device of the launch (the stream's, else the buffers'), checked against every buffer.
  rt::DeviceImpl* launch_device(const LaunchConfig& config, std::span<const KernelArg> args) const;
  /// The tile IR as traced for `specs` (traced once, then cached).
  std::shared_ptr<const ir::Module> module_for(const std::vector<tl::ArgSpec>& specs) const;
  /// Under TESSERA_CAPTURE=DIR: writes `traced` with `options` to DIR.
  void capture(const ir::Module& traced, const LaunchOptions& options) const;
  /// Writes the parameter block to `block` (compiled.params.size bytes, zeroed); with `debug`,
  /// each pointer's buffer follows (core/passes/bounds.h).
  void pack(const rt::CompiledKernel& compiled, std::span<const KernelArg> args, bool debug,
            std::span<std::byte> block) const;
  std::string param_label(size_t i) const;

  mutable std::string name_;  // learned from the first trace when not given
  std::vector<std::string> param_names_;
  std::vector<tl::ParamDesc> params_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::vector<tl::ArgSpec>, std::shared_ptr<const ir::Module>, SpecHash>
      traced_;
  // Entries are never erased, so a reference to one stays valid after the lock is released.
  using CompiledMap = std::unordered_map<CompiledKey, std::shared_ptr<const rt::CompiledKernel>,
                                         CompiledHash, CompiledEqual>;
  mutable CompiledMap compiled_;
  /// The entry of compiled_ the last launch used: a launch of the same specialization finds it
  /// without the lock or a hash (entries never move or change once inserted).
  mutable std::atomic<const CompiledMap::value_type*> last_compiled_{nullptr};
};

/// Splits "x, y, n, BLOCK" into names.
std::vector<std::string> split_param_names(std::string_view names);

/// A kernel: a C++ function of kernel-language parameters (tl::ptr, tl::i32, ... and
/// compile-time constants), traced and compiled on first launch per device and specialization.
/// `kernel[{grid}](args...)` launches it; see the file's example and TESSERA_KERNEL.
template <class... Params>
class Kernel : public KernelBase {
 public:
  using Fn = void (*)(Params...);  ///< the kernel function's type

  /// `name` defaults to the function's name (learned when first traced); `param_names` is the
  /// parameter list as written, "x, y, n, BLOCK", used in argument errors.
  explicit Kernel(Fn fn, std::string name = "", std::string_view param_names = "")
      : KernelBase(std::move(name), names_or_default(param_names),
                   tl::describe_params<Params...>()),
        fn_(fn) {}

  /// What `kernel[config]` returns: call it with the arguments to launch.
  class Launcher {
   public:
    /// `k` launched with `c`.
    Launcher(const Kernel* k, LaunchConfig c) : kernel_(k), config_(c) {}
    /// Checks `args` against the kernel's parameters (an Error of kind Argument names the wrong
    /// one), compiles the specialization if it is new, and enqueues the launch on the config's
    /// stream.
    template <class... Args>
    void operator()(const Args&... args) const {
      std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
      kernel_->launch(config_, std::span<const KernelArg>(erased.data(), erased.size()));
    }

   private:
    const Kernel* kernel_;
    LaunchConfig config_;
  };

  /// The launch with grid, options and stream `config`: `k[{grid}](args...)`.
  Launcher operator[](const LaunchConfig& config) const { return Launcher(this, config); }

  /// The optimized tile IR for these arguments.
  template <class... Args>
  std::shared_ptr<const ir::Module> ir(const Args&... args) const {
    std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
    return ir_for(std::span<const KernelArg>(erased.data(), erased.size()));
  }
  /// The tile IR as traced for these arguments (what a launch compiles).
  template <class... Args>
  std::shared_ptr<const ir::Module> traced(const Args&... args) const {
    std::array<KernelArg, sizeof...(Args)> erased{KernelArg::from(args)...};
    return traced_for(std::span<const KernelArg>(erased.data(), erased.size()));
  }

 protected:
  /// Traces the function for `specs`.
  std::unique_ptr<ir::Module> trace(const std::vector<tl::ArgSpec>& specs) const override {
    return tl::trace(fn_, name(), param_names(), specs);
  }

 private:
  static std::vector<std::string> names_or_default(std::string_view names) {
    std::vector<std::string> out = split_param_names(names);
    if (out.empty())
      for (size_t i = 0; i < sizeof...(Params); ++i) out.push_back("arg" + std::to_string(i));
    return out;
  }
  Fn fn_;
};

/// \name Deduction guides
//@{
/// `tessera::Kernel(fn)` takes its parameter types from the function.
template <class... Params>
Kernel(void (*)(Params...)) -> Kernel<Params...>;
template <class... Params>
Kernel(void (*)(Params...), std::string) -> Kernel<Params...>;
template <class... Params>
Kernel(void (*)(Params...), std::string, std::string_view) -> Kernel<Params...>;
//@}

}  // namespace tessera

namespace tessera::detail {
/// The kernel name TESSERA_KERNEL gives: the function as written, without the parentheses of
/// `(scale<float, 4>)`, with spaces collapsed and every qualifier dropped, also inside template
/// arguments (`(ns::scale<ns::T, 4>)` is "scale<T, 4>"), since the name must hold no "::".
inline std::string kernel_macro_name(std::string_view text) {
  while (text.size() >= 2 && text.front() == '(' && text.back() == ')')
    text = text.substr(1, text.size() - 2);
  auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string out;  // # has already made every run of white space one space
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      while (!out.empty() && word(out.back())) out.pop_back();
      for (++i; i + 1 < text.size() && text[i + 1] == ' ';) ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}
}  // namespace tessera::detail

/// A kernel named after its function, with its parameter names for argument errors:
/// `auto gelu = TESSERA_KERNEL(gelu_kernel, x, y, n, BLOCK);`
/// A template specialization whose arguments hold a comma is written in parentheses, as the
/// preprocessor would split it at that comma: `TESSERA_KERNEL((scale<float, 4>), x, y)` is the
/// kernel "scale<float, 4>"; one argument needs none (`TESSERA_KERNEL(scale<float>, x, y)`).
/// Qualifiers are dropped from the name (`ns::fn` is "fn").
#define TESSERA_KERNEL(fn, ...) \
  ::tessera::Kernel(fn, ::tessera::detail::kernel_macro_name(#fn), #__VA_ARGS__)
