/// \file The SIMT-only ops' subgroup and workgroup side: built-in variables, shuffles (with the
/// IR's "past the end gives your own value" rule) and the workgroup barrier.
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

Value Emitter::builtin(spv::BuiltIn which, uint32_t type) {
  auto it = builtins_.find(which);
  if (it == builtins_.end()) {
    Value var = b.variable(b.t_pointer(spv::StorageClassInput, type));
    b.decorate(var.id, spv::DecorationBuiltIn, {static_cast<uint32_t>(which)});
    interface_.push_back(var.id);
    it = builtins_.emplace(which, var).first;
  }
  return b.load(type, it->second, 0, false);
}

namespace {

spv::Op shuffle_opcode(ir::ShuffleMode mode) {
  switch (mode) {
    case ir::ShuffleMode::Xor:
      return spv::OpGroupNonUniformShuffleXor;
    case ir::ShuffleMode::Idx:
      return spv::OpGroupNonUniformShuffle;
    case ir::ShuffleMode::Up:
      return spv::OpGroupNonUniformShuffleUp;
    case ir::ShuffleMode::Down:
      return spv::OpGroupNonUniformShuffleDown;
  }
  return spv::OpGroupNonUniformShuffle;
}

}  // namespace

/// Shuffles move 32-bit words, booleans and f32/f64 natively; 8- and 16-bit values travel
/// zero-extended and 64-bit integers as two words, so no shaderSubgroupExtendedTypes is needed.
void Emitter::emit_shuffle(const ir::Op& op) {
  require_cap(target::Cap::SubgroupShuffle, &op, "a subgroup shuffle");
  ir::ShuffleOp s(&op);
  Value v = get(s.value());
  uint32_t u32 = b.t_uint(32);
  Value n = b.bitcast(u32, get(s.lane()));
  Value carried = v;
  uint32_t bits = b.is_bool(v.type) ? 1 : b.width(v.type);
  if (bits == 8 || bits == 16)
    carried = b.convert(spv::OpUConvert, u32, b.bitcast(b.t_uint(bits), v));
  if (bits == 64) carried = b.bitcast(b.t_vector(u32, 2), v);
  Value r;
  bool shift = s.mode() == ir::ShuffleMode::Up || s.mode() == ir::ShuffleMode::Down;
  std::optional<int64_t> distance = constant_of(s.lane());
  if (!shift || (distance && *distance >= 0)) {
    r = b.op(shuffle_opcode(s.mode()), carried.type, {b.scope(spv::ScopeSubgroup), carried, n});
  }
  if (shift) {
    // Past the subgroup's end a lane keeps its own value: up when lane < n, down when
    // lane + n >= S. A distance not known to be non-negative reads the computed lane instead.
    Value lane = builtin(spv::BuiltInSubgroupLocalInvocationId, u32);
    Value size = b.c_u32(static_cast<uint32_t>(ir::simt_subgroup(fn)));
    bool up = s.mode() == ir::ShuffleMode::Up;
    if (r.id) {
      Value own = up ? b.compare(spv::OpULessThan, lane, n)
                     : b.compare(spv::OpUGreaterThanEqual, n, b.binary(spv::OpISub, size, lane));
      r = b.select(own, carried, r);  // a scalar condition may select vectors (SPIR-V 1.4)
    } else {
      Value source = b.binary(up ? spv::OpISub : spv::OpIAdd, lane, n);  // wraps below 0
      Value outside = b.compare(spv::OpUGreaterThanEqual, source, size);
      r = b.op(spv::OpGroupNonUniformShuffle, carried.type,
               {b.scope(spv::ScopeSubgroup), carried, b.select(outside, lane, source)});
    }
  }
  if (bits == 8 || bits == 16) r = b.bitcast(v.type, b.convert(spv::OpUConvert, b.t_uint(bits), r));
  if (bits == 64) r = b.bitcast(v.type, r);
  set(op.result(), r);
}

/// Shared-memory writes before the barrier are made available, and visible after it, to the
/// workgroup (Vulkan memory model: shared and global accesses are NonPrivatePointer); with
/// `global = 1` (debug_barrier) global-memory (UniformMemory) writes too.
void Emitter::emit_barrier(const ir::Op& op) {
  if (op.has_attr(attr::kThreadCount))
    unsupported(&op,
                "a named barrier of part of the workgroup (SPIR-V's barriers are the whole "
                "workgroup's),");
  uint32_t semantics = spv::MemorySemanticsAcquireReleaseMask |
                       spv::MemorySemanticsWorkgroupMemoryMask |
                       spv::MemorySemanticsMakeAvailableMask | spv::MemorySemanticsMakeVisibleMask;
  if (op.int_attr_or(attr::kGlobal, 0) != 0) semantics |= spv::MemorySemanticsUniformMemoryMask;
  b.op_void(spv::OpControlBarrier,
            {b.scope(spv::ScopeWorkgroup), b.scope(spv::ScopeWorkgroup), b.semantics(semantics)});
}

}  // namespace tessera::spirv::impl
