/// \file Kernel parameter handle types: what a kernel's runtime parameters are declared as.
///
///   tl::ptr<float> x     a pointer to f32 (a Buffer<float> argument)
///   tl::i32 n            an i32 scalar (an int argument)
///   tl::pointer p        a pointer whose dtype comes from the Buffer argument
///   tl::scalar s         a scalar whose dtype comes from the C++ argument's type
/// Any other parameter type (int, float, bool, tl::DType, ...) is a compile-time constant.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "../support/float16.h"
#include "../support/float8.h"
#include "tensor.h"

namespace tessera::tl {

/// The dtype of a C++ element type.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::i1;
  else if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::f64;
  else if constexpr (std::is_same_v<T, tessera::half>)
    return DType::f16;
  else if constexpr (std::is_same_v<T, tessera::bfloat16>)
    return DType::bf16;
  else if constexpr (std::is_same_v<T, tessera::float8_e4m3>)
    return DType::f8e4m3;
  else if constexpr (std::is_same_v<T, tessera::float8_e5m2>)
    return DType::f8e5m2;
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1)
      return DType::i8;
    else if constexpr (sizeof(T) == 2)
      return DType::i16;
    else if constexpr (sizeof(T) == 4)
      return DType::i32;
    else
      return DType::i64;
  } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    if constexpr (sizeof(T) == 1)
      return DType::u8;
    else if constexpr (sizeof(T) == 2)
      return DType::u16;
    else if constexpr (sizeof(T) == 4)
      return DType::u32;
    else
      return DType::u64;
  } else {
    static_assert(sizeof(T) == 0, "no Tessera dtype for this C++ type");
  }
}

/// How a kernel parameter is passed.
enum class ParamClass { Pointer, Scalar, Constexpr };

/// A pointer parameter to elements of type T.
template <class T>
class ptr : public tensor {
 public:
  using tensor::tensor;
  using tensor::operator=;
  static constexpr ParamClass param_class = ParamClass::Pointer;      ///< passed as a pointer
  static constexpr std::optional<DType> param_dtype = dtype_of<T>();  ///< T's dtype
};

/// A pointer parameter whose element dtype is the launch argument's.
class pointer : public tensor {
 public:
  using tensor::tensor;
  using tensor::operator=;
  static constexpr ParamClass param_class = ParamClass::Pointer;     ///< passed as a pointer
  static constexpr std::optional<DType> param_dtype = std::nullopt;  ///< the argument's dtype
};

/// A scalar parameter of dtype D.
template <DType D>
class scalar_of : public tensor {
 public:
  using tensor::tensor;
  using tensor::operator=;
  static constexpr ParamClass param_class = ParamClass::Scalar;  ///< passed as a scalar value
  static constexpr std::optional<DType> param_dtype = D;         ///< always D
};

/// A scalar parameter whose dtype is the launch argument's.
class scalar : public tensor {
 public:
  using tensor::tensor;
  using tensor::operator=;
  static constexpr ParamClass param_class = ParamClass::Scalar;      ///< passed as a scalar value
  static constexpr std::optional<DType> param_dtype = std::nullopt;  ///< the argument's dtype
};

using i1 = scalar_of<DType::i1>;      ///< a bool scalar parameter
using i8 = scalar_of<DType::i8>;      ///< an int8_t scalar parameter
using i16 = scalar_of<DType::i16>;    ///< an int16_t scalar parameter
using i32 = scalar_of<DType::i32>;    ///< an int32_t scalar parameter (an int argument)
using i64 = scalar_of<DType::i64>;    ///< an int64_t scalar parameter
using u8 = scalar_of<DType::u8>;      ///< a uint8_t scalar parameter
using u16 = scalar_of<DType::u16>;    ///< a uint16_t scalar parameter
using u32 = scalar_of<DType::u32>;    ///< a uint32_t scalar parameter
using u64 = scalar_of<DType::u64>;    ///< a uint64_t scalar parameter
using f16 = scalar_of<DType::f16>;    ///< a tessera::half scalar parameter
using bf16 = scalar_of<DType::bf16>;  ///< a tessera::bfloat16 scalar parameter
using f32 = scalar_of<DType::f32>;    ///< a float scalar parameter
using f64 = scalar_of<DType::f64>;    ///< a double scalar parameter

template <class P>
concept ParamHandle = std::is_base_of_v<tensor, P> && requires {
  { P::param_class } -> std::convertible_to<ParamClass>;
};

}  // namespace tessera::tl
