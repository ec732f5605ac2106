/// \file Parameter block layout.
#include "core/ir/abi.h"

#include <cstdint>
#include <sstream>

#include "core/support/error.h"

namespace tessera::ir {

uint32_t param_size(const Type& type) {
  TESSERA_CHECK(!type.is_tile(), "kernel parameters are scalars or pointers, got ", type.str());
  return type.is_ptr ? 8u : static_cast<uint32_t>(dtype_bytes(type.dtype));
}

ParamLayout param_layout(const std::vector<Type>& param_types) {
  ParamLayout layout;
  uint32_t offset = 0;
  for (const Type& t : param_types) {
    uint32_t size = param_size(t);
    offset = (offset + size - 1) / size * size;
    layout.slots.push_back({offset, size});
    offset += size;
  }
  layout.size = (offset + 7) / 8 * 8;
  return layout;
}

ParamLayout param_layout(const Function& fn) {
  std::vector<Type> types;
  for (const Param& p : fn.params) types.push_back(p.value->type);
  return param_layout(types);
}

std::string TensorMapValue::str() const {
  return param >= 0 ? "%" + std::to_string(param) : std::to_string(constant);
}

int64_t TensorMapParam::box_bytes() const {
  int64_t n = dtype_bytes(dtype);
  for (int64_t b : box) n *= b;
  return n;
}

std::string TensorMapParam::str() const {
  std::ostringstream os;
  os << "tensor_map(%" << base_param << ": " << dtype_name(dtype) << " [";
  for (int d = 0; d < rank(); ++d) os << (d ? " x " : "") << dims[static_cast<size_t>(d)].str();
  os << "] strides [";
  for (int d = 0; d < rank(); ++d) os << (d ? ", " : "") << strides[static_cast<size_t>(d)].str();
  os << "] box [";
  for (size_t d = 0; d < box.size(); ++d) os << (d ? " x " : "") << box[d];
  os << "] swizzle " << swizzle << ")";
  if (copies > 1) os << " x " << copies << " copies";
  return os.str();
}

namespace {

/// A cursor over the text of a tensor map: each step consumes what it expects or fails.
struct MapText {
  std::string_view rest;

  bool lit(std::string_view s) {
    if (!rest.starts_with(s)) return false;
    rest.remove_prefix(s.size());
    return true;
  }
  bool integer(int64_t* out) {
    size_t n = 0;
    const bool neg = !rest.empty() && rest[0] == '-';
    int64_t v = 0;
    for (n = neg ? 1 : 0; n < rest.size() && rest[n] >= '0' && rest[n] <= '9' && n < 19; ++n)
      v = v * 10 + (rest[n] - '0');
    if (n == (neg ? 1u : 0u)) return false;
    rest.remove_prefix(n);
    *out = neg ? -v : v;
    return true;
  }
  bool value(TensorMapValue* out) {
    int64_t v = 0;
    if (lit("%")) {
      if (!integer(&v) || v < 0 || v > INT32_MAX) return false;
      *out = TensorMapValue{static_cast<int>(v), 0};
      return true;
    }
    if (!integer(&v)) return false;
    *out = TensorMapValue{-1, v};
    return true;
  }
  /// "[a<sep>b<sep>...]" of values or integers.
  template <class T, class F>
  bool list(std::string_view sep, std::vector<T>* out, F one) {
    if (!lit("[")) return false;
    do {
      T v{};
      if (!one(&v)) return false;
      out->push_back(v);
    } while (lit(sep));
    return lit("]");
  }
};

}  // namespace

std::optional<TensorMapParam> parse_tensor_map(std::string_view text) {
  MapText t{text};
  TensorMapParam m;
  int64_t base = 0;
  if (!t.lit("tensor_map(%") || !t.integer(&base) || base < 0 || base > INT32_MAX || !t.lit(": "))
    return std::nullopt;
  m.base_param = static_cast<int>(base);
  const size_t space = t.rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::optional<DType> dtype = parse_dtype(t.rest.substr(0, space));
  if (!dtype) return std::nullopt;
  m.dtype = *dtype;
  t.rest.remove_prefix(space + 1);
  auto value = [&](TensorMapValue* v) { return t.value(v); };
  auto integer = [&](int64_t* v) { return t.integer(v); };
  int64_t swizzle = 0, copies = 1;
  if (!t.list(" x ", &m.dims, value) || !t.lit(" strides ") || !t.list(", ", &m.strides, value) ||
      !t.lit(" box ") || !t.list(" x ", &m.box, integer) || !t.lit(" swizzle ") ||
      !t.integer(&swizzle) || !t.lit(")"))
    return std::nullopt;
  if (t.lit(" x ") && (!t.integer(&copies) || copies < 2 || !t.lit(" copies"))) return std::nullopt;
  if (!t.rest.empty() || m.strides.size() != m.dims.size() || m.box.size() != m.dims.size() ||
      copies > INT32_MAX || (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128))
    return std::nullopt;
  m.swizzle = static_cast<int>(swizzle);
  m.copies = static_cast<int>(copies);
  return m;
}

ParamLayout param_layout(const std::vector<Type>& param_types, size_t maps) {
  ParamLayout layout = param_layout(param_types);
  if (maps == 0) return layout;
  uint32_t offset =
      layout.slots.empty() ? 0 : layout.slots.back().offset + layout.slots.back().size;
  for (size_t i = 0; i < maps; ++i) {
    offset = (offset + kTensorMapAlign - 1) / kTensorMapAlign * kTensorMapAlign;
    layout.slots.push_back({offset, kTensorMapBytes});
    offset += kTensorMapBytes;
  }
  layout.size = (offset + 7) / 8 * 8;
  return layout;
}

}  // namespace tessera::ir
