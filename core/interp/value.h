/// \file Runtime values of the host interpreter (dense, row-major element buffers tagged with
/// dtype and shape) and the per-dtype traits that every op family's templated loops dispatch on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/ir/types.h"
#include "core/support/error.h"
#include "core/support/float16.h"
#include "core/support/float8.h"

namespace tessera::interp {

/// A scalar (empty shape) or a tile: numel() elements of elem_bytes() each, row-major. A pointer
/// is its 64-bit address; an i1 is one byte holding 0 or 1; f16/bf16/fp8 are their bit patterns.
struct RuntimeValue {
  ir::DType dtype = ir::DType::i32;
  bool is_ptr = false;
  ir::Shape shape;
  std::vector<std::byte> bytes;

  /// A zero-filled value of the given element type and shape.
  static RuntimeValue make(ir::DType dtype, bool is_ptr, ir::Shape shape);
  static RuntimeValue of_type(const ir::Type& type) {
    return make(type.dtype, type.is_ptr, type.shape);
  }

  int elem_bytes() const { return is_ptr ? 8 : ir::dtype_bytes(dtype); }
  int64_t numel() const { return static_cast<int64_t>(bytes.size()) / elem_bytes(); }
  /// The dtype whose traits describe the elements: pointers are handled as u64.
  ir::DType storage_dtype() const { return is_ptr ? ir::DType::u64 : dtype; }
  ir::Type type() const { return ir::Type{dtype, is_ptr, shape}; }

  std::byte* raw() { return bytes.data(); }
  const std::byte* raw() const { return bytes.data(); }
  template <class T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

/// Element `i` of a value read as a signed 64-bit integer (by the dtype's signedness; a pointer
/// gives its address). Internal error for float dtypes.
int64_t int_element(const RuntimeValue& v, int64_t i = 0);
/// Element `i` of a float or integer value as a double (exact for every float dtype).
double float_element(const RuntimeValue& v, int64_t i = 0);
/// A scalar of `dtype` holding `x` (wrapped to the dtype's width).
RuntimeValue int_scalar(ir::DType dtype, int64_t x);
/// A scalar of float `dtype` holding `x` rounded once, to nearest even (exact when `x` is a value
/// of the dtype).
RuntimeValue float_scalar(ir::DType dtype, double x);

// --- per-dtype traits -----------------------------------------------------------------------

/// Traits of one dtype: S is the storage type of an element; floats also convert to and from
/// double (exactly, and with one round-to-nearest-even respectively).
template <ir::DType D>
struct DT;

template <ir::DType D, class Storage, int Bits, bool Signed>
struct IntTraits {
  using S = Storage;
  static constexpr ir::DType kDType = D;
  static constexpr bool kFloat = false;
  static constexpr bool kNarrow = false;
  static constexpr bool kSigned = Signed;
  static constexpr int kBits = Bits;
};
template <>
struct DT<ir::DType::i1> : IntTraits<ir::DType::i1, uint8_t, 1, false> {};
template <>
struct DT<ir::DType::i8> : IntTraits<ir::DType::i8, int8_t, 8, true> {};
template <>
struct DT<ir::DType::i16> : IntTraits<ir::DType::i16, int16_t, 16, true> {};
template <>
struct DT<ir::DType::i32> : IntTraits<ir::DType::i32, int32_t, 32, true> {};
template <>
struct DT<ir::DType::i64> : IntTraits<ir::DType::i64, int64_t, 64, true> {};
template <>
struct DT<ir::DType::u8> : IntTraits<ir::DType::u8, uint8_t, 8, false> {};
template <>
struct DT<ir::DType::u16> : IntTraits<ir::DType::u16, uint16_t, 16, false> {};
template <>
struct DT<ir::DType::u32> : IntTraits<ir::DType::u32, uint32_t, 32, false> {};
template <>
struct DT<ir::DType::u64> : IntTraits<ir::DType::u64, uint64_t, 64, false> {};

template <ir::DType D, class Storage, int Bits, bool Narrow>
struct FloatTraits {
  using S = Storage;
  static constexpr ir::DType kDType = D;
  static constexpr bool kFloat = true;
  static constexpr bool kNarrow = Narrow;  ///< f16/bf16: stored as bits, computed in double
  static constexpr bool kSigned = true;
  static constexpr int kBits = Bits;
};
template <>
struct DT<ir::DType::f16> : FloatTraits<ir::DType::f16, uint16_t, 16, true> {
  static double to_double(S s) { return f16_to_double(s); }
  static S from_double(double d) { return f16_from_double(d); }
};
template <>
struct DT<ir::DType::bf16> : FloatTraits<ir::DType::bf16, uint16_t, 16, true> {
  static double to_double(S s) {
    uint32_t bits = static_cast<uint32_t>(s) << 16;  // bf16 is the top half of an f32
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  static S from_double(double d) { return bf16_from_double(d); }
};
template <>
struct DT<ir::DType::f32> : FloatTraits<ir::DType::f32, float, 32, false> {
  static double to_double(S s) { return s; }
  static S from_double(double d) { return static_cast<float>(d); }
};
template <>
struct DT<ir::DType::f64> : FloatTraits<ir::DType::f64, double, 64, false> {
  static double to_double(S s) { return s; }
  static S from_double(double d) { return d; }
};

template <>
struct DT<ir::DType::f8e4m3> : FloatTraits<ir::DType::f8e4m3, uint8_t, 8, true> {
  static double to_double(S s) { return f8e4m3_to_double(s); }
  static S from_double(double d) { return f8e4m3_from_double(d); }
};
template <>
struct DT<ir::DType::f8e5m2> : FloatTraits<ir::DType::f8e5m2, uint8_t, 8, true> {
  static double to_double(S s) { return f8e5m2_to_double(s); }
  static S from_double(double d) { return f8e5m2_from_double(d); }
};

/// Calls `f(DT<dtype>{})` and returns its result.
template <class F>
decltype(auto) dispatch(ir::DType dtype, F&& f) {
  using ir::DType;
  switch (dtype) {
    case DType::i1:
      return f(DT<DType::i1>{});
    case DType::i8:
      return f(DT<DType::i8>{});
    case DType::i16:
      return f(DT<DType::i16>{});
    case DType::i32:
      return f(DT<DType::i32>{});
    case DType::i64:
      return f(DT<DType::i64>{});
    case DType::u8:
      return f(DT<DType::u8>{});
    case DType::u16:
      return f(DT<DType::u16>{});
    case DType::u32:
      return f(DT<DType::u32>{});
    case DType::u64:
      return f(DT<DType::u64>{});
    case DType::f16:
      return f(DT<DType::f16>{});
    case DType::bf16:
      return f(DT<DType::bf16>{});
    case DType::f32:
      return f(DT<DType::f32>{});
    case DType::f64:
      return f(DT<DType::f64>{});
    case DType::f8e4m3:
      return f(DT<DType::f8e4m3>{});
    case DType::f8e5m2:
      return f(DT<DType::f8e5m2>{});
  }
  TESSERA_CHECK(false, "bad dtype ", static_cast<int>(dtype));
  return f(DT<DType::i32>{});
}

/// Calls `f(std::integral_constant<int, N>{})` for an element size N of 1, 2, 4 or 8 bytes, so
/// that byte-moving loops copy fixed-size elements.
template <class F>
void with_elem_size(int bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
  }
  TESSERA_CHECK(false, "bad element size ", bytes);
}

}  // namespace tessera::interp
