/// \file Parameter block layout.
#include "core/ir/abi.h"

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
