/// \file Atomics on global memory: native instructions where SPIR-V and the target have them
/// (32/64-bit integers, float add and min/max through their extensions), else a compare-and-swap
/// loop on the bits, on the containing 32-bit word for 8- and 16-bit elements. Scopes cta/gpu/sys
/// map to Workgroup/Device/QueueFamily, orders to Vulkan-memory-model semantics.
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::AtomicOp;
using ir::DType;

namespace {

/// An atomic's scope and its order as Vulkan-memory-model semantics on UniformMemory (the
/// storage class semantics of PhysicalStorageBuffer), with availability and visibility.
struct Ordering {
  spv::Scope scope;
  uint32_t semantics;   ///< of the access (and of a successful compare-exchange)
  uint32_t on_failure;  ///< of a failed compare-exchange: no release
};

constexpr uint32_t kAcquire = 0u | spv::MemorySemanticsAcquireMask |
                              spv::MemorySemanticsUniformMemoryMask |
                              spv::MemorySemanticsMakeVisibleMask;
constexpr uint32_t kRelease = 0u | spv::MemorySemanticsReleaseMask |
                              spv::MemorySemanticsUniformMemoryMask |
                              spv::MemorySemanticsMakeAvailableMask;
constexpr uint32_t kAcqRel =
    0u | spv::MemorySemanticsAcquireReleaseMask | spv::MemorySemanticsUniformMemoryMask |
    spv::MemorySemanticsMakeAvailableMask | spv::MemorySemanticsMakeVisibleMask;

Ordering ordering(ir::MemSem sem, ir::MemScope scope) {
  spv::Scope s = scope == ir::MemScope::Cta   ? spv::ScopeWorkgroup
                 : scope == ir::MemScope::Gpu ? spv::ScopeDevice
                                              : spv::ScopeQueueFamily;
  switch (sem) {
    case ir::MemSem::Relaxed:
      return {s, 0, 0};
    case ir::MemSem::Acquire:
      return {s, kAcquire, kAcquire};
    case ir::MemSem::Release:
      return {s, kRelease, 0};
    case ir::MemSem::AcqRel:
      return {s, kAcqRel, kAcquire};
  }
  return {s, kAcqRel, kAcquire};
}

/// The integer instruction of an atomic op, by signedness.
spv::Op int_opcode(AtomicOp kind, bool is_signed) {
  switch (kind) {
    case AtomicOp::Add:
      return spv::OpAtomicIAdd;
    case AtomicOp::Max:
      return is_signed ? spv::OpAtomicSMax : spv::OpAtomicUMax;
    case AtomicOp::Min:
      return is_signed ? spv::OpAtomicSMin : spv::OpAtomicUMin;
    case AtomicOp::And:
      return spv::OpAtomicAnd;
    case AtomicOp::Or:
      return spv::OpAtomicOr;
    case AtomicOp::Xor:
      return spv::OpAtomicXor;
    case AtomicOp::Xchg:
      return spv::OpAtomicExchange;
  }
  return spv::OpAtomicIAdd;
}

ir::OpKind binary_kind(AtomicOp kind) {
  switch (kind) {
    case AtomicOp::Add:
      return ir::OpKind::Add;
    case AtomicOp::Max:
      return ir::OpKind::Max;
    case AtomicOp::Min:
      return ir::OpKind::Min;
    case AtomicOp::And:
      return ir::OpKind::And;
    case AtomicOp::Or:
      return ir::OpKind::Or;
    default:
      return ir::OpKind::Xor;
  }
}

/// A compare-and-swap loop on the word (u32 or u64) at `address` holding the element of `dtype`
/// at bit `shift` (a u32 value; only for elements narrower than the word). `update` maps the old
/// element to the new one; the result is the old element.
template <class Update>
Value cas_loop(Emitter& e, Value address, uint32_t word, Value shift, DType dtype,
               const Ordering& o, Update update) {
  Builder& b = e.b;
  uint32_t bits = static_cast<uint32_t>(ir::dtype_bytes(dtype)) * 8;
  bool narrow = bits < b.width(word);
  Value pointer = e.psb_pointer(address, word);
  Value scope = b.scope(o.scope);
  // The loop's atomics are relaxed and fences around the loop give the order (equivalent in the
  // Vulkan memory model): lavapipe (Mesa 22.3) loses updates when an atomic or fence with
  // ordering semantics runs in a loop whose trip count differs between invocations.
  if (o.semantics & (spv::MemorySemanticsReleaseMask | spv::MemorySemanticsAcquireReleaseMask))
    b.op_void(spv::OpMemoryBarrier, {scope, b.semantics(kRelease)});
  Value first = b.op(spv::OpAtomicLoad, word, {pointer, scope, b.semantics(0)});
  uint32_t mem = e.memory_type(dtype);
  Value mask = b.c_int(word, narrow ? (uint64_t{1} << bits) - 1 : ~uint64_t{0});
  uint32_t narrow_bits = narrow ? b.t_uint(bits) : word;
  auto element_of = [&](Value w) {  // the element's memory bits, then its value
    if (!narrow) return e.from_memory(b.bitcast(mem, w), dtype);
    Value field = b.binary(spv::OpBitwiseAnd, b.binary(spv::OpShiftRightLogical, w, shift), mask);
    return e.from_memory(b.bitcast(mem, b.convert(spv::OpUConvert, narrow_bits, field)), dtype);
  };
  uint32_t entry = b.current_label(), header = b.new_label(), body = b.new_label(),
           latch = b.new_label(), merge = b.new_label();
  b.branch(header);
  b.begin_block(header);
  PhiRef old = b.phi(word);
  b.add_incoming(old, first, entry);
  e.count_inner_pass();
  b.loop_merge(merge, latch);
  b.branch(body);
  b.begin_block(body);
  Value old_element = element_of(old.value);
  Value next = e.to_memory(update(old_element), dtype);
  Value next_word;
  if (!narrow) {
    next_word = b.bitcast(word, next);
  } else {
    Value wide = b.convert(spv::OpUConvert, word, b.bitcast(narrow_bits, next));
    Value placed = b.binary(spv::OpShiftLeftLogical, wide, shift);
    Value kept = b.binary(spv::OpBitwiseAnd, old.value,
                          b.unary(spv::OpNot, b.binary(spv::OpShiftLeftLogical, mask, shift)));
    next_word = b.binary(spv::OpBitwiseOr, kept, placed);
  }
  Value seen = b.op(spv::OpAtomicCompareExchange, word,
                    {pointer, scope, b.semantics(0), b.semantics(0), next_word, old.value});
  Value done = b.compare(spv::OpIEqual, seen, old.value);
  b.branch(latch);
  b.begin_block(latch);
  b.add_incoming(old, seen, latch);
  b.branch_cond(done, merge, header);
  b.begin_block(merge);
  e.merge_inner_count();
  if (o.semantics & (spv::MemorySemanticsAcquireMask | spv::MemorySemanticsAcquireReleaseMask))
    b.op_void(spv::OpMemoryBarrier, {scope, b.semantics(kAcquire)});
  return element_of(old.value);
}

/// The word holding an element: the element itself for 4- and 8-byte ones; else the aligned u32
/// around it, with the element's bit offset.
Value word_address(Emitter& e, Value address, DType dtype, uint32_t* word, Value* shift) {
  Builder& b = e.b;
  uint32_t size = static_cast<uint32_t>(ir::dtype_bytes(dtype));
  *word = b.t_uint(size == 8 ? 64 : 32);
  if (size >= 4) return address;
  uint32_t u64 = b.t_uint(64);
  Value byte = b.convert(spv::OpUConvert, b.t_uint(32),
                         b.binary(spv::OpBitwiseAnd, address, b.c_int(u64, 3)));
  *shift = b.binary(spv::OpShiftLeftLogical, byte, b.c_u32(3));
  return b.binary(spv::OpBitwiseAnd, address, b.c_int(u64, ~uint64_t{3}));
}

Value rmw(Emitter& e, const ir::Op& op, AtomicOp kind, DType dtype, Value address, Value val,
          const Ordering& o) {
  Builder& b = e.b;
  uint32_t size = static_cast<uint32_t>(ir::dtype_bytes(dtype));
  if (size == 8) e.require_cap(target::Cap::Int64Atomics, &op, "a 64-bit atomic");
  if (size == 1) e.require_cap(target::Cap::Int8, &op, "an 8-bit atomic");
  bool is_float = ir::is_float(dtype);
  uint32_t type = e.value_type(dtype);
  auto native = [&](spv::Op opcode, uint32_t t, Value v) {
    return b.op(opcode, t,
                {e.psb_pointer(address, t), b.scope(o.scope), b.semantics(o.semantics), v});
  };
  if (size >= 4 && !is_float) return native(int_opcode(kind, ir::is_signed_int(dtype)), type, val);
  if (size >= 4 && kind == AtomicOp::Xchg) {
    uint32_t uint = b.t_uint(size * 8);
    return b.bitcast(type, native(spv::OpAtomicExchange, uint, b.bitcast(uint, val)));
  }
  if (dtype == DType::f32 && kind == AtomicOp::Add && e.target.has(target::Cap::FloatAtomicAdd))
    return native(spv::OpAtomicFAddEXT, type, val);
  // Float max/min always take the CAS loop, even where SPV_EXT_shader_atomic_float_min_max is
  // present: the extension leaves the order of -0 and +0 to the driver (lavapipe's max of -0 and
  // +0 kept -0), and the tile IR orders -0 < +0.
  uint32_t word = 0;
  Value shift;
  Value at = word_address(e, address, dtype, &word, &shift);
  return cas_loop(e, at, word, shift, dtype, o, [&](Value old) {
    if (kind == AtomicOp::Xchg) return val;
    // Float max/min ignore a NaN operand, like the interpreter's atomics.
    return e.binary_value(binary_kind(kind), dtype, old, val, /*propagate=*/false);
  });
}

/// A compare-exchange compares bits, so floats are exchanged as integers of their width.
Value cas(Emitter& e, const ir::Op& op, DType dtype, Value address, Value cmp, Value val,
          const Ordering& o) {
  Builder& b = e.b;
  uint32_t size = static_cast<uint32_t>(ir::dtype_bytes(dtype));
  if (size == 8) e.require_cap(target::Cap::Int64Atomics, &op, "a 64-bit atomic");
  if (size == 1) e.require_cap(target::Cap::Int8, &op, "an 8-bit atomic");
  uint32_t type = e.value_type(dtype);
  if (size >= 4) {
    uint32_t uint = b.t_uint(size * 8);
    Value seen = b.op(spv::OpAtomicCompareExchange, uint,
                      {e.psb_pointer(address, uint), b.scope(o.scope), b.semantics(o.semantics),
                       b.semantics(o.on_failure), b.bitcast(uint, val), b.bitcast(uint, cmp)});
    return b.bitcast(type, seen);
  }
  uint32_t word = 0;
  Value shift;
  Value at = word_address(e, address, dtype, &word, &shift);
  uint32_t bits = b.t_uint(size * 8);
  auto bits_of = [&](Value v) { return b.bitcast(bits, e.to_memory(v, dtype)); };
  Value cmp_bits = bits_of(cmp);
  return cas_loop(e, at, word, shift, dtype, o, [&](Value old) {
    return b.select(b.compare(spv::OpIEqual, bits_of(old), cmp_bits), val, old);
  });
}

}  // namespace

void Emitter::emit_atomic_rmw(const ir::Op& op) {
  ir::AtomicRmwOp a(&op);
  DType dtype = a.ptr()->type.dtype;
  Ordering o = ordering(a.sem(), a.scope());
  std::optional<int64_t> mask = a.mask() ? constant_of(a.mask()) : std::optional<int64_t>(1);
  auto atomic = [&] { return rmw(*this, op, a.atomic_op(), dtype, get(a.ptr()), get(a.val()), o); };
  if (mask && *mask) return set(op.result(), atomic());
  // Masked-off lanes touch no memory and yield zero bits, as in the interpreter.
  uint32_t entry = b.current_label(), then = b.new_label(), merge = b.new_label();
  b.selection_merge(merge);
  b.branch_cond(get(a.mask()), then, merge);
  b.begin_block(then);
  Value old = atomic();
  uint32_t then_end = b.current_label();
  b.branch(merge);
  b.begin_block(merge);
  PhiRef phi = b.phi(old.type);
  b.add_incoming(phi, old, then_end);
  b.add_incoming(phi, b.c_null(old.type), entry);
  set(op.result(), phi.value);
}

void Emitter::emit_atomic_cas(const ir::Op& op) {
  ir::AtomicCasOp a(&op);
  Ordering o = ordering(a.sem(), a.scope());
  set(op.result(),
      cas(*this, op, a.ptr()->type.dtype, get(a.ptr()), get(a.cmp()), get(a.val()), o));
}

}  // namespace tessera::spirv::impl
