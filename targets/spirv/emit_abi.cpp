/// \file The kernel's entry: the parameter block (push constants, or a buffer whose address is
/// pushed), the logical grid and the early return of workgroups past it, and the program ids.
#include "core/ir/abi.h"
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;

/// The block is a struct with one member per 4- or 8-byte parameter (of its type; pointers are
/// u64), one u32 per word holding
/// narrower parameters (so no 8/16-bit push-constant capability is needed), and the three grid
/// words. Members are laid out at the ABI's offsets.
void Emitter::emit_prologue() {
  ir::ParamLayout layout = ir::param_layout(fn);
  grid_offset_ = (layout.size + 3) / 4 * 4;
  param_bytes_ = grid_offset_ + 12;
  if (wants_fault_channel()) {  // the record's address (8-byte aligned), then the launch tag
    fault_offset_ = (param_bytes_ + 7) / 8 * 8;
    param_bytes_ = static_cast<uint32_t>(fault_offset_) + 12;
  }
  if (wants_print_channel()) {  // the buffer's address, its capacity in records, the launch tag
    print_offset_ = (param_bytes_ + 7) / 8 * 8;
    param_bytes_ = static_cast<uint32_t>(print_offset_) + 16;
  }
  params_by_address_ = param_bytes_ > static_cast<uint32_t>(target.push_constant_bytes);

  std::map<uint32_t, uint32_t> members;  // offset -> type
  for (size_t i = 0; i < layout.slots.size(); ++i) {
    const ir::ParamSlot& slot = layout.slots[i];
    if (slot.size >= 4)
      members[slot.offset] = value_type(fn.params[i].value->type);
    else
      members[slot.offset & ~3u] = b.t_uint(32);
  }
  for (uint32_t k = 0; k < 3; ++k) members[grid_offset_ + 4 * k] = b.t_uint(32);
  if (fault_offset_ >= 0) {
    members[static_cast<uint32_t>(fault_offset_)] = b.t_uint(64);
    members[static_cast<uint32_t>(fault_offset_) + 8] = b.t_uint(32);
  }
  if (print_offset_ >= 0) {
    members[static_cast<uint32_t>(print_offset_)] = b.t_uint(64);
    members[static_cast<uint32_t>(print_offset_) + 8] = b.t_uint(32);
    members[static_cast<uint32_t>(print_offset_) + 12] = b.t_uint(32);
  }
  for (const auto& [offset, type] : members) {
    member_of_offset_[offset] = static_cast<uint32_t>(member_types_.size());
    member_types_.push_back(type);
  }
  params_struct_ = b.t_struct(member_types_);
  b.name(params_struct_, "Params");
  b.decorate(params_struct_, spv::DecorationBlock);
  for (const auto& [offset, index] : member_of_offset_)
    b.decorate_member(params_struct_, index, spv::DecorationOffset, {offset});

  if (!params_by_address_) {
    params_base_ = b.variable(b.t_pointer(spv::StorageClassPushConstant, params_struct_));
    b.name(params_base_.id, "params");
  } else {
    uint32_t u64 = b.t_uint(64);
    uint32_t push = b.t_struct({u64});
    b.name(push, "ParamsAddress");
    b.decorate(push, spv::DecorationBlock);
    b.decorate_member(push, 0, spv::DecorationOffset, {0});
    Value var = b.variable(b.t_pointer(spv::StorageClassPushConstant, push));
    b.name(var.id, "params_address");
    interface_.push_back(var.id);
    Value field =
        b.access_chain(b.t_pointer(spv::StorageClassPushConstant, u64), var, {b.c_u32(0)});
    params_base_ = psb_pointer(b.load(u64, field, 0, false), params_struct_);
  }
  if (!params_by_address_) interface_.push_back(params_base_.id);

  // The logical grid, the linear index of this workgroup in the dispatched grid, and the early
  // return of the workgroups past the logical grid's end.
  uint32_t u32 = b.t_uint(32), i32 = b.t_int(32, true);
  Value grid[3];
  for (uint32_t k = 0; k < 3; ++k) grid[k] = load_param_word(grid_offset_ + 4 * k, u32);
  Value wg = builtin(spv::BuiltInWorkgroupId, b.t_vector(u32, 3));
  Value nwg = builtin(spv::BuiltInNumWorkgroups, b.t_vector(u32, 3));
  Value wx = b.extract(u32, wg, 0), wy = b.extract(u32, wg, 1), wz = b.extract(u32, wg, 2);
  Value nx = b.extract(u32, nwg, 0), ny = b.extract(u32, nwg, 1);
  Value plane = b.binary(spv::OpIMul, nx, ny);
  Value linear = b.binary(spv::OpIAdd, b.binary(spv::OpIAdd, wx, b.binary(spv::OpIMul, wy, nx)),
                          b.binary(spv::OpIMul, wz, plane));
  Value gxy = b.binary(spv::OpIMul, grid[0], grid[1]);
  Value past = b.compare(spv::OpUGreaterThanEqual, linear, b.binary(spv::OpIMul, gxy, grid[2]));
  uint32_t exit = b.new_label(), body = b.new_label();
  b.selection_merge(body);
  b.branch_cond(past, exit, body);
  b.begin_block(exit);
  b.ret();
  b.begin_block(body);

  Value ids[3] = {b.binary(spv::OpUMod, linear, grid[0]),
                  b.binary(spv::OpUMod, b.binary(spv::OpUDiv, linear, grid[0]), grid[1]),
                  b.binary(spv::OpUDiv, linear, gxy)};
  for (int k = 0; k < 3; ++k) {
    program_id_[k] = b.bitcast(i32, ids[k]);
    num_programs_[k] = b.bitcast(i32, grid[k]);
  }
  for (size_t i = 0; i < fn.params.size(); ++i)
    set(fn.params[i].value, param_value(fn.params[i].value->type, layout.slots[i].offset));
  declare_loop_counters();
  declare_print_counter();
}

/// The block member at `offset` (a 4- or 8-byte word of `type`).
Value Emitter::load_param_word(uint32_t offset, uint32_t type) {
  auto it = member_of_offset_.find(offset);
  TESSERA_CHECK(it != member_of_offset_.end(), "SPIR-V: no parameter word at offset ", offset);
  spv::StorageClass storage =
      params_by_address_ ? spv::StorageClassPhysicalStorageBuffer : spv::StorageClassPushConstant;
  Value field = b.access_chain(b.t_pointer(storage, type), params_base_, {b.c_u32(it->second)});
  // The block buffer is 8-byte aligned, so each member is aligned to its size.
  return b.load(type, field, params_by_address_ ? b.byte_size(type) : 0, false);
}

/// A parameter of `type` at `offset`: whole words are bitcast, narrower values are extracted
/// from their word (little-endian).
Value Emitter::param_value(const ir::Type& type, uint32_t offset) {
  uint32_t size = ir::param_size(type);
  uint32_t vt = value_type(type);
  if (size >= 4) return load_param_word(offset, vt);  // a member of the parameter's own type
  uint32_t u32 = b.t_uint(32);
  Value word = load_param_word(offset & ~3u, u32);
  if (offset % 4) word = b.binary(spv::OpShiftRightLogical, word, b.c_u32(offset % 4 * 8));
  DType d = type.dtype;
  if (d == DType::i1)
    return b.compare(spv::OpINotEqual, b.binary(spv::OpBitwiseAnd, word, b.c_u32(0xff)),
                     b.c_u32(0));
  if (d == DType::bf16) {
    Value bits = b.binary(spv::OpShiftLeftLogical, word, b.c_u32(16));
    return b.bitcast(vt, bits);
  }
  Value narrow = b.convert(spv::OpUConvert, b.t_uint(size * 8), word);
  return b.bitcast(vt, narrow);
}

Value Emitter::grid_is_empty() {
  Value grid_x = num_programs_[0];
  return b.compare(spv::OpIEqual, grid_x, b.c_int(grid_x.type, 0));
}

}  // namespace tessera::spirv::impl
