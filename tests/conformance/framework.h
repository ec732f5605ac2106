/// \file The conformance suite's vocabulary: a Case (a kernel plus an independent host
/// reference), what it needs from a device, host and device arrays of any dtype, and the Context
/// a case runs in (device, seeded random numbers, poisoned outputs, checks against references).
///
/// A case body launches its kernel, downloads the results and calls ctx.check_*(). Every check
/// records its worst error; the first failing element is kept for the report. A case that
/// checks nothing fails: no case can pass without comparing something.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/target/target.h"
#include "runtime/tessera.h"
#include "tests/conformance/tolerances.h"

namespace tessera::conformance {

namespace tl = tessera::tl;

/// Device features a case may need; a device without one SKIPs the case naming it.
enum class Need : uint8_t {
  Int8,
  Int16,
  Int64,
  Fp16,
  Bf16,
  Fp64,
  FloatAtomicAdd,
  Int64Atomics,
  Print,     ///< device_print
  Assert,    ///< device_assert raising a device fault
  FusedFma,  ///< fma rounding once (Vulkan allows two roundings; lavapipe does that)
  Fp8,       ///< f8e4m3 / f8e5m2 (CUDA sm_90+ and the interpreters; no SPIR-V device)
  Ptx,       ///< PTX inline assembly, tl::inline_asm_elementwise (CUDA devices only)
};
std::string_view need_name(Need n);
/// The needs of computing in `t` (none for i1 and i32/u32/f32).
std::vector<Need> needs_of(DType t);
std::vector<Need> needs_of(std::initializer_list<DType> ts);

/// What the runner knows about a device.
struct DeviceFacts {
  std::string name;
  std::string kind;
  target::Target target;
  bool has(Need n) const;
  bool is_host() const { return kind == "host"; }
};

class Context;

struct Case {
  std::string name;  ///< "category/what/variant"; categories are the first path component
  std::vector<Need> needs;
  /// Non-empty: a device may lack this (a tessera::Error of kind Unsupported from it is a SKIP
  /// with its message, on any device but the host interpreter, which supports everything).
  std::string may_be_unsupported;
  std::function<void(Context&)> body;
};

/// Registers the cases of one category file.
using Registrar = void (*)(std::vector<Case>&);

// --- host arrays of any dtype -----------------------------------------------------------------

/// Elements of one dtype in host memory, read and written as numbers.
class HostArray {
 public:
  HostArray() = default;
  HostArray(DType t, size_t n);
  DType dtype() const { return dtype_; }
  size_t size() const { return n_; }
  size_t bytes() const { return bytes_.size(); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  uint64_t bits(size_t i) const;  ///< the raw bits, zero-extended
  void set_bits(size_t i, uint64_t b);
  int64_t i(size_t i) const;   ///< integers: sign- or zero-extended by the dtype
  uint64_t u(size_t i) const;  ///< integers: the bits as unsigned
  double f(size_t i) const;    ///< any dtype as a double (exact for floats)
  /// Stores an integer wrapped to the dtype (floats: converted as a double would round).
  void set_int(size_t i, int64_t v);
  /// Stores a double rounded to nearest even in the dtype (integers: must be integral).
  void set_f(size_t i, double v);

 private:
  DType dtype_ = DType::i32;
  size_t n_ = 0;
  std::vector<uint8_t> bytes_;
};

/// A device buffer with its dtype and element count.
struct DevArray {
  BufferBase buf;
  DType dtype = DType::i32;
  size_t n = 0;
};

// --- the context a case runs in -----------------------------------------------------------------

class Context {
 public:
  Context(Device device, const DeviceFacts& facts, uint64_t seed, bool quick);

  const Device& dev() const { return dev_; }
  const DeviceFacts& facts() const { return facts_; }
  std::mt19937_64& rng() { return rng_; }
  bool quick() const { return quick_; }
  /// `full` normally, `quick_size` under --quick (slow CI devices).
  int64_t size(int64_t full, int64_t quick_size) const { return quick_ ? quick_size : full; }

  // Random numbers (from the case's seed).
  int64_t uniform_int(int64_t lo, int64_t hi);  ///< inclusive
  double uniform(double lo, double hi);
  /// n random values of `t`: integers uniform over [lo, hi] (clamped to the dtype), floats
  /// uniform in [lo, hi) rounded to the dtype.
  HostArray random(DType t, size_t n, double lo, double hi);
  /// n random values over the dtype's whole range (floats: random signs, exponents in
  /// [-exp_range, exp_range], full mantissas; no NaN/inf).
  HostArray random_full(DType t, size_t n, int exp_range = 8);

  // Device memory.
  DevArray upload(const HostArray& h);
  /// A buffer whose elements are poison: NaN for floats, 0xAB bytes for integers, so elements a
  /// kernel fails to write never match a reference.
  DevArray poisoned(DType t, size_t n);
  HostArray download(const DevArray& d);
  /// The poison bits of one element of `t` (what poisoned() fills with).
  static uint64_t poison_bits(DType t);

  // Checks. `what` names the output ("out[dtype=f16, axis=1]"); a failure message names the
  // first failing element with its value and the reference.
  /// Bit-exact (any NaN matches any NaN).
  void check_exact(const std::string& what, const HostArray& got, const HostArray& want);
  /// Floats against fp64 references under `tol`; `scale` (optional, per element) replaces |ref|
  /// in the relative bound.
  void check_close(const std::string& what, const HostArray& got, const std::vector<double>& ref,
                   const Tol& tol, const std::vector<double>* scale = nullptr);
  /// Integers against exact 64-bit references (wrapped to the dtype by the caller).
  void check_ints(const std::string& what, const HostArray& got, const std::vector<int64_t>& ref);
  /// A condition that must hold (for facts that are not arrays).
  void expect(bool ok, const std::string& message);
  /// The device faulted (on purpose, as device_assert does, or not): the runner touches it no
  /// more and opens it afresh (a new process when isolated) for the next case, since a CUDA
  /// context keeps its fault.
  void device_spent() { device_spent_ = true; }
  bool is_device_spent() const { return device_spent_; }
  /// Elements [from, to) of `got` still hold poison (masked-off stores wrote nothing).
  void check_untouched(const std::string& what, const HostArray& got, size_t from, size_t to);

  // Results.
  int checks() const { return checks_; }
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  double max_error() const { return max_error_; }

 private:
  void fail(const std::string& message);

  Device dev_;
  DeviceFacts facts_;
  std::mt19937_64 rng_;
  bool quick_;
  int checks_ = 0;
  std::string failure_;
  double max_error_ = 0;
  bool device_spent_ = false;
};

/// Runs `f` with the process's stdout (file descriptor 1, so C stdio, iostreams and drivers'
/// printf buffers alike) redirected to a temporary file, and returns what was written.
std::string capture_stdout(const std::function<void()>& f);

/// Fails the case (a tessera::Error of kind User) when a traced value has the wrong dtype: used
/// inside kernels to check promotion, since a store would convert silently.
void expect_dtype(const tl::tensor& t, DType want, const std::string& what);

/// The value rounded to dtype `t` as the device rounds (nearest even; integers truncate).
double round_to(DType t, double v);
/// Units in the last place between a and b in dtype `t` (both finite); 0 when equal.
int64_t ulp_distance(DType t, double a, double b);

/// Every dtype, and the families cases iterate over.
extern const std::vector<DType> kAllDTypes;      ///< the 13 dtypes
extern const std::vector<DType> kNumericDTypes;  ///< all but i1
extern const std::vector<DType> kIntDTypes;      ///< i8..u64 (no i1)
extern const std::vector<DType> kFloatDTypes;    ///< f16 bf16 f32 f64

/// "f32", for case names.
std::string dname(DType t);

/// Calls `f(T{})` with the C++ element type of dtype `t` (bool, int8_t, ..., half, bfloat16,
/// float, double), for launching with scalars of a runtime-chosen dtype.
template <class F>
decltype(auto) with_ctype(DType t, F&& f) {
  switch (t) {
    case DType::i1:
      return f(bool{});
    case DType::i8:
      return f(int8_t{});
    case DType::i16:
      return f(int16_t{});
    case DType::i32:
      return f(int32_t{});
    case DType::i64:
      return f(int64_t{});
    case DType::u8:
      return f(uint8_t{});
    case DType::u16:
      return f(uint16_t{});
    case DType::u32:
      return f(uint32_t{});
    case DType::u64:
      return f(uint64_t{});
    case DType::f16:
      return f(half{});
    case DType::bf16:
      return f(bfloat16{});
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    case DType::f8e4m3:
      return f(float8_e4m3{});
    case DType::f8e5m2:
      return f(float8_e5m2{});
  }
  return f(int32_t{});
}

/// Element `i` of `a` as a C++ value of type T (T must be `a`'s element type).
template <class T>
T host_value(const HostArray& a, size_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return a.bits(i) != 0;
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return T::from_bits(static_cast<uint16_t>(a.bits(i)));
  } else if constexpr (std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>) {
    return T::from_bits(static_cast<uint8_t>(a.bits(i)));
  } else {
    T v;
    const uint64_t b = a.bits(i);
    std::memcpy(&v, &b, sizeof(T));
    return v;
  }
}

}  // namespace tessera::conformance
