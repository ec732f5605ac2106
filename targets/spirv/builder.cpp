/// \file The SPIR-V builder's module-level half: type and constant tables, globals, debug names,
/// annotations, and the capabilities and extensions that types and instructions need.
#include "targets/spirv/builder.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/support/error.h"
#include "core/support/float16.h"

namespace tessera::spirv {
namespace {

bool is_group_non_uniform(spv::Op opcode) {
  return opcode >= spv::OpGroupNonUniformElect && opcode <= spv::OpGroupNonUniformQuadSwap;
}

bool is_integer_atomic(spv::Op opcode) {
  return (opcode >= spv::OpAtomicLoad && opcode <= spv::OpAtomicXor) &&
         opcode != spv::OpAtomicStore;
}

}  // namespace

std::vector<uint32_t> string_words(std::string_view text) {
  std::vector<uint32_t> words(text.size() / 4 + 1, 0);
  std::memcpy(words.data(), text.data(), text.size());
  return words;
}

Builder::Builder() {
  require(spv::CapabilityShader);
  require(spv::CapabilityVulkanMemoryModel);
  require(spv::CapabilityPhysicalStorageBufferAddresses);
}

// --- types -------------------------------------------------------------------------------------

uint32_t Builder::declare_type(TypeInfo info, spv::Op opcode, std::vector<uint32_t> operands) {
  auto key = std::make_pair(static_cast<uint32_t>(opcode), operands);
  if (auto it = type_ids_.find(key); it != type_ids_.end()) return it->second;
  uint32_t id = next_id_++;
  operands.insert(operands.begin(), id);
  globals_.push_back({opcode, std::move(operands)});
  types_[id] = std::move(info);
  type_ids_[key] = id;
  return id;
}

uint32_t Builder::t_void() {
  return declare_type({TypeKind::Void}, spv::OpTypeVoid, {});
}
uint32_t Builder::t_bool() {
  return declare_type({TypeKind::Bool}, spv::OpTypeBool, {});
}

uint32_t Builder::t_int(uint32_t width, bool is_signed) {
  TESSERA_CHECK(width == 8 || width == 16 || width == 32 || width == 64, "int width ", width);
  if (width == 8) require(spv::CapabilityInt8);
  if (width == 16) require(spv::CapabilityInt16);
  if (width == 64) require(spv::CapabilityInt64);
  TypeInfo t{TypeKind::Int, width, is_signed};
  return declare_type(t, spv::OpTypeInt, {width, is_signed ? 1u : 0u});
}

uint32_t Builder::t_float(uint32_t width) {
  TESSERA_CHECK(width == 16 || width == 32 || width == 64, "float width ", width);
  if (width == 16) require(spv::CapabilityFloat16);
  if (width == 64) require(spv::CapabilityFloat64);
  float_widths_.insert(width);
  return declare_type({TypeKind::Float, width}, spv::OpTypeFloat, {width});
}

uint32_t Builder::t_bfloat16() {
  require(khr::kCapabilityBFloat16Type);
  require_extension(khr::kBFloat16Extension);
  return declare_type({TypeKind::Float, 16}, spv::OpTypeFloat, {16, khr::kFPEncodingBFloat16});
}

uint32_t Builder::t_vector(uint32_t component, uint32_t count) {
  TESSERA_CHECK(count >= 2 && count <= 4, "vector of ", count, " components");
  TypeInfo t{TypeKind::Vector};
  t.element = component;
  t.count = count;
  return declare_type(t, spv::OpTypeVector, {component, count});
}

uint32_t Builder::t_array(uint32_t element, uint32_t length) {
  TypeInfo t{TypeKind::Array};
  t.element = element;
  t.count = length;
  return declare_type(t, spv::OpTypeArray, {element, c_u32(length).id});
}

uint32_t Builder::t_struct(const std::vector<uint32_t>& members) {
  uint32_t id = next_id_++;
  std::vector<uint32_t> words{id};
  words.insert(words.end(), members.begin(), members.end());
  globals_.push_back({spv::OpTypeStruct, std::move(words)});
  TypeInfo t{TypeKind::Struct};
  t.members = members;
  types_[id] = std::move(t);
  return id;
}

uint32_t Builder::t_pointer(spv::StorageClass storage, uint32_t pointee) {
  require_for_storage(storage, pointee);
  TypeInfo t{TypeKind::Pointer};
  t.element = pointee;
  t.storage = storage;
  return declare_type(t, spv::OpTypePointer, {static_cast<uint32_t>(storage), pointee});
}

uint32_t Builder::t_function(uint32_t result, const std::vector<uint32_t>& params) {
  TypeInfo t{TypeKind::Function};
  t.element = result;
  t.members = params;
  std::vector<uint32_t> operands{result};
  operands.insert(operands.end(), params.begin(), params.end());
  return declare_type(t, spv::OpTypeFunction, std::move(operands));
}

uint32_t Builder::t_coopmat(uint32_t component, uint32_t rows, uint32_t cols, khr::MatrixUse use,
                            spv::Scope matrix_scope) {
  TESSERA_CHECK(matrix_scope == spv::ScopeSubgroup || matrix_scope == spv::ScopeWorkgroup,
                "cooperative matrices are subgroup or workgroup scope");
  require(khr::kCapabilityCooperativeMatrix);
  require_extension(khr::kCooperativeMatrixExtension);
  if (matrix_scope == spv::ScopeWorkgroup) require_extension(nv::kCooperativeMatrix2Extension);
  TypeInfo t{TypeKind::CooperativeMatrix};
  t.element = component;
  t.members = {rows, cols, static_cast<uint32_t>(use)};
  t.scope = matrix_scope;
  return declare_type(t, khr::kOpTypeCooperativeMatrix,
                      {component, scope(matrix_scope).id, c_u32(rows).id, c_u32(cols).id,
                       c_u32(static_cast<uint32_t>(use)).id});
}

uint32_t Builder::t_tensor_layout(uint32_t dims, nv::ClampMode clamp) {
  TESSERA_CHECK(dims >= 1 && dims <= 5, "a tensor layout has 1 to 5 dimensions, not ", dims);
  require(nv::kCapabilityTensorAddressing);
  require_extension(nv::kTensorAddressingExtension);
  TypeInfo t{TypeKind::TensorLayout};
  t.count = dims;
  t.element = static_cast<uint32_t>(clamp);
  return declare_type(t, nv::kOpTypeTensorLayout,
                      {c_u32(dims).id, c_u32(static_cast<uint32_t>(clamp)).id});
}

uint32_t Builder::t_tensor_view(uint32_t dims, bool has_dimensions,
                                const std::vector<uint32_t>& permutation) {
  TESSERA_CHECK(dims >= 1 && dims <= 5, "a tensor view has 1 to 5 dimensions, not ", dims);
  std::vector<uint32_t> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  TESSERA_CHECK(sorted.size() == dims, "a tensor view's permutation names each of its ", dims,
                " dimensions once");
  for (uint32_t i = 0; i < dims; ++i)
    TESSERA_CHECK(sorted[i] == i, "a tensor view's permutation names each of its ", dims,
                  " dimensions once");
  require(nv::kCapabilityTensorAddressing);
  require_extension(nv::kTensorAddressingExtension);
  TypeInfo t{TypeKind::TensorView};
  t.count = dims;
  t.members = permutation;
  std::vector<uint32_t> operands{c_u32(dims).id, c_bool(has_dimensions).id};
  for (uint32_t p : permutation) operands.push_back(c_u32(p).id);
  return declare_type(t, nv::kOpTypeTensorView, std::move(operands));
}

const TypeInfo& Builder::info(uint32_t type) const {
  auto it = types_.find(type);
  TESSERA_CHECK(it != types_.end(), "SPIR-V id ", type, " is not a type");
  return it->second;
}

uint32_t Builder::scalar_of(uint32_t type) const {
  const TypeInfo& t = info(type);
  return t.kind == TypeKind::Vector ? t.element : type;
}

uint32_t Builder::byte_size(uint32_t type) const {
  const TypeInfo& t = info(type);
  if (t.kind == TypeKind::Vector) return t.count * info(t.element).width / 8;
  TESSERA_CHECK(t.kind == TypeKind::Int || t.kind == TypeKind::Float, "byte size of a non-scalar");
  return t.width / 8;
}

/// 8- and 16-bit data in interface storage needs the storage capabilities (core in SPIR-V 1.6).
void Builder::require_for_storage(spv::StorageClass storage, uint32_t pointee) {
  const TypeInfo& t = info(pointee);
  if (t.kind == TypeKind::Struct || t.kind == TypeKind::Array) {
    if (t.kind == TypeKind::Array) return require_for_storage(storage, t.element);
    for (uint32_t m : t.members) require_for_storage(storage, m);
    return;
  }
  if (t.kind != TypeKind::Int && t.kind != TypeKind::Float && t.kind != TypeKind::Vector) return;
  uint32_t bits = width(pointee);
  if (bits != 8 && bits != 16) return;
  if (storage == spv::StorageClassPhysicalStorageBuffer ||
      storage == spv::StorageClassStorageBuffer)
    require(bits == 8 ? spv::CapabilityStorageBuffer8BitAccess
                      : spv::CapabilityStorageBuffer16BitAccess);
  if (storage == spv::StorageClassPushConstant)
    require(bits == 8 ? spv::CapabilityStoragePushConstant8 : spv::CapabilityStoragePushConstant16);
}

// --- constants -----------------------------------------------------------------------------------

Value Builder::declare_constant(uint32_t type, spv::Op opcode, std::vector<uint32_t> literals) {
  std::vector<uint32_t> key_words{static_cast<uint32_t>(opcode)};
  key_words.insert(key_words.end(), literals.begin(), literals.end());
  auto key = std::make_pair(type, key_words);
  if (auto it = constant_ids_.find(key); it != constant_ids_.end()) return {it->second, type};
  uint32_t id = next_id_++;
  literals.insert(literals.begin(), {type, id});
  globals_.push_back({opcode, std::move(literals)});
  constant_ids_[key] = id;
  return {id, type};
}

Value Builder::c_bool(bool value) {
  return declare_constant(t_bool(), value ? spv::OpConstantTrue : spv::OpConstantFalse, {});
}

Value Builder::c_int(uint32_t type, uint64_t bits) {
  const TypeInfo& t = info(type);
  TESSERA_CHECK(t.kind == TypeKind::Int, "integer constant of a non-integer type");
  if (t.width == 64)
    return declare_constant(type, spv::OpConstant,
                            {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  // Narrow literals are sign-extended for signed types and zero-extended otherwise.
  uint32_t word = static_cast<uint32_t>(bits);
  if (t.width < 32) {
    uint32_t mask = (1u << t.width) - 1;
    word &= mask;
    if (t.is_signed && (word >> (t.width - 1)) & 1) word |= ~mask;
  }
  return declare_constant(type, spv::OpConstant, {word});
}

Value Builder::c_float(uint32_t type, double value) {
  const TypeInfo& t = info(type);
  TESSERA_CHECK(t.kind == TypeKind::Float, "float constant of a non-float type");
  if (t.width == 16) return declare_constant(type, spv::OpConstant, {f16_from_double(value)});
  if (t.width == 32)
    return declare_constant(type, spv::OpConstant,
                            {std::bit_cast<uint32_t>(static_cast<float>(value))});
  uint64_t bits = std::bit_cast<uint64_t>(value);
  return declare_constant(type, spv::OpConstant,
                          {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
}

Value Builder::c_float_bits(uint32_t type, uint64_t bits) {
  const TypeInfo& t = info(type);
  TESSERA_CHECK(t.kind == TypeKind::Float, "float constant of a non-float type");
  if (t.width == 64)
    return declare_constant(type, spv::OpConstant,
                            {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  uint32_t mask = t.width == 16 ? 0xffffu : 0xffffffffu;
  return declare_constant(type, spv::OpConstant, {static_cast<uint32_t>(bits) & mask});
}

Value Builder::c_null(uint32_t type) {
  return declare_constant(type, spv::OpConstantNull, {});
}

Value Builder::c_composite(uint32_t type, const std::vector<Value>& parts) {
  std::vector<uint32_t> ids;
  for (const Value& v : parts) ids.push_back(v.id);
  return declare_constant(type, spv::OpConstantComposite, std::move(ids));
}

Value Builder::scope(spv::Scope scope) {
  if (scope == spv::ScopeDevice) require(spv::CapabilityVulkanMemoryModelDeviceScope);
  return c_u32(static_cast<uint32_t>(scope));
}

// --- globals and annotations -------------------------------------------------------------------

Value Builder::variable(uint32_t pointer_type) {
  const TypeInfo& t = info(pointer_type);
  TESSERA_CHECK(t.kind == TypeKind::Pointer, "variable of a non-pointer type");
  uint32_t id = next_id_++;
  globals_.push_back({spv::OpVariable, {pointer_type, id, static_cast<uint32_t>(t.storage)}});
  return {id, pointer_type};
}

void Builder::decorate(uint32_t id, spv::Decoration decoration,
                       std::initializer_list<uint32_t> args) {
  if (decoration == spv::DecorationBuiltIn) {
    auto builtin = static_cast<spv::BuiltIn>(*args.begin());
    if (builtin == spv::BuiltInSubgroupLocalInvocationId || builtin == spv::BuiltInSubgroupId ||
        builtin == spv::BuiltInSubgroupSize || builtin == spv::BuiltInNumSubgroups)
      require(spv::CapabilityGroupNonUniform);
  }
  std::vector<uint32_t> words{id, static_cast<uint32_t>(decoration)};
  words.insert(words.end(), args.begin(), args.end());
  annotations_.push_back({spv::OpDecorate, std::move(words)});
}

void Builder::decorate_member(uint32_t type, uint32_t member, spv::Decoration decoration,
                              std::initializer_list<uint32_t> args) {
  std::vector<uint32_t> words{type, member, static_cast<uint32_t>(decoration)};
  words.insert(words.end(), args.begin(), args.end());
  annotations_.push_back({spv::OpMemberDecorate, std::move(words)});
}

void Builder::name(uint32_t id, std::string_view name) {
  std::vector<uint32_t> words{id};
  std::vector<uint32_t> text = string_words(name);
  words.insert(words.end(), text.begin(), text.end());
  names_.push_back({spv::OpName, std::move(words)});
}

uint32_t Builder::glsl_std_450() {
  if (!glsl_) glsl_ = next_id_++;
  return glsl_;
}

void Builder::entry_point(spv::ExecutionModel model, uint32_t function, std::string_view name,
                          const std::vector<uint32_t>& interface) {
  std::vector<uint32_t> words{static_cast<uint32_t>(model), function};
  std::vector<uint32_t> text = string_words(name);
  words.insert(words.end(), text.begin(), text.end());
  words.insert(words.end(), interface.begin(), interface.end());
  entry_points_.push_back({spv::OpEntryPoint, std::move(words)});
}

void Builder::execution_mode(uint32_t function, spv::ExecutionMode mode,
                             std::initializer_list<uint32_t> args) {
  std::vector<uint32_t> words{function, static_cast<uint32_t>(mode)};
  words.insert(words.end(), args.begin(), args.end());
  execution_modes_.push_back({spv::OpExecutionMode, std::move(words)});
}

// --- capabilities of instructions -------------------------------------------------------------

/// Capabilities and extensions an instruction needs beyond its types'.
void Builder::require_for_op(spv::Op opcode, uint32_t type) {
  if (is_group_non_uniform(opcode)) require(spv::CapabilityGroupNonUniform);
  if (opcode == spv::OpGroupNonUniformShuffle || opcode == spv::OpGroupNonUniformShuffleXor)
    require(spv::CapabilityGroupNonUniformShuffle);
  if (opcode == spv::OpGroupNonUniformShuffleUp || opcode == spv::OpGroupNonUniformShuffleDown)
    require(spv::CapabilityGroupNonUniformShuffleRelative);
  if (opcode == spv::OpGroupNonUniformUMax) require(spv::CapabilityGroupNonUniformArithmetic);
  if (is_integer_atomic(opcode) && is_int(type) && width(type) == 64)
    require(spv::CapabilityInt64Atomics);
  if (opcode == spv::OpAtomicFAddEXT) {
    require_extension("SPV_EXT_shader_atomic_float_add");
    uint32_t w = width(type);
    if (w == 16) require_extension("SPV_EXT_shader_atomic_float16_add");
    require(w == 16   ? spv::CapabilityAtomicFloat16AddEXT
            : w == 32 ? spv::CapabilityAtomicFloat32AddEXT
                      : spv::CapabilityAtomicFloat64AddEXT);
  }
  if (opcode == spv::OpAtomicFMinEXT || opcode == spv::OpAtomicFMaxEXT) {
    require_extension("SPV_EXT_shader_atomic_float_min_max");
    uint32_t w = width(type);
    require(w == 16   ? spv::CapabilityAtomicFloat16MinMaxEXT
            : w == 32 ? spv::CapabilityAtomicFloat32MinMaxEXT
                      : spv::CapabilityAtomicFloat64MinMaxEXT);
  }
}

}  // namespace tessera::spirv
