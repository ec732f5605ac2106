/// \file Tracing a kernel function for one specialization, and the description of its
/// parameters that launches are checked against.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../ir/ir.h"
#include "params.h"
#include "tracer.h"

namespace tessera::tl {

/// A compile-time constant argument's value, with its C++ kind.
struct ConstValue {
  enum class Kind { Int, Float, Bool, DType } kind = Kind::Int;
  int64_t i = 0;  ///< Int (two's complement of unsigned values too), Bool, DType
  double f = 0;   ///< Float
  bool operator==(const ConstValue&) const = default;
};

/// What one parameter is: how it is passed and, for handles, its dtype (nullopt: from the
/// argument). For constants, the C++ kind the value must have.
struct ParamDesc {
  ParamClass cls = ParamClass::Constexpr;
  std::optional<DType> dtype;
  ConstValue::Kind const_kind = ConstValue::Kind::Int;
  std::string cpp_type;  ///< for messages: "tl::ptr<f32>", "tl::i32", "int"
};

/// One argument of a specialization: the facts the launch proved about a runtime parameter
/// (Triton's 16-divisibility and ==1 classes), or a constant's value.
struct ArgSpec {
  DType dtype = DType::i32;      ///< pointee (pointers) or scalar dtype
  bool divisible_by_16 = false;  ///< pointer 16-byte aligned, or integer % 16 == 0
  bool equal_to_one = false;     ///< integer scalar == 1 (traced as the constant 1)
  ConstValue value;              ///< constants only
  bool operator==(const ArgSpec&) const = default;
};

namespace detail {

template <class P>
ParamDesc describe_param() {
  ParamDesc d;
  if constexpr (ParamHandle<P>) {
    d.cls = P::param_class;
    d.dtype = P::param_dtype;
    if (d.cls == ParamClass::Pointer)
      d.cpp_type =
          d.dtype ? "tl::ptr<" + std::string(ir::dtype_name(*d.dtype)) + ">" : "tl::pointer";
    else
      d.cpp_type = d.dtype ? "tl::" + std::string(ir::dtype_name(*d.dtype)) : "tl::scalar";
  } else if constexpr (std::is_same_v<P, DType>) {
    d.const_kind = ConstValue::Kind::DType;
    d.cpp_type = "tl::DType";
  } else if constexpr (std::is_same_v<P, bool>) {
    d.const_kind = ConstValue::Kind::Bool;
    d.cpp_type = "bool";
  } else if constexpr (std::is_floating_point_v<P>) {
    d.const_kind = ConstValue::Kind::Float;
    d.cpp_type = sizeof(P) == 4 ? "float" : "double";
  } else if constexpr (std::is_integral_v<P> || std::is_enum_v<P>) {
    d.const_kind = ConstValue::Kind::Int;
    d.cpp_type = std::is_enum_v<P> ? "enum" : (std::is_signed_v<P> ? "int" : "unsigned");
  } else {
    static_assert(sizeof(P) == 0,
                  "a kernel parameter must be a tl handle (tl::ptr<T>, tl::i32, ...) or a "
                  "compile-time constant (integer, float, bool, enum, tl::DType)");
  }
  return d;
}

template <class P>
P make_arg(Tracer& tracer, const ParamDesc& desc, const std::string& name, const ArgSpec& spec) {
  if constexpr (ParamHandle<P>) {
    ir::Type type = desc.cls == ParamClass::Pointer ? ir::Type::pointer(spec.dtype)
                                                    : ir::Type::scalar(spec.dtype);
    std::vector<ir::Attribute> attrs;
    if (spec.divisible_by_16) attrs.push_back({attr::kDivisibility, int64_t{16}});
    if (spec.equal_to_one) attrs.push_back({attr::kEqualTo, int64_t{1}});
    ir::Value* v = tracer.add_param(name, type, attrs);
    if (spec.equal_to_one) v = tracer.builder().constant_int(type, 1);
    return P(v);
  } else if constexpr (std::is_same_v<P, bool>) {
    return spec.value.i != 0;
  } else if constexpr (std::is_same_v<P, DType>) {
    return static_cast<DType>(spec.value.i);
  } else if constexpr (std::is_floating_point_v<P>) {
    return static_cast<P>(spec.value.f);
  } else {
    return static_cast<P>(spec.value.i);
  }
}

template <class... Params, size_t... I>
void call_traced(void (*fn)(Params...), Tracer& tracer, const std::vector<ParamDesc>& descs,
                 const std::vector<std::string>& names, const std::vector<ArgSpec>& specs,
                 std::index_sequence<I...>) {
  // Arguments are made left to right (braced init), so parameters are added in order.
  std::tuple<Params...> args{make_arg<Params>(tracer, descs[I], names[I], specs[I])...};
  std::apply(fn, args);
}

}  // namespace detail

template <class... Params>
std::vector<ParamDesc> describe_params() {
  return {detail::describe_param<Params>()...};
}

/// Traces `fn` for one specialization into a new module. `names` and `specs` have one entry per
/// parameter. User errors propagate as tessera::Error.
template <class... Params>
std::unique_ptr<ir::Module> trace(void (*fn)(Params...), const std::string& kernel_name,
                                  const std::vector<std::string>& names,
                                  const std::vector<ArgSpec>& specs) {
  Tracer tracer(kernel_name);
  std::vector<ParamDesc> descs = describe_params<Params...>();
  detail::call_traced(fn, tracer, descs, names, specs, std::index_sequence_for<Params...>{});
  return tracer.finish();
}

}  // namespace tessera::tl
