/// \file The kernel language's value handle: `tl::tensor`, a traced scalar or tile.
///
/// A kernel is a plain C++ function. While Tessera traces it, every `tl::tensor` names an SSA
/// value of the tile IR being built, and C++ expressions on tensors append ops. Tensor objects
/// are also the kernel's *variables*: the tracer keeps a list of the live ones, so that an IR loop
/// or branch can find which variables its body assigned (those become loop-carried values or
/// branch results, automatically).
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>

#include "../ir/ir.h"

namespace tessera::tl {

using ir::DType;
using ir::Shape;
/// Where a kernel-language call was written: every operation takes one as its last parameter,
/// defaulted to the caller's file:line, so that errors name the user's line.
using Here = std::source_location;

// Dtype names, as in Triton (tl.float32 ...), for x.to(), tl::full, tl::zeros and constants.
inline constexpr DType int1 = DType::i1;        ///< 1-bit boolean (comparisons, masks)
inline constexpr DType int8 = DType::i8;        ///< 8-bit signed integer
inline constexpr DType int16 = DType::i16;      ///< 16-bit signed integer
inline constexpr DType int32 = DType::i32;      ///< 32-bit signed integer
inline constexpr DType int64 = DType::i64;      ///< 64-bit signed integer
inline constexpr DType uint8 = DType::u8;       ///< 8-bit unsigned integer
inline constexpr DType uint16 = DType::u16;     ///< 16-bit unsigned integer
inline constexpr DType uint32 = DType::u32;     ///< 32-bit unsigned integer
inline constexpr DType uint64 = DType::u64;     ///< 64-bit unsigned integer
inline constexpr DType float16 = DType::f16;    ///< IEEE binary16 (host type tessera::half)
inline constexpr DType bfloat16 = DType::bf16;  ///< bfloat16 (host type tessera::bfloat16)
inline constexpr DType float32 = DType::f32;    ///< IEEE binary32
inline constexpr DType float64 = DType::f64;    ///< IEEE binary64 (where the device has fp64)
// fp8 (OCP FP8), Triton's names: storage and dot operands only; cast to f16/f32 to compute.
inline constexpr DType float8e4nv = DType::f8e4m3;  ///< e4m3fn, max 448 (tessera::float8_e4m3)
inline constexpr DType float8e5 = DType::f8e5m2;    ///< e5m2, max 57344 (tessera::float8_e5m2)

class Tracer;
class Operand;

/// One entry of an index list: `_` keeps a dimension, `None` inserts a size-1 dimension.
/// `x[{_, None}]` is Triton's `x[:, None]`.
struct Slice {
  bool new_axis;  ///< true: insert a size-1 dimension (None); false: keep one (`_`)
};
inline constexpr Slice _{false};    ///< keeps a dimension, Python's `:`
inline constexpr Slice None{true};  ///< inserts a size-1 dimension, Python's `None`

/// The braced index list of `x[{_, None}]`; it records the user's source location.
struct Index {
  /// Made implicitly from the braced list `{_, None}`.
  Index(std::initializer_list<Slice> s, Here l = Here::current()) : slices(s), loc(l) {}
  std::initializer_list<Slice> slices;  ///< one entry per result dimension kept or inserted
  Here loc;                             ///< where the index was written
};

/// A traced value. Its IR value lives in the module of the trace that made it, so a tensor is
/// usable only while that trace is the active one: one kept in a static, or captured from one
/// kernel's trace and used in another trace or after it, is a user error ("used outside the
/// trace that made it"), never a read of a finished trace's (perhaps freed) module.
class tensor {
 public:
  /// A variable without a value yet (`tl::tensor acc;`), given one by a later assignment.
  tensor() { attach(); }
  /// Wraps an IR value of the active trace (for Tessera's own operations).
  explicit tensor(ir::Value* value) : value_(value), trace_(value ? current_trace() : 0) {
    attach();
  }
  /// Another variable holding the same value.
  tensor(const tensor& o) : value_(o.value_), trace_(o.trace_) { attach(); }
  /// Gives this variable `o`'s value: inside tl::range, tl::if_ and tl::while_, assigning an
  /// outer variable makes it a loop-carried value or a branch result.
  tensor& operator=(const tensor& o) {
    value_ = o.value_;
    trace_ = o.trace_;
    return *this;
  }
  ~tensor() { detach(); }

  /// The IR value; a user error if it belongs to a trace other than the active one.
  ir::Value* value() const {
    check_trace(nullptr);
    return value_;
  }
  /// Whether the variable holds a value (false for a default-constructed tensor).
  bool defined() const { return value_ != nullptr; }
  /// A user error naming `loc` (when given) if the value belongs to a trace other than the
  /// active one (none active: only values made outside every trace are usable).
  void check_trace(const Here* loc, std::string_view op = "tensor") const {
    if (value_ && trace_ != current_trace()) stale(loc, op);
  }
  /// The IR type: dtype and shape (a scalar has rank 0).
  const ir::Type& type() const;
  /// The element dtype.
  DType dtype() const { return type().dtype; }
  /// The tile shape, empty for a scalar; known while tracing, like Triton's constexpr shapes.
  const Shape& shape() const { return type().shape; }
  /// The number of dimensions (0: a scalar).
  int rank() const { return type().rank(); }
  /// Whether this is a tile (rank >= 1) rather than a scalar.
  bool is_tile() const { return type().is_tile(); }

  /// Converts to another dtype (Triton's x.to(dtype)).
  tensor to(DType dtype, Here loc = Here::current()) const;
  /// Reinterprets the bits as another dtype of the same width.
  tensor bitcast(DType dtype, Here loc = Here::current()) const;
  /// Indexing with `_` and `None`: x[{_, None}] is x[:, None].
  tensor operator[](const Index& index) const;

  /// \name Compound assignment
  /// `x += y` is `x = x + y` (and so on): the result is a new value, which this variable then
  /// holds, with the same promotion and broadcasting as the binary operator.
  //@{
  tensor& operator+=(const Operand& rhs);
  tensor& operator-=(const Operand& rhs);
  tensor& operator*=(const Operand& rhs);
  tensor& operator/=(const Operand& rhs);
  tensor& operator%=(const Operand& rhs);
  tensor& operator&=(const Operand& rhs);
  tensor& operator|=(const Operand& rhs);
  tensor& operator^=(const Operand& rhs);
  tensor& operator<<=(const Operand& rhs);
  tensor& operator>>=(const Operand& rhs);
  //@}

  /// A tile is not a C++ bool: branch on it with tl::if_, or select with tl::where.
  explicit operator bool() const = delete;

 private:
  friend class Tracer;
  void attach();
  void detach();
  /// The serial number of the active trace (0: none); every trace has its own, never reused.
  static uint64_t current_trace();
  [[noreturn]] static void stale(const Here* loc, std::string_view op);

  ir::Value* value_ = nullptr;
  uint64_t trace_ = 0;  // current_trace() when value_ was made
  // Intrusive links in the tracer's list of live variables, and how many open IR scopes
  // (loops, branches) captured this variable.
  tensor* prev_ = nullptr;
  tensor* next_ = nullptr;
  Tracer* tracer_ = nullptr;
  int captures_ = 0;
};

/// An operand of a kernel-language operation: a tensor or a C++ number. Numbers are weakly
/// typed, as Python numbers are in Triton: `x_f16 * 2.0f` stays f16, `offs < 10` compares i32.
/// The implicit conversion records the user's source location, so operators know their line.
class Operand {
 public:
  /// What the operand holds.
  enum class Kind {
    Tensor,  ///< a traced tensor
    Int,     ///< a C++ integer (weakly typed)
    Float,   ///< a C++ floating-point number (weakly typed)
    Bool,    ///< a C++ bool
  };

  /// A traced tensor; a user error if it belongs to another trace.
  Operand(const tensor& t, Here loc = Here::current())
      : kind_(Kind::Tensor), tensor_(t), loc_(loc) {
    t.check_trace(&loc_);
  }
  /// A C++ integer or bool (a u64 above INT64_MAX is remembered as unsigned).
  template <std::integral T>
  Operand(T v, Here loc = Here::current()) : loc_(loc) {
    if constexpr (std::same_as<T, bool>) {
      kind_ = Kind::Bool;
      int_ = v ? 1 : 0;
    } else if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
      kind_ = Kind::Int;
      int_ = static_cast<int64_t>(v);
      unsigned64_ = v > static_cast<uint64_t>(INT64_MAX);
    } else {
      kind_ = Kind::Int;
      int_ = static_cast<int64_t>(v);
    }
  }
  /// A C++ floating-point number.
  template <std::floating_point T>
  Operand(T v, Here loc = Here::current())
      : kind_(Kind::Float), float_(static_cast<double>(v)), loc_(loc) {}

  Kind kind() const { return kind_; }                       ///< what the operand holds
  bool is_tensor() const { return kind_ == Kind::Tensor; }  ///< kind() == Kind::Tensor
  const tensor& as_tensor() const { return tensor_; }       ///< the tensor (Kind::Tensor)
  int64_t int_value() const { return int_; }                ///< the value (Int, Bool)
  bool unsigned64() const { return unsigned64_; }           ///< an Int above INT64_MAX (u64)
  double float_value() const { return float_; }             ///< the value (Float)
  const Here& loc() const { return loc_; }                  ///< where the operand was written

 private:
  Kind kind_;
  tensor tensor_;
  int64_t int_ = 0;
  bool unsigned64_ = false;
  double float_ = 0;
  Here loc_;
};

/// \name Operators
/// Arithmetic, bitwise and comparison operators on tensors and C++ numbers.
//@{
/// Elementwise, with numpy broadcasting and Triton's type promotion; comparisons yield i1.
/// Integer `/` and `%` follow C (truncation), like Triton's `//` and `%`; tl::fdiv divides as
/// floats. A user error (ErrorKind::User) names the operator's line on mismatched shapes or
/// dtypes.
tensor operator+(const Operand& a, const Operand& b);
tensor operator-(const Operand& a, const Operand& b);
tensor operator*(const Operand& a, const Operand& b);
tensor operator/(const Operand& a, const Operand& b);
tensor operator%(const Operand& a, const Operand& b);
tensor operator&(const Operand& a, const Operand& b);
tensor operator|(const Operand& a, const Operand& b);
tensor operator^(const Operand& a, const Operand& b);
tensor operator<<(const Operand& a, const Operand& b);
tensor operator>>(const Operand& a, const Operand& b);
tensor operator<(const Operand& a, const Operand& b);
tensor operator<=(const Operand& a, const Operand& b);
tensor operator>(const Operand& a, const Operand& b);
tensor operator>=(const Operand& a, const Operand& b);
tensor operator==(const Operand& a, const Operand& b);
tensor operator!=(const Operand& a, const Operand& b);
tensor operator-(const Operand& a);
tensor operator~(const Operand& a);
tensor operator!(const Operand& a);
//@}
/// `!t` for a tensor (an exact match, so the deleted bool conversion is not a candidate).
tensor operator!(const tensor& a);

}  // namespace tessera::tl
