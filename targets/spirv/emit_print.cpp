/// \file Device print on Vulkan (target::Artifact::print_offset, PrintRecord): a kernel cannot
/// call printf, so each `print` appends a record to a host-visible buffer whose address comes in
/// the parameter block; the runtime formats the records once the launch has finished.
#include <array>
#include <cstddef>
#include <string>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

namespace {

using Record = target::Artifact::PrintRecord;
using Header = target::Artifact::PrintHeader;

bool has_print(const ir::Function& fn) {
  bool found = false;
  ir::walk(fn.body, [&](const ir::Op* op) { found |= op->kind == ir::OpKind::Print; });
  return found;
}

/// Prints from one tile-level print: the lowering emits one site per register of the tile, one
/// after the other in one region, with the same attributes, location and type.
bool same_statement(const ir::Op* a, const ir::Op& b) {
  return a && a->parent == b.parent && a->attrs == b.attrs && a->loc.str() == b.loc.str() &&
         a->operands.back()->type == b.operands.back()->type;
}

/// The value's bits as two u32 words (low, high), zero-extended; bf16 as its 16 bits, i1 as 0/1.
std::array<Value, 2> value_words(Emitter& e, Value v, const ir::Type& type) {
  Builder& b = e.b;
  uint32_t u32 = b.t_uint(32);
  Value zero = b.c_u32(0);
  if (type.is_ptr || ir::dtype_bits(type.dtype) == 64) {
    uint32_t u64 = b.t_uint(64);
    Value bits = type.is_ptr ? v : b.bitcast(u64, v);
    Value high = b.binary(spv::OpShiftRightLogical, bits, b.c_int(u64, 32));
    return {b.convert(spv::OpUConvert, u32, bits), b.convert(spv::OpUConvert, u32, high)};
  }
  switch (type.dtype) {
    case ir::DType::i1:
      return {b.select(v, b.c_u32(1), zero), zero};
    case ir::DType::bf16:  // an f32 holding a bf16 value: its high half
      return {b.binary(spv::OpShiftRightLogical, b.bitcast(u32, v), b.c_u32(16)), zero};
    default:
      break;
  }
  int bits = ir::dtype_bits(type.dtype);
  if (bits == 32) return {b.bitcast(u32, v), zero};
  return {b.convert(spv::OpUConvert, u32, b.bitcast(b.t_uint(static_cast<uint32_t>(bits)), v)),
          zero};
}

}  // namespace

bool Emitter::wants_print_channel() const {
  return has_print(fn);
}

void Emitter::declare_print_counter() {
  if (print_offset_ < 0) return;
  uint32_t u32 = b.t_uint(32);
  print_pass_ = b.variable(b.t_pointer(spv::StorageClassPrivate, u32));
  b.name(print_pass_.id, "print_passes");
  interface_.push_back(print_pass_.id);
  b.store(print_pass_, b.c_u32(0), 0, false);
}

/// Between two passes begun, an invocation runs forward through the code, so (passes begun, site)
/// orders its prints as it ran them; tile-level loops are uniform in a program, so the count is
/// the same in every invocation at the same point and orders the records across threads too.
void Emitter::count_print_pass(const ir::Region& region) {
  const ir::Op* loop = region.parent;
  if (!loop || loop->regions.empty() || loop->region(0) != &region) return;
  if (loop->kind != ir::OpKind::For && loop->kind != ir::OpKind::While) return;
  uint32_t u32 = b.t_uint(32);
  b.store(print_pass_, b.binary(spv::OpIAdd, b.load(u32, print_pass_, 0, false), b.c_u32(1)), 0,
          false);
}

/// Reserves a record (an atomic add on the header's count); within the capacity, fills it with
/// the site's code, the launch tag, the program and thread ids, the passes begun, the element's
/// index and the value; past it, counts a dropped record. A launch without a buffer (address 0)
/// drops its prints.
void Emitter::emit_print(const ir::Op& op) {
  TESSERA_CHECK(print_offset_ >= 0, "SPIR-V: a print in kernel '", fn.name,
                "' without a print channel");
  ir::SimtDebugOp d(&op);
  const ir::Type& type = d.value()->type;
  const int rank = d.rank();
  if (rank > 4)
    unsupported(&op, "print of a tile of rank " + std::to_string(rank) + " (at most 4)");
  target::Artifact::PrintSite site;
  if (!prints_.empty())
    site.statement = prints_.back().statement + (same_statement(last_print_, op) ? 0 : 1);
  site.prefix = op.str_attr_or(attr::kPrefix, "");
  site.dtype = type.dtype;
  site.is_ptr = type.is_ptr;
  site.hex = op.int_attr_or(attr::kHex, 0) != 0;
  site.rank = rank;
  prints_.push_back(std::move(site));
  last_print_ = &op;
  const uint32_t code = static_cast<uint32_t>(prints_.size());

  uint32_t u32 = b.t_uint(32), u64 = b.t_uint(64);
  const uint32_t at = static_cast<uint32_t>(print_offset_);
  std::array<Value, 2> value = value_words(*this, get(d.value()), type);
  Value buffer = load_param_word(at, u64);
  uint32_t done = b.new_label(), reserve = b.new_label();
  Value have = b.compare(spv::OpINotEqual, buffer, b.c_int(u64, 0));
  b.selection_merge(done);
  b.branch_cond(have, reserve, done);
  b.begin_block(reserve);
  auto word = [&](Value address, size_t offset) {
    return psb_pointer(b.binary(spv::OpIAdd, address, b.c_int(u64, offset)), u32);
  };
  Value slot = b.op(spv::OpAtomicIAdd, u32,
                    {word(buffer, offsetof(Header, count)), b.scope(spv::ScopeDevice),
                     b.semantics(0), b.c_u32(1)});
  uint32_t reserved = b.new_label(), write = b.new_label(), full = b.new_label();
  Value fits = b.compare(spv::OpULessThan, slot, load_param_word(at + 8, u32));
  b.selection_merge(reserved);
  b.branch_cond(fits, write, full);
  b.begin_block(write);
  Value record = b.binary(
      spv::OpIAdd, b.binary(spv::OpIAdd, buffer, b.c_int(u64, sizeof(Header))),
      b.binary(spv::OpIMul, b.convert(spv::OpUConvert, u64, slot), b.c_int(u64, sizeof(Record))));
  auto store = [&](size_t offset, Value v) { b.store(word(record, offset), v, 4, true); };
  store(offsetof(Record, code), b.c_u32(code));
  store(offsetof(Record, launch), load_param_word(at + 12, u32));
  for (size_t k = 0; k < 3; ++k)
    store(offsetof(Record, program) + 4 * k, b.bitcast(u32, program_id_[k]));
  store(offsetof(Record, thread), builtin(spv::BuiltInLocalInvocationIndex, u32));
  store(offsetof(Record, pass), b.load(u32, print_pass_, 0, false));
  for (int k = 0; k < rank; ++k)
    store(offsetof(Record, index) + 4 * static_cast<size_t>(k),
          b.bitcast(u32, get(d.indices()[k])));
  store(offsetof(Record, value), value[0]);
  store(offsetof(Record, value) + 4, value[1]);
  b.branch(reserved);
  b.begin_block(full);
  b.op(spv::OpAtomicIAdd, u32,
       {word(buffer, offsetof(Header, dropped)), b.scope(spv::ScopeDevice), b.semantics(0),
        b.c_u32(1)});
  b.branch(reserved);
  b.begin_block(reserved);
  b.branch(done);
  b.begin_block(done);
}

}  // namespace tessera::spirv::impl
