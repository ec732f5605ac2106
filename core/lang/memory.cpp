/// \file Loads, stores and atomics: pointer checks, mask and `other` broadcasting.
#include <initializer_list>
#include <string>
#include <string_view>

#include "core/ir/ops.h"
#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;
using ir::Type;

ir::Value* pointer_value(const tensor& ptr, std::string_view op, const Here& loc) {
  ir::Value* p = detail::value_of(ptr, op, loc);
  if (!p->type.is_ptr)
    user_error(loc, op,
               "the address operand has type " + p->type.str() +
                   ", expected a pointer or a tile of pointers (e.g. x + offs)");
  return p;
}

/// Does `from` broadcast to exactly `to` (numpy rules, `to` unchanged)?
bool broadcasts_to(const ir::Shape& from, const ir::Shape& to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

/// The mask as i1 of the pointer's shape: it may broadcast to the pointer, never the reverse.
ir::Value* mask_value(const Operand& mask, ir::Value* p, std::string_view op, const Here& loc) {
  ir::Value* m = detail::value_of(mask, op, loc);
  if (m->type.is_ptr || m->type.dtype != DType::i1)
    user_error(loc, op, "the mask has type " + m->type.str() + ", expected i1 (a comparison)");
  if (!broadcasts_to(m->type.shape, p->type.shape))
    user_error(loc, op,
               "mask shape " + ir::shape_str(m->type.shape) + " does not match pointer shape " +
                   ir::shape_str(p->type.shape));
  return detail::broadcast_value(m, p->type.shape, op, loc);
}

/// A value operand for a store, an atomic or a block: converted to `dtype`, broadcast to `shape`
/// (a value of larger shape is an error naming `what`, the shape's role).
ir::Value* data_value(const Operand& value, DType dtype, const ir::Shape& shape,
                      std::string_view what, std::string_view op, const Here& loc, bool convert) {
  if (value.is_tensor() && value.as_tensor().defined() && value.as_tensor().type().is_ptr)
    user_error(loc, op, "cannot store a pointer value (" + value.as_tensor().type().str() + ")");
  ir::Value* v;
  if (value.is_tensor() && !convert) {
    v = detail::value_of(value, op, loc);
    if (v->type.dtype != dtype)
      user_error(loc, op,
                 "value dtype " + std::string(ir::dtype_name(v->type.dtype)) +
                     " differs from the pointee dtype " + std::string(ir::dtype_name(dtype)));
  } else {
    v = detail::materialize(value, dtype, op, loc);
  }
  if (!broadcasts_to(v->type.shape, shape))
    user_error(loc, op,
               "value shape " + ir::shape_str(v->type.shape) + " does not match " +
                   std::string(what) + " " + ir::shape_str(shape));
  return detail::broadcast_value(v, shape, op, loc);
}

/// A value operand for a store or atomic: converted to the pointee dtype, broadcast to the
/// pointer's shape.
ir::Value* data_value(const Operand& value, ir::Value* p, std::string_view op, const Here& loc,
                      bool convert) {
  return data_value(value, p->type.dtype, p->type.shape, "pointer shape", op, loc, convert);
}

bool is_true_literal(const Operand& x) {
  return !x.is_tensor() && x.kind() == Operand::Kind::Bool && x.int_value() == 1;
}

tensor atomic(ir::AtomicOp aop, const tensor& ptr, const Operand& val, const Operand& mask,
              const AtomicOptions& o, const Here& loc) {
  ir::Value* p = pointer_value(ptr, "atomic_rmw", loc);
  bool is_float = ir::is_float(p->type.dtype);
  if (is_float && (aop == ir::AtomicOp::And || aop == ir::AtomicOp::Or || aop == ir::AtomicOp::Xor))
    user_error(loc, "atomic_rmw",
               "atomic " + std::string(ir::to_string(aop)) + " needs an integer pointee, got " +
                   p->type.str());
  ir::MemSem sem;
  ir::MemScope scope;
  if (!ir::parse_mem_sem(o.sem, &sem))
    user_error(loc, "atomic_rmw", "unknown memory order '" + o.sem + "'");
  if (!ir::parse_mem_scope(o.scope, &scope))
    user_error(loc, "atomic_rmw", "unknown scope '" + o.scope + "'");
  std::vector<ir::Value*> operands = {p, data_value(val, p, "atomic_rmw", loc, true)};
  if (!is_true_literal(mask)) operands.push_back(mask_value(mask, p, "atomic_rmw", loc));
  Type result = Type{p->type.dtype, false, p->type.shape};
  return wrap(builder_at(loc).create_value(OpKind::AtomicRmw, operands, result,
                                           {{attr::kOp, std::string(ir::to_string(aop))},
                                            {attr::kScope, o.scope},
                                            {attr::kSem, o.sem}}));
}

/// A hint's spelling without Triton's leading '.'; a user error unless it is "" or one of `ok`.
std::string check_hint(const std::string& given, std::initializer_list<std::string_view> ok,
                       std::string_view op, std::string_view what, const Here& loc) {
  std::string_view h = given;
  if (!h.empty() && h.front() == '.') h.remove_prefix(1);
  if (h.empty()) return "";
  std::string choices;
  for (std::string_view c : ok) {
    if (c == h) return std::string(h);
    choices += (choices.empty() ? "" : ", ") + std::string(c);
  }
  user_error(loc, op,
             "unknown " + std::string(what) + " \"" + given + "\" (one of " + choices + ")");
  return "";
}

void add_eviction(std::vector<ir::Attribute>& attrs, const std::string& eviction,
                  std::string_view op, const Here& loc) {
  std::string e = check_hint(eviction, {"evict_normal", "evict_first", "evict_last"}, op,
                             "eviction policy", loc);
  if (!e.empty()) attrs.push_back({attr::kEviction, e});
}

}  // namespace

tensor load(const tensor& ptr, Here loc) {
  ir::Value* p = pointer_value(ptr, "load", loc);
  return wrap(
      builder_at(loc).create_value(OpKind::Load, {p}, Type{p->type.dtype, false, p->type.shape}));
}

tensor load(const tensor& ptr, const Operand& mask, Here loc) {
  ir::Value* p = pointer_value(ptr, "load", loc);
  ir::Value* m = mask_value(mask, p, "load", loc);
  return wrap(builder_at(loc).create_value(OpKind::Load, {p, m},
                                           Type{p->type.dtype, false, p->type.shape}));
}

tensor load(const tensor& ptr, const Operand& mask, const Operand& other,
            const LoadOptions& options, Here loc) {
  ir::Value* p = pointer_value(ptr, "load", loc);
  ir::Value* m = mask_value(mask, p, "load", loc);
  ir::Value* o = data_value(other, p, "load", loc, !other.is_tensor());
  std::vector<ir::Attribute> attrs;
  std::string cache =
      check_hint(options.cache, {"ca", "cg", "cs", "cv"}, "load", "cache modifier", loc);
  if (!cache.empty()) attrs.push_back({attr::kCache, cache});
  add_eviction(attrs, options.eviction, "load", loc);
  if (options.is_volatile) attrs.push_back({attr::kVolatile, int64_t{1}});
  return wrap(builder_at(loc).create_value(OpKind::Load, {p, m, o},
                                           Type{p->type.dtype, false, p->type.shape}, attrs));
}

void store(const tensor& ptr, const Operand& value, Here loc) {
  ir::Value* p = pointer_value(ptr, "store", loc);
  builder_at(loc).create(OpKind::Store, {p, data_value(value, p, "store", loc, true)}, {});
}

void store(const tensor& ptr, const Operand& value, const Operand& mask, Here loc) {
  ir::Value* p = pointer_value(ptr, "store", loc);
  ir::Value* v = data_value(value, p, "store", loc, true);
  builder_at(loc).create(OpKind::Store, {p, v, mask_value(mask, p, "store", loc)}, {});
}

void store(const tensor& ptr, const Operand& value, const Operand& mask,
           const StoreOptions& options, Here loc) {
  ir::Value* p = pointer_value(ptr, "store", loc);
  ir::Value* v = data_value(value, p, "store", loc, true);
  std::vector<ir::Attribute> attrs;
  std::string cache =
      check_hint(options.cache, {"wb", "cg", "cs", "wt"}, "store", "cache modifier", loc);
  if (!cache.empty()) attrs.push_back({attr::kCache, cache});
  add_eviction(attrs, options.eviction, "store", loc);
  builder_at(loc).create(OpKind::Store, {p, v, mask_value(mask, p, "store", loc)}, {}, attrs);
}

tensor atomic_add(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                  Here loc) {
  return atomic(ir::AtomicOp::Add, p, v, m, o, loc);
}
tensor atomic_max(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                  Here loc) {
  return atomic(ir::AtomicOp::Max, p, v, m, o, loc);
}
tensor atomic_min(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                  Here loc) {
  return atomic(ir::AtomicOp::Min, p, v, m, o, loc);
}
tensor atomic_and(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                  Here loc) {
  return atomic(ir::AtomicOp::And, p, v, m, o, loc);
}
tensor atomic_or(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                 Here loc) {
  return atomic(ir::AtomicOp::Or, p, v, m, o, loc);
}
tensor atomic_xor(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                  Here loc) {
  return atomic(ir::AtomicOp::Xor, p, v, m, o, loc);
}
tensor atomic_xchg(const tensor& p, const Operand& v, const Operand& m, const AtomicOptions& o,
                   Here loc) {
  return atomic(ir::AtomicOp::Xchg, p, v, m, o, loc);
}

tensor atomic_cas(const tensor& ptr, const Operand& cmp, const Operand& val, const AtomicOptions& o,
                  Here loc) {
  ir::Value* p = pointer_value(ptr, "atomic_cas", loc);
  ir::MemSem sem;
  ir::MemScope scope;
  if (!ir::parse_mem_sem(o.sem, &sem))
    user_error(loc, "atomic_cas", "unknown memory order '" + o.sem + "'");
  if (!ir::parse_mem_scope(o.scope, &scope))
    user_error(loc, "atomic_cas", "unknown scope '" + o.scope + "'");
  ir::Value* c = data_value(cmp, p, "atomic_cas", loc, true);
  ir::Value* v = data_value(val, p, "atomic_cas", loc, true);
  return wrap(builder_at(loc).create_value(OpKind::AtomicCas, {p, c, v},
                                           Type{p->type.dtype, false, p->type.shape},
                                           {{attr::kScope, o.scope}, {attr::kSem, o.sem}}));
}

// --- tensor descriptors -------------------------------------------------------------------------

namespace {

using detail::index_dtype;
using detail::index_value;

}  // namespace

tensor_descriptor make_tensor_descriptor(const tensor& base, std::initializer_list<Operand> shape,
                                         std::initializer_list<Operand> strides,
                                         const Shape& block_shape, Here loc) {
  constexpr std::string_view op = "make_tensor_descriptor";
  ir::Value* p = pointer_value(base, op, loc);
  if (!p->type.shape.empty())
    user_error(loc, op,
               "the base is a tile of pointers (" + p->type.str() + "), expected one pointer");
  if (shape.size() != strides.size() || shape.size() != block_shape.size() || shape.size() == 0)
    user_error(loc, op,
               "shape, strides and block_shape need one entry per dimension; got " +
                   std::to_string(shape.size()) + ", " + std::to_string(strides.size()) + " and " +
                   std::to_string(block_shape.size()));
  detail::check_shape(block_shape, op, loc);
  tensor_descriptor d;
  d.base_ = base;
  int i = 0;
  for (const Operand& x : shape)
    d.dims_.push_back(detail::wrap(index_value(x, op, "shape[" + std::to_string(i++) + "]", loc)));
  i = 0;
  for (const Operand& x : strides)
    d.strides_.push_back(
        detail::wrap(index_value(x, op, "strides[" + std::to_string(i++) + "]", loc)));
  d.block_ = block_shape;
  return d;
}

std::vector<ir::Value*> tensor_descriptor::operands(std::initializer_list<Operand> offsets,
                                                    std::string_view op, const Here& loc) const {
  if (offsets.size() != block_.size())
    user_error(loc, op,
               "the descriptor has " + std::to_string(block_.size()) + " dimensions; got " +
                   std::to_string(offsets.size()) + " offsets");
  std::vector<ir::Value*> indices;
  for (const tensor& t : dims_) indices.push_back(detail::value_of(t, op, loc));
  for (const tensor& t : strides_) indices.push_back(detail::value_of(t, op, loc));
  int i = 0;
  for (const Operand& x : offsets)
    indices.push_back(index_value(x, op, "offsets[" + std::to_string(i++) + "]", loc));
  const DType index = index_dtype(indices);
  std::vector<ir::Value*> out = {detail::value_of(base_, op, loc)};
  for (ir::Value* v : indices) out.push_back(detail::cast_to(v, index, loc));
  return out;
}

tensor tensor_descriptor::load(std::initializer_list<Operand> offsets, Here loc) const {
  std::vector<ir::Value*> operands = this->operands(offsets, "desc_load", loc);
  const DType dtype = operands[0]->type.dtype;
  return wrap(builder_at(loc).create_value(OpKind::DescLoad, operands, Type::tile(dtype, block_)));
}

void tensor_descriptor::store(std::initializer_list<Operand> offsets, const Operand& value,
                              Here loc) const {
  std::vector<ir::Value*> operands = this->operands(offsets, "desc_store", loc);
  operands.push_back(data_value(value, operands[0]->type.dtype, block_, "the block shape",
                                "desc_store", loc, true));
  builder_at(loc).create(OpKind::DescStore, operands, {});
}

}  // namespace tessera::tl
