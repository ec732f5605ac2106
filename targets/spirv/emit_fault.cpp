/// \file The fault channel (target::FaultWords): device asserts, and the loop counting of targets
/// whose driver ends loops early (Target::loop_limit). Vulkan has no trap: a failing invocation
/// claims the record, fills it and runs on; the runtime reports the fault when it next waits.
#include "targets/spirv/emitter.h"

#include <algorithm>
#include <cstddef>
#include <iterator>

#include "core/ir/ops.h"
#include "core/target/artifact.h"

namespace tessera::spirv::impl {

namespace {

constexpr uint32_t word_offset(size_t byte_offset) {
  return static_cast<uint32_t>(byte_offset);
}

bool has_assert(const ir::Function& fn) {
  bool found = false;
  ir::walk(fn.body, [&](const ir::Op* op) { found |= op->kind == ir::OpKind::Assert; });
  return found;
}

}  // namespace

bool Emitter::wants_fault_channel() const {
  return target.loop_limit > 0 || has_assert(fn);
}

void Emitter::declare_loop_counters() {
  if (target.loop_limit <= 0) return;
  // The driver's count must be the kernel's: a loop the driver unrolled would count here only.
  b.loop_control = spv::LoopControlDontUnrollMask;
  uint32_t u32 = b.t_uint(32);
  uint32_t pointer = b.t_pointer(spv::StorageClassPrivate, u32);
  loop_count_ = b.variable(pointer);
  loop_first_ = b.variable(pointer);
  b.name(loop_count_.id, "loop_iterations");
  b.name(loop_first_.id, "loop_at_limit");
  interface_.push_back(loop_count_.id);
  interface_.push_back(loop_first_.id);
  b.store(loop_count_, b.c_u32(0), 0, false);
  b.store(loop_first_, b.c_u32(0), 0, false);
}

uint32_t Emitter::fault_code(std::string text) {
  faults_.push_back(std::move(text));
  return static_cast<uint32_t>(faults_.size());
}

void Emitter::raise_fault(Value failed, Value code, const std::vector<Value>& index,
                          const std::vector<Value>& values) {
  TESSERA_CHECK(fault_offset_ >= 0, "SPIR-V: a fault in kernel '", fn.name,
                "' without a fault channel");
  uint32_t u32 = b.t_uint(32), u64 = b.t_uint(64);
  uint32_t merge = b.new_label(), fail = b.new_label(), claim = b.new_label(),
           write = b.new_label();
  b.selection_merge(merge);
  b.branch_cond(failed, fail, merge);
  b.begin_block(fail);
  Value record = load_param_word(static_cast<uint32_t>(fault_offset_), u64);
  uint32_t claimed = b.new_label();
  Value have = b.compare(spv::OpINotEqual, record, b.c_int(u64, 0));
  b.selection_merge(claimed);  // a launch without a record (address 0) drops its faults
  b.branch_cond(have, claim, claimed);
  b.begin_block(claim);
  Value old = b.op(spv::OpAtomicCompareExchange, u32,
                   {psb_pointer(record, u32), b.scope(spv::ScopeDevice), b.semantics(0),
                    b.semantics(0), b.c_u32(1), b.c_u32(0)});
  uint32_t written = b.new_label();
  Value first = b.compare(spv::OpIEqual, old, b.c_u32(0));
  b.selection_merge(written);  // the first failing invocation fills the record
  b.branch_cond(first, write, written);
  b.begin_block(write);
  auto store = [&](size_t offset, Value v) {
    Value at = b.binary(spv::OpIAdd, record, b.c_int(u64, word_offset(offset)));
    b.store(psb_pointer(at, u32), v, 4, true);
  };
  using target::FaultWords;
  store(offsetof(FaultWords, code), code);
  store(offsetof(FaultWords, launch),
        load_param_word(static_cast<uint32_t>(fault_offset_) + 8, u32));
  for (size_t k = 0; k < 3; ++k)
    store(offsetof(FaultWords, program) + 4 * k, b.bitcast(u32, program_id_[k]));
  store(offsetof(FaultWords, thread), builtin(spv::BuiltInLocalInvocationIndex, u32));
  size_t rank = std::min<size_t>(index.size(), 4);
  store(offsetof(FaultWords, rank), b.c_u32(static_cast<uint32_t>(rank)));
  for (size_t k = 0; k < rank; ++k)
    store(offsetof(FaultWords, index) + 4 * k, b.bitcast(u32, index[k]));
  size_t reported = std::min(values.size(), std::size(FaultWords{}.values));
  store(offsetof(FaultWords, num_values), b.c_u32(static_cast<uint32_t>(reported)));
  for (size_t k = 0; k < reported; ++k) {
    Value at = b.binary(spv::OpIAdd, record,
                        b.c_int(u64, word_offset(offsetof(FaultWords, values) + 8 * k)));
    b.store(psb_pointer(at, u64), values[k], 8, true);
  }
  b.branch(written);
  b.begin_block(written);
  b.branch(claimed);
  b.begin_block(claimed);
  b.branch(merge);
  b.begin_block(merge);
}

void Emitter::emit_assert(const ir::Op& op) {
  ir::SimtDebugOp d(&op);
  std::vector<Value> index;
  for (int k = 0; k < d.rank(); ++k) index.push_back(get(d.indices()[k]));
  std::vector<Value> values;  // each widened to 64 bits by its signedness
  for (const ir::Value* v : d.values()) {
    int bits = ir::dtype_bits(v->type.dtype);
    Value x = get(v);
    if (bits < 64)
      x = b.convert(ir::is_signed_int(v->type.dtype) ? spv::OpSConvert : spv::OpUConvert,
                    b.t_int(64, ir::is_signed_int(v->type.dtype)), x);
    values.push_back(b.bitcast(b.t_uint(64), x));
  }
  uint32_t code = fault_code(ir::assert_heading(op) + " in kernel " + fn.name + " at " +
                             op.loc.str() + ": " + op.str_attr_or(attr::kMessage, ""));
  raise_fault(b.unary(spv::OpLogicalNot, get(d.value())), b.c_u32(code), index, values);
}

/// lavapipe's count (gallivm, Mesa 22.3): every pass through a loop's body decrements one
/// counter per invocation at the pass's end, the pass that leaves the loop included, and once it
/// reaches 0 the loop ends there (measured: a loop counting to 100000 stops at 65535; 300 x 300
/// nested loops run 65101 inner iterations; 30000 x 3 run 65531). The kernel counts each pass at
/// its loop's header (a continue construct may run at the start of the next pass, so the count
/// cannot live there) and checks at the end of the pass's body, where the passes of nested loops
/// have been counted too: a pass that reaches the limit while the loop would go on is where
/// lavapipe cuts the loop short, and the loop is noted. The passes of the enclosing loops are
/// counted at their headers but decremented by lavapipe only at their ends: a loop nested `depth`
/// loops deep compares with the limit plus that. Where the kernel cannot tell whether the loop goes
/// on (a while loop's condition comes in the next pass) it assumes so: a loop ending exactly at the
/// limit is then reported all the same. The model is measured, not specified: the check keeps a
/// margin of kLoopMargin passes (a while loop after others was cut one pass earlier than counted).
constexpr int64_t kLoopMargin = 16;

void Emitter::count_iteration() {
  uint32_t u32 = b.t_uint(32);
  b.store(loop_count_, b.binary(spv::OpIAdd, b.load(u32, loop_count_, 0, false), b.c_u32(1)), 0,
          false);
}

void Emitter::note_loop_limit(const ir::Op& op, Value continues, int depth) {
  uint32_t u32 = b.t_uint(32);
  Value count = b.load(u32, loop_count_, 0, false);
  auto [it, fresh] = loop_codes_.try_emplace(&op, 0);
  if (fresh)
    it->second =
        fault_code("kernel " + fn.name + ": " +
                   (op.kind == ir::OpKind::For || op.kind == ir::OpKind::While
                        ? "the loop at "
                        : "the loop of '" + std::string(op.name()) + "' at ") +
                   op.loc.str() + " reached the limit of " + std::to_string(target.loop_limit) +
                   " loop iterations per invocation (all loops counted " + "together) of " +
                   target.name + ", whose driver ends loops there without an error; " +
                   "give each program fewer iterations (more programs, larger blocks)");
  Value limit = b.c_u32(static_cast<uint32_t>(
      std::clamp<int64_t>(target.loop_limit + depth - kLoopMargin, 1, UINT32_MAX)));
  Value hit =
      b.binary(spv::OpLogicalAnd, b.compare(spv::OpUGreaterThanEqual, count, limit), continues);
  Value first = b.load(u32, loop_first_, 0, false);
  Value take = b.binary(spv::OpLogicalAnd, hit, b.compare(spv::OpIEqual, first, b.c_u32(0)));
  b.store(loop_first_, b.select(take, b.c_u32(it->second), first), 0, false);
}

void Emitter::count_inner_pass() {
  if (!loop_counting()) return;
  TESSERA_CHECK(current_op_ != nullptr, "SPIR-V: an inner loop outside an op");
  // No loop nests in these: the header is the pass's end as far as the count goes.
  count_iteration();
  note_loop_limit(*current_op_, b.c_bool(true), loop_depth_);
}

void Emitter::merge_inner_count() {
  if (!loop_counting()) return;
  // Leaving through the continue construct (the compare-and-swap loop) takes lavapipe one pass
  // more: the construct runs at the start of the next pass.
  count_iteration();
  uint32_t u32 = b.t_uint(32);
  Value most = b.op(spv::OpGroupNonUniformUMax, u32,
                    {b.scope(spv::ScopeSubgroup), static_cast<uint32_t>(spv::GroupOperationReduce),
                     b.load(u32, loop_count_, 0, false)});
  b.store(loop_count_, most, 0, false);
}

void Emitter::report_loop_limit() {
  if (target.loop_limit <= 0 || loop_codes_.empty()) return;
  Value first = b.load(b.t_uint(32), loop_first_, 0, false);
  raise_fault(b.compare(spv::OpINotEqual, first, b.c_u32(0)), first, {});
}

}  // namespace tessera::spirv::impl
