/// \file Builder: op creation at an insertion point.
#include "core/ir/builder.h"

#include <algorithm>

#include "core/support/error.h"

namespace tessera::ir {

void Builder::set_insertion_before(Op* op) {
  TESSERA_CHECK(op->parent, "op is not in a region");
  region_ = op->parent;
  auto it = std::find(region_->ops.begin(), region_->ops.end(), op);
  TESSERA_CHECK(it != region_->ops.end(), "op not found in its parent region");
  index_ = it - region_->ops.begin();
}

void Builder::set_insertion_after(Op* op) {
  set_insertion_before(op);
  index_ += 1;
}

Op* Builder::create(OpKind kind, std::vector<Value*> operands, std::vector<Type> result_types,
                    std::vector<Attribute> attrs) {
  TESSERA_CHECK(region_, "builder has no insertion point");
  Op* op =
      module_.new_op(kind, std::move(operands), std::move(result_types), std::move(attrs), loc_);
  op->parent = region_;
  if (index_ < 0) {
    region_->ops.push_back(op);
  } else {
    region_->ops.insert(region_->ops.begin() + index_, op);
    index_ += 1;
  }
  return op;
}

Value* Builder::create_value(OpKind kind, std::vector<Value*> operands, Type result_type,
                             std::vector<Attribute> attrs) {
  std::vector<Type> types;
  types.push_back(std::move(result_type));
  return create(kind, std::move(operands), std::move(types), std::move(attrs))->result(0);
}

Region* Builder::add_region(Op* op) {
  Region* r = module_.new_region(op);
  op->regions.push_back(r);
  return r;
}

int64_t wrap_to_dtype(int64_t value, DType dtype) {
  int bits = dtype_bits(dtype);
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t v = static_cast<uint64_t>(value) & mask;
  if (is_signed_int(dtype) && dtype != DType::i1 && (v >> (bits - 1)) != 0) v |= ~mask;
  return static_cast<int64_t>(v);
}

Value* Builder::constant_int(Type type, int64_t value) {
  value = wrap_to_dtype(value, type.dtype);
  return create_value(OpKind::Constant, {}, std::move(type), {{attr::kValue, value}});
}

Value* Builder::constant_float(Type type, double value) {
  return create_value(OpKind::Constant, {}, std::move(type), {{attr::kValue, value}});
}

Value* Builder::constant(Type type, double value) {
  if (type.is_float()) return constant_float(std::move(type), value);
  return constant_int(std::move(type), static_cast<int64_t>(value));
}

}  // namespace tessera::ir
