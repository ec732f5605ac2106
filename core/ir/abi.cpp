/// \file Parameter block layout.
#include "core/ir/abi.h"

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

}  // namespace tessera::ir
