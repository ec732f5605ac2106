/// \file Runtime value construction and element access shared by the op families.
#include "core/interp/value.h"

#include <sstream>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"

namespace tessera::interp {

RuntimeValue RuntimeValue::make(ir::DType dtype, bool is_ptr, ir::Shape shape) {
  RuntimeValue v;
  v.dtype = dtype;
  v.is_ptr = is_ptr;
  v.shape = std::move(shape);
  v.bytes.resize(static_cast<size_t>(ir::num_elements(v.shape) * v.elem_bytes()));
  return v;
}

int64_t int_element(const RuntimeValue& v, int64_t i) {
  return dispatch(v.storage_dtype(), [&](auto t) -> int64_t {
    using T = decltype(t);
    TESSERA_CHECK(!T::kFloat, "expected an integer value, got ", v.type().str());
    if constexpr (T::kFloat)
      return 0;
    else
      return static_cast<int64_t>(v.data<typename T::S>()[i]);
  });
}

double float_element(const RuntimeValue& v, int64_t i) {
  return dispatch(v.storage_dtype(), [&](auto t) -> double {
    using T = decltype(t);
    const auto x = v.data<typename T::S>()[i];
    if constexpr (T::kFloat)
      return T::to_double(x);
    else
      return static_cast<double>(x);
  });
}

RuntimeValue int_scalar(ir::DType dtype, int64_t x) {
  RuntimeValue v = RuntimeValue::make(dtype, false, {});
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    TESSERA_CHECK(!T::kFloat, "int_scalar of ", ir::dtype_name(dtype));
    if constexpr (!T::kFloat) v.data<typename T::S>()[0] = num::wrap<T>(static_cast<uint64_t>(x));
  });
  return v;
}

RuntimeValue float_scalar(ir::DType dtype, double x) {
  RuntimeValue v = RuntimeValue::make(dtype, false, {});
  dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    TESSERA_CHECK(T::kFloat, "float_scalar of ", ir::dtype_name(dtype));
    if constexpr (T::kFloat) v.data<typename T::S>()[0] = T::from_double(x);
  });
  return v;
}

std::string index_str(const ir::Shape& shape, int64_t linear) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = linear % shape[d];
    linear /= shape[d];
  }
  std::ostringstream os;
  os << "(";
  for (size_t d = 0; d < coords.size(); ++d) os << (d ? ", " : "") << coords[d];
  os << ")";
  return os.str();
}

ir::Shape elementwise_shape(std::initializer_list<const RuntimeValue*> operands,
                            const ir::Shape& fallback) {
  int64_t n = 1;
  const RuntimeValue* widest = nullptr;
  for (const RuntimeValue* v : operands) {
    if (v->numel() > n) {
      n = v->numel();
      widest = v;
    }
  }
  for (const RuntimeValue* v : operands)
    TESSERA_CHECK(v->numel() == n || v->numel() == 1, "elementwise operands of shapes ",
                  ir::shape_str(v->shape), " and ", ir::shape_str(widest->shape));
  return widest ? widest->shape : fallback;
}

}  // namespace tessera::interp
