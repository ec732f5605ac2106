/// \file The SPIR-V builder's function half: blocks, instruction encoding, phis and structured
/// control flow, and the module's layout in the specification's section order.
#include "targets/spirv/builder.h"

#include "core/support/error.h"

namespace tessera::spirv {
namespace {

void append(std::vector<uint32_t>& out, spv::Op opcode, const std::vector<uint32_t>& words) {
  out.push_back(static_cast<uint32_t>(words.size() + 1) << 16 | static_cast<uint32_t>(opcode));
  out.insert(out.end(), words.begin(), words.end());
}

}  // namespace

// --- functions and blocks ------------------------------------------------------------------------

uint32_t Builder::begin_function(std::string_view fn_name) {
  uint32_t void_type = t_void();
  uint32_t fn_type = t_function(void_type, {});
  uint32_t id = next_id_++;
  name(id, fn_name);
  functions_.push_back(
      {{spv::OpFunction, {void_type, id, spv::FunctionControlMaskNone, fn_type}}, {}});
  begin_block(new_label());
  return id;
}

void Builder::end_function() {
  TESSERA_CHECK(!functions_.empty() && terminated(), "function ends in an open block");
}

void Builder::begin_block(uint32_t label) {
  TESSERA_CHECK(!functions_.empty(), "block outside a function");
  auto& blocks = functions_.back().blocks;
  TESSERA_CHECK(blocks.empty() || terminated(), "block ", label, " starts before ",
                blocks.back().label, " ends");
  blocks.push_back({label, {}});
  current_block_ = blocks.size() - 1;
}

Builder::Block& Builder::block() {
  TESSERA_CHECK(!functions_.empty() && !functions_.back().blocks.empty(), "no current block");
  return functions_.back().blocks[current_block_];
}

uint32_t Builder::current_label() const {
  return functions_.back().blocks[current_block_].label;
}

bool Builder::terminated() const {
  const auto& code = functions_.back().blocks[current_block_].code;
  if (code.empty()) return false;
  spv::Op last = code.back().opcode;
  return last == spv::OpBranch || last == spv::OpBranchConditional || last == spv::OpReturn ||
         last == spv::OpReturnValue || last == spv::OpUnreachable || last == spv::OpKill;
}

// --- instructions
// ----------------------------------------------------------------------------------

void Builder::emit(spv::Op opcode, std::vector<uint32_t> words) {
  TESSERA_CHECK(!terminated(), "instruction after the terminator of block ", current_label());
  block().code.push_back({opcode, std::move(words)});
}

Value Builder::op(spv::Op opcode, uint32_t type, std::initializer_list<Operand> operands) {
  require_for_op(opcode, type);
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id};
  for (const Operand& o : operands) words.push_back(o.word);
  emit(opcode, std::move(words));
  return {id, type};
}

void Builder::op_void(spv::Op opcode, std::initializer_list<Operand> operands) {
  std::vector<uint32_t> words;
  for (const Operand& o : operands) words.push_back(o.word);
  emit(opcode, std::move(words));
}

Value Builder::ext(GLSLstd450 instruction, uint32_t type, std::initializer_list<Value> args) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id, glsl_std_450(), static_cast<uint32_t>(instruction)};
  for (const Value& v : args) words.push_back(v.id);
  emit(spv::OpExtInst, std::move(words));
  return {id, type};
}

Value Builder::bitcast(uint32_t type, Value a) {
  if (a.type == type) return a;
  return op(spv::OpBitcast, type, {a});
}

Value Builder::select(Value cond, Value a, Value b) {
  TESSERA_CHECK(a.type == b.type, "select of different types");
  return op(spv::OpSelect, a.type, {cond, a, b});
}

Value Builder::extract(uint32_t type, Value composite, uint32_t index) {
  return op(spv::OpCompositeExtract, type, {composite, index});
}

Value Builder::construct(uint32_t type, const std::vector<Value>& parts) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id};
  for (const Value& v : parts) words.push_back(v.id);
  emit(spv::OpCompositeConstruct, std::move(words));
  return {id, type};
}

Value Builder::access_chain(uint32_t pointer_type, Value base,
                            std::initializer_list<Value> indices) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{pointer_type, id, base.id};
  for (const Value& v : indices) words.push_back(v.id);
  emit(spv::OpAccessChain, std::move(words));
  return {id, pointer_type};
}

namespace {
std::vector<uint32_t> memory_operands(uint32_t align, bool non_private, AccessHints hints = {}) {
  uint32_t mask = (align ? spv::MemoryAccessAlignedMask : 0) |
                  (non_private ? spv::MemoryAccessNonPrivatePointerMask : 0) |
                  (hints.is_volatile ? spv::MemoryAccessVolatileMask : 0) |
                  (hints.nontemporal ? spv::MemoryAccessNontemporalMask : 0);
  if (!mask) return {};
  if (align) return {mask, align};
  return {mask};
}
}  // namespace

Value Builder::load(uint32_t type, Value pointer, uint32_t align, bool non_private,
                    AccessHints hints) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id, pointer.id};
  for (uint32_t w : memory_operands(align, non_private, hints)) words.push_back(w);
  emit(spv::OpLoad, std::move(words));
  return {id, type};
}

void Builder::store(Value pointer, Value value, uint32_t align, bool non_private,
                    AccessHints hints) {
  std::vector<uint32_t> words{pointer.id, value.id};
  for (uint32_t w : memory_operands(align, non_private, hints)) words.push_back(w);
  emit(spv::OpStore, std::move(words));
}

Value Builder::coopmat_load(uint32_t type, Value pointer, khr::Layout layout, uint32_t stride,
                            bool non_private) {
  TESSERA_CHECK(info(type).kind == TypeKind::CooperativeMatrix, "coopmat load of a non-matrix");
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id, pointer.id, c_u32(static_cast<uint32_t>(layout)).id,
                              c_u32(stride).id};
  for (uint32_t w : memory_operands(0, non_private)) words.push_back(w);
  emit(khr::kOpCooperativeMatrixLoad, std::move(words));
  return {id, type};
}

void Builder::coopmat_store(Value pointer, Value object, khr::Layout layout, uint32_t stride,
                            bool non_private) {
  TESSERA_CHECK(info(object.type).kind == TypeKind::CooperativeMatrix,
                "coopmat store of a non-matrix");
  std::vector<uint32_t> words{pointer.id, object.id, c_u32(static_cast<uint32_t>(layout)).id,
                              c_u32(stride).id};
  for (uint32_t w : memory_operands(0, non_private)) words.push_back(w);
  emit(khr::kOpCooperativeMatrixStore, std::move(words));
}

Value Builder::coopmat_mul_add(Value a, Value b, Value c, uint32_t operands) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{c.type, id, a.id, b.id, c.id};
  if (operands) words.push_back(operands);
  emit(khr::kOpCooperativeMatrixMulAdd, std::move(words));
  return {id, c.type};
}

Value Builder::tensor_layout(uint32_t type) {
  TESSERA_CHECK(info(type).kind == TypeKind::TensorLayout, "OpCreateTensorLayoutNV of a ",
                "type that is not a tensor layout");
  uint32_t id = next_id_++;
  emit(nv::kOpCreateTensorLayout, {type, id});
  return {id, type};
}

Value Builder::tensor_view(uint32_t type) {
  TESSERA_CHECK(info(type).kind == TypeKind::TensorView, "OpCreateTensorViewNV of a ",
                "type that is not a tensor view");
  uint32_t id = next_id_++;
  emit(nv::kOpCreateTensorView, {type, id});
  return {id, type};
}

Value Builder::tensor_update(spv::Op opcode, Value base, TypeKind kind,
                             const std::vector<Value>& ids, size_t expected) {
  TESSERA_CHECK(info(base.type).kind == kind, "tensor layout/view instruction ", opcode,
                " on a value of another type");
  TESSERA_CHECK(ids.size() == expected, "tensor layout/view instruction ", opcode, " takes ",
                expected, " operands, not ", ids.size());
  for (Value v : ids)
    TESSERA_CHECK(info(v.type).kind == TypeKind::Int && info(v.type).width == 32,
                  "tensor layout/view operands are 32-bit integers");
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{base.type, id, base.id};
  for (Value v : ids) words.push_back(v.id);
  emit(opcode, std::move(words));
  return {id, base.type};
}

Value Builder::tensor_layout_dimensions(Value layout, const std::vector<Value>& dims) {
  return tensor_update(nv::kOpTensorLayoutSetDimension, layout, TypeKind::TensorLayout, dims,
                       info(layout.type).count);
}

Value Builder::tensor_layout_strides(Value layout, const std::vector<Value>& strides) {
  return tensor_update(nv::kOpTensorLayoutSetStride, layout, TypeKind::TensorLayout, strides,
                       info(layout.type).count);
}

Value Builder::tensor_layout_slice(Value layout, const std::vector<Value>& offsets_and_spans) {
  return tensor_update(nv::kOpTensorLayoutSlice, layout, TypeKind::TensorLayout, offsets_and_spans,
                       2 * info(layout.type).count);
}

Value Builder::tensor_layout_clamp_value(Value layout, Value value) {
  return tensor_update(nv::kOpTensorLayoutSetClampValue, layout, TypeKind::TensorLayout, {value},
                       1);
}

Value Builder::tensor_view_dimensions(Value view, const std::vector<Value>& dims) {
  return tensor_update(nv::kOpTensorViewSetDimension, view, TypeKind::TensorView, dims,
                       info(view.type).count);
}

Value Builder::tensor_view_strides(Value view, const std::vector<Value>& strides) {
  return tensor_update(nv::kOpTensorViewSetStride, view, TypeKind::TensorView, strides,
                       info(view.type).count);
}

Value Builder::tensor_view_clip(Value view, Value row_offset, Value row_span, Value col_offset,
                                Value col_span) {
  return tensor_update(nv::kOpTensorViewSetClip, view, TypeKind::TensorView,
                       {row_offset, row_span, col_offset, col_span}, 4);
}

namespace {
/// A tensor load's or store's operands after the layout: the memory operand mask (always
/// present), its alignment, then the tensor addressing mask and the view.
std::vector<uint32_t> tensor_operands(uint32_t align, bool non_private, Value view) {
  std::vector<uint32_t> words = memory_operands(align, non_private);
  if (words.empty()) words.push_back(spv::MemoryAccessMaskNone);
  words.push_back(view.id ? nv::kTensorAddressingView : nv::kTensorAddressingNone);
  if (view.id) words.push_back(view.id);
  return words;
}
}  // namespace

Value Builder::coopmat_load_tensor(uint32_t type, Value pointer, Value object, Value layout,
                                   uint32_t align, bool non_private, Value view) {
  TESSERA_CHECK(info(type).kind == TypeKind::CooperativeMatrix && object.type == type,
                "a tensor load makes a cooperative matrix of its object's type");
  TESSERA_CHECK(info(layout.type).kind == TypeKind::TensorLayout, "a tensor load needs a layout");
  TESSERA_CHECK(!view.id || info(view.type).kind == TypeKind::TensorView,
                "a tensor load's view must be a tensor view");
  require(nv::kCapabilityCooperativeMatrixTensorAddressing);
  require_extension(nv::kCooperativeMatrix2Extension);
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{type, id, pointer.id, object.id, layout.id};
  for (uint32_t w : tensor_operands(align, non_private, view)) words.push_back(w);
  emit(nv::kOpCooperativeMatrixLoadTensor, std::move(words));
  return {id, type};
}

void Builder::coopmat_store_tensor(Value pointer, Value object, Value layout, uint32_t align,
                                   bool non_private, Value view) {
  TESSERA_CHECK(info(object.type).kind == TypeKind::CooperativeMatrix,
                "a tensor store writes a cooperative matrix");
  TESSERA_CHECK(info(layout.type).kind == TypeKind::TensorLayout, "a tensor store needs a layout");
  TESSERA_CHECK(!view.id || info(view.type).kind == TypeKind::TensorView,
                "a tensor store's view must be a tensor view");
  require(nv::kCapabilityCooperativeMatrixTensorAddressing);
  require_extension(nv::kCooperativeMatrix2Extension);
  std::vector<uint32_t> words{pointer.id, object.id, layout.id};
  for (uint32_t w : tensor_operands(align, non_private, view)) words.push_back(w);
  emit(nv::kOpCooperativeMatrixStoreTensor, std::move(words));
}

PhiRef Builder::phi(uint32_t type) {
  uint32_t id = next_id_++;
  emit(spv::OpPhi, {type, id});
  return {current_block_, block().code.size() - 1, {id, type}};
}

void Builder::add_incoming(const PhiRef& phi, Value value, uint32_t predecessor) {
  auto& inst = functions_.back().blocks.at(phi.block).code.at(phi.index);
  TESSERA_CHECK(inst.opcode == spv::OpPhi && value.type == phi.value.type, "bad phi incoming");
  inst.words.push_back(value.id);
  inst.words.push_back(predecessor);
}

void Builder::branch(uint32_t target) {
  emit(spv::OpBranch, {target});
}

void Builder::branch_cond(Value cond, uint32_t if_true, uint32_t if_false) {
  emit(spv::OpBranchConditional, {cond.id, if_true, if_false});
}

void Builder::selection_merge(uint32_t merge) {
  emit(spv::OpSelectionMerge, {merge, spv::SelectionControlMaskNone});
}

void Builder::loop_merge(uint32_t merge, uint32_t continue_target) {
  emit(spv::OpLoopMerge, {merge, continue_target, loop_control});
}

void Builder::ret() {
  emit(spv::OpReturn, {});
}

// --- layout ------------------------------------------------------------------------------------

std::vector<uint32_t> Builder::assemble() const {
  std::vector<uint32_t> out = {spv::MagicNumber, 0x00010600u, 0u, next_id_, 0u};
  for (spv::Capability c : capabilities_) append(out, spv::OpCapability, {c});
  for (const std::string& e : extensions_) append(out, spv::OpExtension, string_words(e));
  if (glsl_) {
    std::vector<uint32_t> words{glsl_};
    std::vector<uint32_t> text = string_words("GLSL.std.450");
    words.insert(words.end(), text.begin(), text.end());
    append(out, spv::OpExtInstImport, words);
  }
  append(out, spv::OpMemoryModel,
         {spv::AddressingModelPhysicalStorageBuffer64, spv::MemoryModelVulkan});
  for (const auto* section : {&entry_points_, &execution_modes_, &names_, &annotations_, &globals_})
    for (const Instruction& inst : *section) append(out, inst.opcode, inst.words);
  for (const Function& fn : functions_) {
    append(out, fn.header.opcode, fn.header.words);
    for (const Block& b : fn.blocks) {
      append(out, spv::OpLabel, {b.label});
      for (const Instruction& inst : b.code) append(out, inst.opcode, inst.words);
    }
    append(out, spv::OpFunctionEnd, {});
  }
  return out;
}

}  // namespace tessera::spirv
