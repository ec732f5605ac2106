/// \file The SPIR-V emitter's shared state (internal to targets/spirv). emit.cpp holds the op
/// table and the value/type mapping; each emit_*.cpp file implements one op family, and the
/// numeric helpers that several families share (bf16 rounding, float min/max) live beside the
/// family that owns them.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/ir.h"
#include "core/ir/ops.h"
#include "core/ir/simt.h"
#include "core/support/error.h"
#include "core/target/artifact.h"
#include "core/target/target.h"
#include "targets/spirv/builder.h"

namespace tessera::spirv::impl {

/// One workgroup array per shared buffer. Buffers whose every access is at least `lanes` wide
/// (32-bit elements only) are arrays of `lanes`-component vectors; buffers that a coopmat op
/// reads or writes stay arrays of scalars (the op's stride counts the array's elements).
struct SharedVar {
  Value var;
  ir::DType dtype = ir::DType::f32;
  uint32_t lanes = 1;
  uint32_t element_type = 0;  ///< the array's element (memory type, or a vector of it)
};

class Emitter {
 public:
  Emitter(const ir::Function& fn, const target::Target& target);
  /// The whole module (emit.cpp).
  std::vector<uint32_t> build();
  uint32_t param_bytes() const { return param_bytes_; }
  uint32_t grid_offset() const { return grid_offset_; }
  bool params_by_address() const { return params_by_address_; }
  /// The fault channel's offset in the block (-1: none) and what each fault code means.
  int64_t fault_offset() const { return fault_offset_; }
  const std::vector<std::string>& faults() const { return faults_; }
  /// The print channel's offset in the block (-1: none) and the kernel's print sites.
  int64_t print_offset() const { return print_offset_; }
  const std::vector<target::Artifact::PrintSite>& prints() const { return prints_; }

  Builder b;
  const ir::Function& fn;
  const target::Target& target;

  // --- values and types (emit.cpp) -------------------------------------------------------------
  Value get(const ir::Value* v) const;
  void set(const ir::Value* v, Value value);
  /// The SSA type: i1 -> bool, bf16 -> f32 (always bf16-representable), pointers -> u64,
  /// cooperative matrices -> OpTypeCooperativeMatrixKHR of the dtype's type (f16, f32, i8, i32).
  uint32_t value_type(const ir::Type& type);
  uint32_t value_type(ir::DType dtype) { return value_type(ir::Type::scalar(dtype)); }
  /// The type in memory: i1 -> u8, bf16 -> u16, else the SSA type.
  uint32_t memory_type(ir::DType dtype);
  Value constant(ir::DType dtype, double value);
  Value constant_int(ir::DType dtype, int64_t value);
  /// The value of an integer `constant` op defining `v`, if it is one.
  std::optional<int64_t> constant_of(const ir::Value* v) const;
  /// get(v) for an operand of float arithmetic, a comparison or fma: on a target with
  /// Quirk::SpecialConstantFolding a constant +-0, +-inf or NaN is hidden from the driver's
  /// folding (emit_arith.cpp).
  Value float_operand(const ir::Value* v);
  /// `value` (of `v`) hidden from the driver's folding if `v` is an integer constant
  /// (Quirk::WideCompareFolding: the constant of a signed 64-bit ordering compare, emit_arith.cpp).
  Value opaque_int(const ir::Value* v, Value value);
  [[noreturn]] void unsupported(const ir::Op* op, const std::string& what) const;
  /// Fails unless the target has `cap`, which `what` needs.
  void require_cap(target::Cap cap, const ir::Op* op, const std::string& what) const;

  void emit_region(const ir::Region& region);
  void emit_op(const ir::Op& op);

  // --- families --------------------------------------------------------------------------------
  void emit_identity(const ir::Op& op);  // emit.cpp: program and thread ids
  void emit_constant(const ir::Op& op);  // emit_arith.cpp
  void emit_binary(const ir::Op& op);
  void emit_compare(const ir::Op& op);
  void emit_unary(const ir::Op& op);
  void emit_where(const ir::Op& op);
  void emit_math(const ir::Op& op);  // emit_math.cpp
  void emit_fma(const ir::Op& op);
  void emit_cast(const ir::Op& op);  // emit_cast.cpp
  void emit_bitcast(const ir::Op& op);
  void emit_ptr_add(const ir::Op& op);  // emit_memory.cpp
  void emit_global_load(const ir::Op& op);
  void emit_global_store(const ir::Op& op);
  void emit_shared_load(const ir::Op& op);
  void emit_shared_store(const ir::Op& op);
  void emit_cp_async(const ir::Op& op);
  void emit_atomic_rmw(const ir::Op& op);  // emit_atomic.cpp
  void emit_atomic_cas(const ir::Op& op);
  void emit_for(const ir::Op& op);  // emit_control.cpp
  void emit_if(const ir::Op& op);
  void emit_while(const ir::Op& op);
  void emit_shuffle(const ir::Op& op);  // emit_simt.cpp
  void emit_barrier(const ir::Op& op);
  void emit_coopmat(const ir::Op& op);  // emit_coopmat.cpp
  void emit_assert(const ir::Op& op);   // emit_fault.cpp
  void emit_print(const ir::Op& op);    // emit_print.cpp

  // --- the fault channel (emit_fault.cpp) --------------------------------------------------------
  /// A new fault code whose text is `text` (Artifact::faults).
  uint32_t fault_code(std::string text);
  /// Where `failed` holds: claims the record and writes `code`, the launch tag, the program and
  /// thread ids and `index` (up to 4 i32 values).
  void raise_fault(Value failed, Value code, const std::vector<Value>& index,
                   const std::vector<Value>& values = {});
  /// On targets with a loop_limit (loop_counting()), every loop's header calls count_iteration
  /// and the end of its body note_loop_limit (`op` names the loop in the fault; `continues`: the
  /// loop goes on after this pass; `depth`: the loops around it).
  bool loop_counting() const { return target.loop_limit > 0; }
  void count_iteration();
  void note_loop_limit(const ir::Op& op, Value continues, int depth);
  /// The loops an op's emission makes itself (compare-and-swap, fmod) count a pass at their
  /// header (as if they went on) and, since their trip counts differ between lanes while
  /// lavapipe runs a subgroup's lanes together, take the subgroup's largest count at their merge.
  void count_inner_pass();
  void merge_inner_count();

  // --- shared numeric helpers ----------------------------------------------------------------
  /// Float add/sub/mul with NoContraction (emit_arith.cpp).
  Value fbinary(spv::Op opcode, Value a, Value c);
  /// Float division, defined for every divisor (emit_arith.cpp).
  Value fdiv(Value a, Value c);
  /// C's fmod of two f32 or f64 values, exactly (emit_fmod.cpp).
  Value fmod(Value x, Value y);
  /// max/min by the IR's rule: NaN propagates (or is ignored), -0 < +0; one of the operands.
  Value float_min_max(Value a, Value c, bool is_max, bool propagate);
  /// The binary op `kind` (arithmetic, bitwise, shift, min/max) on values of `dtype` by the IR's
  /// rules; f16 division and remainder, and all bf16 arithmetic, go through f32.
  Value binary_value(ir::OpKind kind, ir::DType dtype, Value a, Value c, bool propagate = true);
  /// An f32 rounded to the nearest bf16 (ties to even, NaN stays NaN), still as an f32.
  Value bf16_round(Value f32);  // emit_cast.cpp
  /// f32 -> the narrow float `dtype` (f16: FConvert, bf16: bf16_round); identity for f32.
  Value narrow_from_f32(Value f32, ir::DType dtype);
  /// An f16 rounding kept from the driver's folding where it has Quirk::NarrowFloatUnrounded.
  Value pin_rounding(Value f16);
  /// num_programs(0) == 0: a condition that never holds (a launch has at least one program) but
  /// that a driver cannot know while compiling, for the workarounds that hide a value from its
  /// folding (float_operand, pin_rounding).
  Value grid_is_empty();
  /// `dtype`'s value as f32 (f16: FConvert; bf16 and f32: as is).
  Value widen_to_f32(Value v, ir::DType dtype);
  /// The exact sum a + b rounded to odd in f32 (for one correct rounding to <= 22 bits later).
  Value odd_sum_f32(Value a, Value c);
  /// The `cast` op's conversion of `v` from dtype `from` to dtype `to`.
  Value convert(Value v, ir::DType from, ir::DType to);
  Value to_memory(Value v, ir::DType dtype);  // emit_memory.cpp
  Value from_memory(Value v, ir::DType dtype);
  /// A PhysicalStorageBuffer pointer to `pointee` at the u64 address `address`.
  Value psb_pointer(Value address, uint32_t pointee);
  /// An input built-in variable's value (created on first use and listed in the interface).
  Value builtin(spv::BuiltIn builtin, uint32_t type);  // emit_simt.cpp
  /// The pointer to element `index` of shared buffer `buffer`, an array of scalars
  /// (emit_memory.cpp; the buffers of coopmat ops).
  Value shared_scalar_pointer(int64_t buffer, Value index);

 private:
  void check_support() const;        // emit.cpp
  bool wants_fault_channel() const;  // emit_fault.cpp
  void declare_loop_counters();
  void report_loop_limit();
  // The print channel (emit_print.cpp).
  bool wants_print_channel() const;
  void declare_print_counter();
  /// At the start of a loop's body (a for) or condition (a while): one more pass begun.
  void count_print_pass(const ir::Region& region);
  void emit_prologue();  // emit_abi.cpp
  Value load_param_word(uint32_t offset, uint32_t type);
  Value param_value(const ir::Type& type, uint32_t offset);
  void declare_shared();  // emit_memory.cpp
  /// `hints`: the memory operands' Volatile and Nontemporal for every access.
  std::vector<Value> predicated_load(const ir::Value* pred, Value address, ir::DType dtype,
                                     int width, uint32_t align, const std::vector<Value>& others,
                                     AccessHints hints = {});
  void store_shared(const SharedVar& s, Value element_index, const std::vector<Value>& values);
  // emit_coopmat.cpp: what the target must offer for the op's matrices; a matrix type's id.
  void check_coopmat(const ir::Op& op) const;
  uint32_t coopmat_type(const ir::Type& type);

  std::unordered_map<const ir::Value*, Value> values_;
  std::map<spv::BuiltIn, Value> builtins_;
  std::map<std::string, uint32_t> coopmat_types_;  ///< by ir::Type::str()
  std::vector<uint32_t> interface_;
  std::vector<SharedVar> shared_;
  std::array<Value, 3> program_id_{}, num_programs_{};
  // The parameter block (emit_abi.cpp).
  Value params_base_;           ///< the push-constant variable, or the PSB block pointer
  uint32_t params_struct_ = 0;  ///< the block's struct type
  std::map<uint32_t, uint32_t> member_of_offset_;  ///< byte offset -> struct member index
  std::vector<uint32_t> member_types_;
  uint32_t param_bytes_ = 0, grid_offset_ = 0;
  bool params_by_address_ = false;
  // The fault channel (emit_fault.cpp).
  int64_t fault_offset_ = -1;
  std::vector<std::string> faults_;
  Value loop_count_, loop_first_;  ///< Private u32: iterations so far, the loop at the limit
  std::map<const ir::Op*, uint32_t> loop_codes_;  ///< each counted loop's fault code
  int loop_depth_ = 0;                  ///< loops around the code being emitted (emit_control.cpp)
  const ir::Op* current_op_ = nullptr;  ///< the op emit_op() is emitting (inner loops name it)
  // The print channel (emit_print.cpp).
  int64_t print_offset_ = -1;
  std::vector<target::Artifact::PrintSite> prints_;
  Value print_pass_;                    ///< Private u32: loop passes begun
  const ir::Op* last_print_ = nullptr;  ///< the print emitted last (sites of one statement)
};

/// The alignment of a `base_align`-aligned address plus `offset` bytes.
inline uint32_t aligned_at(uint32_t base_align, uint32_t offset) {
  if (offset == 0) return base_align;
  uint32_t low = offset & (~offset + 1);
  return low < base_align ? low : base_align;
}

}  // namespace tessera::spirv::impl
