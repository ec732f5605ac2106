/// \file Pointers and memory: ptr_add as address arithmetic, global loads and stores through
/// PhysicalStorageBuffer pointers (Aligned on every access, vectors of up to 16 bytes, narrow
/// elements packed into 32-bit words when aligned), predication, and the shared buffers.
#include <algorithm>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;

Value Emitter::psb_pointer(Value address, uint32_t pointee) {
  return b.convert(spv::OpConvertUToPtr,
                   b.t_pointer(spv::StorageClassPhysicalStorageBuffer, pointee), address);
}

Value Emitter::to_memory(Value v, DType dtype) {
  if (dtype == DType::i1) return b.select(v, b.c_int(b.t_uint(8), 1), b.c_int(b.t_uint(8), 0));
  if (dtype != DType::bf16) return v;
  Value bits = b.binary(spv::OpShiftRightLogical, b.bitcast(b.t_uint(32), v), b.c_u32(16));
  return b.convert(spv::OpUConvert, b.t_uint(16), bits);
}

Value Emitter::from_memory(Value v, DType dtype) {
  if (dtype == DType::i1) return b.compare(spv::OpINotEqual, v, b.c_int(v.type, 0));
  if (dtype != DType::bf16) return v;
  Value wide = b.convert(spv::OpUConvert, b.t_uint(32), v);
  return b.bitcast(b.t_float(32), b.binary(spv::OpShiftLeftLogical, wide, b.c_u32(16)));
}

void Emitter::emit_ptr_add(const ir::Op& op) {
  uint32_t u64 = b.t_uint(64);
  const ir::Type& offset_type = op.operand(1)->type;
  uint64_t size = static_cast<uint64_t>(ir::dtype_bytes(op.result()->type.dtype));
  Value base = get(op.operand(0));
  if (std::optional<int64_t> k = constant_of(op.operand(1)))
    return set(op.result(),
               b.binary(spv::OpIAdd, base, b.c_int(u64, static_cast<uint64_t>(*k) * size)));
  Value offset = get(op.operand(1));
  if (offset_type.is_bool())
    offset = b.select(offset, b.c_int(u64, 1), b.c_int(u64, 0));
  else if (ir::dtype_bits(offset_type.dtype) < 64)
    offset = ir::is_signed_int(offset_type.dtype)
                 ? b.convert(spv::OpSConvert, b.t_int(64, true), offset)
                 : b.convert(spv::OpUConvert, u64, offset);
  offset = b.bitcast(u64, offset);
  uint32_t shift = static_cast<uint32_t>(std::countr_zero(size));
  if (shift) offset = b.binary(spv::OpShiftLeftLogical, offset, b.c_int(u64, shift));
  set(op.result(), b.binary(spv::OpIAdd, base, offset));
}

namespace {

/// How `width` elements of `dtype` at an `align`-aligned address are accessed: in units of the
/// element (or of u32 words, when narrow elements fill aligned words), up to 16 bytes per
/// access.
struct AccessPlan {
  uint32_t unit = 0;  ///< the unit's memory type
  uint32_t unit_bytes = 0;
  bool packed = false;  ///< units are u32 words holding 4 / element-size elements
  uint32_t units = 0;
  uint32_t per_access = 1;  ///< units per access (a vector when > 1)
};

AccessPlan plan_access(Emitter& e, DType dtype, int width, uint32_t align) {
  AccessPlan p;
  uint32_t size = static_cast<uint32_t>(ir::dtype_bytes(dtype));
  uint32_t total = size * static_cast<uint32_t>(width);
  p.unit = e.memory_type(dtype);
  p.unit_bytes = size;
  if (size < 4 && total >= 4 && align >= 4) {
    p.unit = e.b.t_uint(32);
    p.unit_bytes = 4;
    p.packed = true;
  }
  p.units = total / p.unit_bytes;
  if (p.unit_bytes >= 4) p.per_access = std::min(p.units, 16 / p.unit_bytes);
  return p;
}

/// `width` loaded elements of `dtype`, as SSA values.
std::vector<Value> load_elements(Emitter& e, Value address, DType dtype, int width, uint32_t align,
                                 AccessHints hints) {
  Builder& b = e.b;
  AccessPlan p = plan_access(e, dtype, width, align);
  std::vector<Value> units;
  for (uint32_t u = 0; u < p.units; u += p.per_access) {
    uint32_t offset = u * p.unit_bytes;
    Value at = offset ? b.binary(spv::OpIAdd, address, b.c_int(b.t_uint(64), offset)) : address;
    uint32_t type = p.per_access > 1 ? b.t_vector(p.unit, p.per_access) : p.unit;
    Value v = b.load(type, e.psb_pointer(at, type), aligned_at(align, offset), true, hints);
    for (uint32_t k = 0; k < p.per_access; ++k)
      units.push_back(p.per_access > 1 ? b.extract(p.unit, v, k) : v);
  }
  std::vector<Value> out;
  uint32_t memory = e.memory_type(dtype);
  uint32_t per_word = p.packed ? 4 / static_cast<uint32_t>(ir::dtype_bytes(dtype)) : 1;
  for (Value unit : units) {
    if (!p.packed) {
      out.push_back(e.from_memory(unit, dtype));
      continue;
    }
    Value lanes = b.bitcast(b.t_vector(memory, per_word), unit);
    for (uint32_t k = 0; k < per_word; ++k)
      out.push_back(e.from_memory(b.extract(memory, lanes, k), dtype));
  }
  return out;
}

void store_elements(Emitter& e, Value address, DType dtype, const std::vector<Value>& values,
                    uint32_t align, AccessHints hints) {
  Builder& b = e.b;
  AccessPlan p = plan_access(e, dtype, static_cast<int>(values.size()), align);
  uint32_t memory = e.memory_type(dtype);
  std::vector<Value> units;
  uint32_t per_word = p.packed ? 4 / static_cast<uint32_t>(ir::dtype_bytes(dtype)) : 1;
  for (size_t i = 0; i < values.size(); i += per_word) {
    if (!p.packed) {
      units.push_back(e.to_memory(values[i], dtype));
      continue;
    }
    std::vector<Value> lanes;
    for (uint32_t k = 0; k < per_word; ++k) lanes.push_back(e.to_memory(values[i + k], dtype));
    units.push_back(b.bitcast(p.unit, b.construct(b.t_vector(memory, per_word), lanes)));
  }
  for (uint32_t u = 0; u < p.units; u += p.per_access) {
    uint32_t offset = u * p.unit_bytes;
    Value at = offset ? b.binary(spv::OpIAdd, address, b.c_int(b.t_uint(64), offset)) : address;
    Value v = units[u];
    if (p.per_access > 1)
      v = b.construct(b.t_vector(p.unit, p.per_access),
                      std::vector<Value>(units.begin() + u, units.begin() + u + p.per_access));
    b.store(e.psb_pointer(at, v.type), v, aligned_at(align, offset), true, hints);
  }
}

/// A load's or store's hints in SPIR-V. tl::load's volatile is Volatile. The cache hints that
/// say the data is not wanted near the core again (a load's "cg": cached past L1 only; "cs":
/// streamed; the evict_first priority) are Nontemporal, SPIR-V's one cache hint; "ca", "cv", a
/// store's "cg", "wb", "wt" and evict_last have no SPIR-V form and are dropped (hints: a driver
/// may ignore them too).
AccessHints access_hints(const ir::Op& op, bool load) {
  const std::string cache = ir::cache_modifier(op);
  return {.is_volatile = op.int_attr_or(attr::kVolatile, 0) != 0,
          .nontemporal = cache == "cs" || (load && cache == "cg") ||
                         op.str_attr_or(attr::kEviction, "") == "evict_first"};
}

/// True when `pred` is the constant true (no branch needed).
bool always(const Emitter& e, const ir::Value* pred) {
  std::optional<int64_t> k = e.constant_of(pred);
  return k && *k != 0;
}

}  // namespace

/// `width` elements at `address` if `pred`, else `others`: a selection around the access whose
/// results are phis of the loaded values and the others.
std::vector<Value> Emitter::predicated_load(const ir::Value* pred, Value address, DType dtype,
                                            int width, uint32_t align,
                                            const std::vector<Value>& others, AccessHints hints) {
  if (always(*this, pred)) return load_elements(*this, address, dtype, width, align, hints);
  uint32_t entry = b.current_label(), then = b.new_label(), merge = b.new_label();
  b.selection_merge(merge);
  b.branch_cond(get(pred), then, merge);
  b.begin_block(then);
  std::vector<Value> values = load_elements(*this, address, dtype, width, align, hints);
  uint32_t then_end = b.current_label();
  b.branch(merge);
  b.begin_block(merge);
  for (size_t i = 0; i < values.size(); ++i) {
    PhiRef phi = b.phi(values[i].type);
    b.add_incoming(phi, values[i], then_end);
    b.add_incoming(phi, others[i], entry);
    values[i] = phi.value;
  }
  return values;
}

void Emitter::emit_global_load(const ir::Op& op) {
  ir::GlobalLoadOp load(&op);
  DType dtype = load.ptr()->type.dtype;
  if (dtype == DType::i1) require_cap(target::Cap::Int8, &op, "i1 in memory (one byte)");
  std::vector<Value> others;
  for (const ir::Value* v : load.others()) others.push_back(get(v));
  std::vector<Value> values =
      predicated_load(load.pred(), get(load.ptr()), dtype, load.width(),
                      static_cast<uint32_t>(load.align()), others, access_hints(op, /*load=*/true));
  for (size_t i = 0; i < values.size(); ++i) set(op.result(i), values[i]);
}

void Emitter::emit_global_store(const ir::Op& op) {
  ir::GlobalStoreOp store(&op);
  DType dtype = store.ptr()->type.dtype;
  if (dtype == DType::i1) require_cap(target::Cap::Int8, &op, "i1 in memory (one byte)");
  Value address = get(store.ptr());
  uint32_t align = static_cast<uint32_t>(store.align());
  std::vector<Value> values;
  for (const ir::Value* v : store.values()) values.push_back(get(v));
  const AccessHints hints = access_hints(op, /*load=*/false);
  if (always(*this, store.pred()))
    return store_elements(*this, address, dtype, values, align, hints);
  uint32_t then = b.new_label(), merge = b.new_label();
  b.selection_merge(merge);
  b.branch_cond(get(store.pred()), then, merge);
  b.begin_block(then);
  store_elements(*this, address, dtype, values, align, hints);
  b.branch(merge);
  b.begin_block(merge);
}

// --- shared memory -------------------------------------------------------------------------------

/// One Workgroup array per buffer. i1 elements are booleans (no 8-bit access needed), bf16
/// elements u16. A buffer of 32-bit elements that is only ever accessed `w` >= 2 elements at a
/// time becomes an array of min(w, 4)-component vectors. Buffers of coopmat loads and stores stay
/// scalar, so that their index and stride count the array's elements as the IR's do.
void Emitter::declare_shared() {
  std::vector<ir::SharedBuffer> buffers = ir::shared_buffers(fn);
  std::vector<int> min_width(buffers.size(), 1 << 30);
  ir::walk(fn.body, [&](const ir::Op* op) {
    const bool coopmat =
        op->kind == ir::OpKind::CoopMatLoad || op->kind == ir::OpKind::CoopMatStore;
    if (op->kind != ir::OpKind::SharedLoad && op->kind != ir::OpKind::SharedStore &&
        op->kind != ir::OpKind::CpAsync && !coopmat)
      return;
    size_t i = static_cast<size_t>(op->int_attr(attr::kBuffer));
    int width = coopmat                           ? 1
                : op->kind == ir::OpKind::CpAsync ? 16 / ir::dtype_bytes(buffers.at(i).dtype)
                                                  : static_cast<int>(op->int_attr(attr::kWidth));
    min_width.at(i) = std::min(min_width.at(i), width);
  });
  for (size_t i = 0; i < buffers.size(); ++i) {
    SharedVar s;
    s.dtype = buffers[i].dtype;
    uint32_t element = s.dtype == DType::i1 ? b.t_bool() : memory_type(s.dtype);
    int w = std::min(min_width[i], 4);
    if (ir::dtype_bytes(s.dtype) == 4 && w >= 2 && w < (1 << 30) && buffers[i].count % w == 0) {
      s.lanes = static_cast<uint32_t>(w);
      element = b.t_vector(element, s.lanes);
    }
    s.element_type = element;
    uint32_t length = static_cast<uint32_t>(buffers[i].count / s.lanes);
    s.var = b.variable(b.t_pointer(spv::StorageClassWorkgroup, b.t_array(element, length)));
    b.name(s.var.id, "shared_" + std::to_string(i));
    interface_.push_back(s.var.id);
    shared_.push_back(s);
  }
}

namespace {

/// The pointer to array element `index + k` (in the array's units) of a shared buffer.
Value shared_element(Builder& b, const SharedVar& s, Value index, uint32_t k) {
  if (k) index = b.binary(spv::OpIAdd, index, b.c_int(index.type, k));
  return b.access_chain(b.t_pointer(spv::StorageClassWorkgroup, s.element_type), s.var, {index});
}

/// The buffer's element index in array units (the IR promises index % width == 0).
Value array_index(Builder& b, const SharedVar& s, Value index) {
  if (s.lanes == 1) return index;
  return b.binary(spv::OpShiftRightArithmetic, index,
                  b.c_int(index.type, static_cast<uint64_t>(std::countr_zero(s.lanes))));
}

}  // namespace

Value Emitter::shared_scalar_pointer(int64_t buffer, Value index) {
  const SharedVar& s = shared_.at(static_cast<size_t>(buffer));
  TESSERA_CHECK(s.lanes == 1, "SPIR-V: shared buffer ", buffer, " is an array of vectors");
  return shared_element(b, s, index, 0);
}

void Emitter::emit_shared_load(const ir::Op& op) {
  ir::SharedLoadOp load(&op);
  const SharedVar& s = shared_.at(static_cast<size_t>(load.buffer()));
  Value index = array_index(b, s, get(load.index()));
  uint32_t scalar = b.scalar_of(s.element_type);
  for (uint32_t k = 0; k * s.lanes < static_cast<uint32_t>(load.width()); ++k) {
    Value v = b.load(s.element_type, shared_element(b, s, index, k), 0, true);
    for (uint32_t l = 0; l < s.lanes; ++l) {
      Value element = s.lanes > 1 ? b.extract(scalar, v, l) : v;
      if (s.dtype == DType::bf16) element = from_memory(element, s.dtype);
      set(op.result(k * s.lanes + l), element);
    }
  }
}

void Emitter::store_shared(const SharedVar& s, Value element_index,
                           const std::vector<Value>& values) {
  Value index = array_index(b, s, element_index);
  for (uint32_t k = 0; k * s.lanes < values.size(); ++k) {
    std::vector<Value> lanes;
    for (uint32_t l = 0; l < s.lanes; ++l) {
      Value v = values[k * s.lanes + l];
      lanes.push_back(s.dtype == DType::bf16 ? to_memory(v, s.dtype) : v);
    }
    Value v = s.lanes > 1 ? b.construct(s.element_type, lanes) : lanes[0];
    b.store(shared_element(b, s, index, k), v, 0, true);
  }
}

void Emitter::emit_shared_store(const ir::Op& op) {
  ir::SharedStoreOp store(&op);
  std::vector<Value> values;
  for (const ir::Value* v : store.values()) values.push_back(get(v));
  store_shared(shared_.at(static_cast<size_t>(store.buffer())), get(store.index()), values);
}

/// Vulkan has no asynchronous copy: cp_async copies at once (16 bytes, or zeros when the
/// predicate is false), which meets its contract; commit and wait have nothing left to do.
void Emitter::emit_cp_async(const ir::Op& op) {
  ir::CpAsyncOp copy(&op);
  const SharedVar& s = shared_.at(static_cast<size_t>(copy.buffer()));
  if (s.dtype == DType::i1) require_cap(target::Cap::Int8, &op, "i1 in memory (one byte)");
  int width = 16 / ir::dtype_bytes(s.dtype);
  std::vector<Value> zeros(static_cast<size_t>(width), constant(s.dtype, 0));
  std::vector<Value> values =
      predicated_load(copy.pred(), get(copy.ptr()), s.dtype, width, 16, zeros);
  store_shared(s, get(copy.index()), values);
}

}  // namespace tessera::spirv::impl
