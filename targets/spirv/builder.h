/// \file A typed SPIR-V module builder: callers deal in Values (a result id with its type id), not
/// in instruction words. Types and constants are deduplicated, capabilities and extensions are
/// collected as types, decorations and instructions need them, and assemble() writes the sections
/// in the order the specification requires.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/spirv.hpp>

#include "targets/spirv/coopmat2_nv.h"
#include "targets/spirv/coopmat_khr.h"

namespace tessera::spirv {

/// A result id and the id of its type.
struct Value {
  uint32_t id = 0;
  uint32_t type = 0;
};

enum class TypeKind : uint8_t {
  Void,
  Bool,
  Int,
  Float,
  Vector,
  Array,
  Struct,
  Pointer,
  Function,
  CooperativeMatrix,
  TensorLayout,  ///< SPV_NV_tensor_addressing
  TensorView
};

/// What a type id denotes.
struct TypeInfo {
  TypeKind kind = TypeKind::Void;
  uint32_t width = 0;      ///< Int, Float: bits
  bool is_signed = false;  ///< Int
  uint32_t element = 0;    ///< Vector/Array/CooperativeMatrix: component; Pointer: pointee;
                           ///< Function: return
  uint32_t count = 0;      ///< Vector: components; Array: length; TensorLayout/View: dimensions
  spv::StorageClass storage = spv::StorageClassMax;  ///< Pointer
  std::vector<uint32_t> members;                     ///< Struct: members; Function: parameters;
                                                     ///< CooperativeMatrix: rows, columns, use
                                                     ///< TensorView: the dimension permutation
  spv::Scope scope = spv::ScopeSubgroup;             ///< CooperativeMatrix
};

/// One operand word: an id (a Value's or a type's) or a literal.
struct Operand {
  uint32_t word;
  Operand(Value v) : word(v.id) {}  // NOLINT: Values are the usual operands
  Operand(uint32_t w) : word(w) {}  // NOLINT: type ids and literals
};

/// What a memory access's operands say beyond its alignment and NonPrivatePointer: Volatile
/// (tl::load's volatile) and Nontemporal (SPIR-V's one cache hint: not accessed again soon).
struct AccessHints {
  bool is_volatile = false;
  bool nontemporal = false;
};

/// An OpPhi whose incoming pairs are added once the predecessors exist.
struct PhiRef {
  size_t block = 0;
  size_t index = 0;
  Value value;
};

class Builder {
 public:
  /// A Shader module with the PhysicalStorageBuffer64 addressing and Vulkan memory models.
  Builder();

  // --- capabilities and extensions -----------------------------------------------------------
  void require(spv::Capability capability) { capabilities_.insert(capability); }
  void require_extension(std::string_view name) { extensions_.insert(std::string(name)); }
  bool has_capability(spv::Capability capability) const {
    return capabilities_.count(capability) != 0;
  }
  /// Whether a float type of `width` bits was declared.
  bool has_float(uint32_t width) const { return float_widths_.count(width) != 0; }

  // --- types (deduplicated, except structs, whose layout decorations are their own) ----------
  uint32_t t_void();
  uint32_t t_bool();
  uint32_t t_int(uint32_t width, bool is_signed);
  uint32_t t_uint(uint32_t width) { return t_int(width, false); }
  uint32_t t_float(uint32_t width);
  /// bf16 as SPV_KHR_bfloat16 declares it (cooperative-matrix components only: Tessera's other
  /// bf16 values are computed in f32 and stored as 16-bit integers).
  uint32_t t_bfloat16();
  uint32_t t_vector(uint32_t component, uint32_t count);
  uint32_t t_array(uint32_t element, uint32_t length);
  uint32_t t_struct(const std::vector<uint32_t>& members);
  uint32_t t_pointer(spv::StorageClass storage, uint32_t pointee);
  uint32_t t_function(uint32_t result, const std::vector<uint32_t>& params);
  /// A subgroup-scope cooperative matrix of `component` (SPV_KHR_cooperative_matrix: declaring
  /// one requires the extension and the CooperativeMatrixKHR capability).
  /// At workgroup scope (SPV_NV_cooperative_matrix2; the device needs the
  /// cooperativeMatrixWorkgroupScope feature) the module also declares that extension.
  uint32_t t_coopmat(uint32_t component, uint32_t rows, uint32_t cols, khr::MatrixUse use,
                     spv::Scope scope = spv::ScopeSubgroup);
  /// A tensor layout of `dims` dimensions (1..5) whose loads read `clamp` outside its bounds
  /// (SPV_NV_tensor_addressing: the TensorAddressingNV capability and its extension).
  uint32_t t_tensor_layout(uint32_t dims, nv::ClampMode clamp);
  /// A tensor view of `dims` dimensions: with its own dimensions when `has_dimensions`, its
  /// dimensions in the order `permutation` (a permutation of 0..dims-1).
  uint32_t t_tensor_view(uint32_t dims, bool has_dimensions,
                         const std::vector<uint32_t>& permutation);
  const TypeInfo& info(uint32_t type) const;
  /// The component type of a vector, else the type itself.
  uint32_t scalar_of(uint32_t type) const;
  bool is_float(uint32_t type) const { return info(scalar_of(type)).kind == TypeKind::Float; }
  bool is_int(uint32_t type) const { return info(scalar_of(type)).kind == TypeKind::Int; }
  bool is_bool(uint32_t type) const { return info(scalar_of(type)).kind == TypeKind::Bool; }
  uint32_t width(uint32_t type) const { return info(scalar_of(type)).width; }
  /// Size in bytes of a scalar or vector type.
  uint32_t byte_size(uint32_t type) const;

  // --- constants (deduplicated) ----------------------------------------------------------------
  Value c_bool(bool value);
  /// An integer constant of `type` from the low `width` bits of `bits`.
  Value c_int(uint32_t type, uint64_t bits);
  /// A float constant of `type` (16, 32 or 64 bits), rounded to nearest even from `value`.
  Value c_float(uint32_t type, double value);
  /// A float constant of `type` with exactly these bits (NaN payloads kept).
  Value c_float_bits(uint32_t type, uint64_t bits);
  Value c_u32(uint32_t value) { return c_int(t_uint(32), value); }
  Value c_null(uint32_t type);
  /// An OpConstantComposite (for a cooperative matrix: one part, which every element takes).
  Value c_composite(uint32_t type, const std::vector<Value>& parts);
  /// A Scope operand; Device scope needs VulkanMemoryModelDeviceScope.
  Value scope(spv::Scope scope);
  Value semantics(uint32_t mask) { return c_u32(mask); }

  // --- globals, debug names and annotations -------------------------------------------------
  /// A module-scope OpVariable of `pointer_type` (its storage class is the pointer's).
  Value variable(uint32_t pointer_type);
  void decorate(uint32_t id, spv::Decoration decoration, std::initializer_list<uint32_t> args = {});
  void decorate_member(uint32_t type, uint32_t member, spv::Decoration decoration,
                       std::initializer_list<uint32_t> args = {});
  void name(uint32_t id, std::string_view name);
  uint32_t glsl_std_450();
  void entry_point(spv::ExecutionModel model, uint32_t function, std::string_view name,
                   const std::vector<uint32_t>& interface);
  void execution_mode(uint32_t function, spv::ExecutionMode mode,
                      std::initializer_list<uint32_t> args);

  // --- functions and blocks --------------------------------------------------------------------
  /// Starts a function without parameters returning void; its first block is current.
  uint32_t begin_function(std::string_view name);
  void end_function();
  /// Reserves a label for a block that begin_block() appends later.
  uint32_t new_label() { return next_id_++; }
  /// Appends the block `label` to the function and makes it current.
  void begin_block(uint32_t label);
  uint32_t current_label() const;
  bool terminated() const;

  // --- instructions ----------------------------------------------------------------------------
  /// An instruction with a result of `type`.
  Value op(spv::Op opcode, uint32_t type, std::initializer_list<Operand> operands);
  /// An instruction without a result.
  void op_void(spv::Op opcode, std::initializer_list<Operand> operands);
  /// An extended instruction of GLSL.std.450.
  Value ext(GLSLstd450 instruction, uint32_t type, std::initializer_list<Value> args);

  Value binary(spv::Op opcode, Value a, Value b) { return op(opcode, a.type, {a, b}); }
  Value compare(spv::Op opcode, Value a, Value b) { return op(opcode, t_bool(), {a, b}); }
  Value unary(spv::Op opcode, Value a) { return op(opcode, a.type, {a}); }
  Value convert(spv::Op opcode, uint32_t type, Value a) { return op(opcode, type, {a}); }
  Value bitcast(uint32_t type, Value a);
  Value select(Value cond, Value a, Value b);
  Value extract(uint32_t type, Value composite, uint32_t index);
  Value construct(uint32_t type, const std::vector<Value>& parts);
  Value access_chain(uint32_t pointer_type, Value base, std::initializer_list<Value> indices);
  /// A load (or store) through `pointer`, with `Aligned align` when align > 0,
  /// NonPrivatePointer when `non_private`, and the hints' Volatile and Nontemporal.
  Value load(uint32_t type, Value pointer, uint32_t align, bool non_private,
             AccessHints hints = {});
  void store(Value pointer, Value value, uint32_t align, bool non_private, AccessHints hints = {});

  /// Cooperative-matrix loads and stores through `pointer` (an element of an array) with
  /// `layout` and `stride` (in the pointee's units), NonPrivatePointer when `non_private`.
  Value coopmat_load(uint32_t type, Value pointer, khr::Layout layout, uint32_t stride,
                     bool non_private);
  void coopmat_store(Value pointer, Value object, khr::Layout layout, uint32_t stride,
                     bool non_private);
  /// a x b + c; `operands` is the Cooperative Matrix Operands mask (0: none, left out).
  Value coopmat_mul_add(Value a, Value b, Value c, uint32_t operands);

  // --- tensor layouts and views (SPV_NV_tensor_addressing), tensor-addressed matrix loads ------
  // Layouts and views are values: each setter returns a new one. Dimensions, strides, offsets
  // and spans are 32-bit integer values, one per dimension (a slice: offset and span per
  // dimension, in dimension order).
  Value tensor_layout(uint32_t type);
  Value tensor_layout_dimensions(Value layout, const std::vector<Value>& dims);
  Value tensor_layout_strides(Value layout, const std::vector<Value>& strides);
  Value tensor_layout_slice(Value layout, const std::vector<Value>& offsets_and_spans);
  /// The value a ClampMode::Constant layout's loads read outside its bounds (its bits as the
  /// matrix's component type).
  Value tensor_layout_clamp_value(Value layout, Value value);
  Value tensor_view(uint32_t type);
  Value tensor_view_dimensions(Value view, const std::vector<Value>& dims);
  Value tensor_view_strides(Value view, const std::vector<Value>& strides);
  /// Limits a 2-D view's loads and stores to rows [row_offset, +row_span) and columns
  /// [col_offset, +col_span) of the matrix.
  Value tensor_view_clip(Value view, Value row_offset, Value row_span, Value col_offset,
                         Value col_span);
  /// OpCooperativeMatrixLoadTensorNV: a matrix of `type` read from the tensor at `pointer` (its
  /// first element) through `layout` (and `view` when its id is not 0), with `object`'s elements
  /// where nothing is read; memory operands as load()'s. Needs the
  /// CooperativeMatrixTensorAddressingNV capability and SPV_NV_cooperative_matrix2.
  Value coopmat_load_tensor(uint32_t type, Value pointer, Value object, Value layout,
                            uint32_t align, bool non_private, Value view = {});
  /// OpCooperativeMatrixStoreTensorNV: `object` written through `layout` (and `view`).
  void coopmat_store_tensor(Value pointer, Value object, Value layout, uint32_t align,
                            bool non_private, Value view = {});

  PhiRef phi(uint32_t type);
  void add_incoming(const PhiRef& phi, Value value, uint32_t predecessor);

  void branch(uint32_t target);
  void branch_cond(Value cond, uint32_t if_true, uint32_t if_false);
  void selection_merge(uint32_t merge);
  void loop_merge(uint32_t merge, uint32_t continue_target);
  /// The Loop Control mask of every loop_merge (None unless the emitter asks for more).
  uint32_t loop_control = spv::LoopControlMaskNone;
  void ret();

  /// The module's words: header, then the sections in the specification's order.
  std::vector<uint32_t> assemble() const;

 private:
  struct Instruction {
    spv::Op opcode;
    std::vector<uint32_t> words;  ///< the operands after the opcode word
  };
  struct Block {
    uint32_t label;
    std::vector<Instruction> code;
  };
  struct Function {
    Instruction header;
    std::vector<Block> blocks;
  };

  uint32_t declare_type(TypeInfo info, spv::Op opcode, std::vector<uint32_t> operands);
  Value declare_constant(uint32_t type, spv::Op opcode, std::vector<uint32_t> literals);
  void require_for_op(spv::Op opcode, uint32_t type);
  void require_for_storage(spv::StorageClass storage, uint32_t pointee);
  void emit(spv::Op opcode, std::vector<uint32_t> words);
  /// %r = opcode %type %base %ids... for the tensor layout/view setters.
  Value tensor_update(spv::Op opcode, Value base, TypeKind kind, const std::vector<Value>& ids,
                      size_t expected);
  Block& block();

  uint32_t next_id_ = 1;
  std::set<spv::Capability> capabilities_;
  std::set<uint32_t> float_widths_;
  std::set<std::string> extensions_;
  uint32_t glsl_ = 0;
  std::vector<Instruction> entry_points_, execution_modes_, names_, annotations_, globals_;
  std::map<uint32_t, TypeInfo> types_;
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> type_ids_;  ///< (opcode, operands)
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> constant_ids_;  ///< (type, words)
  std::vector<Function> functions_;
  size_t current_block_ = 0;
};

/// The words of a string literal (UTF-8, NUL-terminated, padded to a word).
std::vector<uint32_t> string_words(std::string_view text);

}  // namespace tessera::spirv
