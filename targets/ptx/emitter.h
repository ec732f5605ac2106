/// \file The SIMT-to-LLVM emitter's shared state. One Emitter builds one kernel; the op families
/// (emit_*.cpp), each a table from op kind to LLVM instructions, read and extend it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/ir.h"
#include "core/ir/simt.h"
#include "core/target/target.h"
#include "targets/ptx/llvm.h"

namespace tessera::ptx {

/// LLVM address spaces of the NVPTX backend.
enum AddressSpace : unsigned { kGeneric = 0, kGlobal = 1, kShared = 3, kConst = 4 };

class Emitter {
 public:
  Emitter(llvm::Module& module, const ir::Function& fn, const target::Target& target);
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  /// Builds the kernel: signature, annotations, shared arena, body.
  void emit_kernel();

  llvm::LLVMContext& ctx;
  llvm::Module& module;
  llvm::IRBuilder<> b;
  const ir::Function& fn;
  const target::Target& target;
  llvm::Function* kernel = nullptr;

  /// The type of a SIMT value in registers: i1 stays i1, pointers are `ptr addrspace(1)`.
  llvm::Type* type(const ir::Type& t);
  llvm::Type* scalar_type(ir::DType t);
  /// The type of one element in memory (i1 occupies a byte).
  llvm::Type* memory_type(ir::DType t);
  /// Register value -> memory representation (i1 -> i8) and back.
  llvm::Value* to_memory(llvm::Value* v, ir::DType t);
  llvm::Value* from_memory(llvm::Value* v, ir::DType t);

  llvm::Value* get(const ir::Value* v) const;
  void set(const ir::Value* v, llvm::Value* x);
  /// Binds each result of `op` to the matching value.
  void set_results(const ir::Op& op, const std::vector<llvm::Value*>& values);

  /// Emits the ops of `region` (its arguments bound by the caller) except the terminator;
  /// returns the terminator's operands (empty when it has none).
  std::vector<llvm::Value*> emit_region(const ir::Region* region);
  llvm::BasicBlock* block(const char* name);
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type*> types,
                         llvm::ArrayRef<llvm::Value*> args);
  /// The first byte of shared buffer `index` in the dynamic shared arena, and its element type.
  llvm::Value* shared_buffer(int64_t index);
  /// Element `index` (an i32) of shared buffer `buffer`: a 32-bit shared-window pointer.
  llvm::Value* shared_element(int64_t buffer, llvm::Value* index);
  ir::DType shared_dtype(int64_t index) const;
  /// A private constant NUL-terminated string in global memory, as a generic pointer.
  llvm::Value* string_constant(const std::string& text, const char* name);

  /// ErrorKind::Unsupported naming the kernel, the op and its location.
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& what) const;

 private:
  void emit_signature();
  void emit_op(const ir::Op& op);

  std::unordered_map<const ir::Value*, llvm::Value*> values_;
  std::vector<ir::SharedBuffer> shared_;
  std::vector<int64_t> shared_offsets_;
  llvm::GlobalVariable* shared_arena_ = nullptr;
};

// The op families. Each handles the op kinds emitter.cpp's table routes to it.
void emit_constant(Emitter& e, const ir::Op& op);  // emit_arith.cpp
void emit_arith(Emitter& e, const ir::Op& op);     // emit_arith.cpp: + - * / % min max bits ...
void emit_compare(Emitter& e, const ir::Op& op);   // emit_arith.cpp
void emit_cast(Emitter& e, const ir::Op& op);      // emit_cast.cpp: cast, bitcast, ptr_add
void emit_math(Emitter& e, const ir::Op& op);      // emit_math.cpp: exp ... erf
void emit_memory(Emitter& e, const ir::Op& op);    // emit_memory.cpp: global/shared load/store
void emit_atomic(Emitter& e, const ir::Op& op);    // emit_atomic.cpp
void emit_simt(Emitter& e, const ir::Op& op);      // emit_simt.cpp: ids, shuffle, barrier
void emit_control(Emitter& e, const ir::Op& op);   // emit_control.cpp: for, if, while
void emit_debug(Emitter& e, const ir::Op& op);     // emit_debug.cpp: print, assert, hints
void emit_matrix(Emitter& e, const ir::Op& op);    // emit_matrix.cpp: mma, ldmatrix, cp.async
void emit_tma(Emitter& e, const ir::Op& op);       // emit_tma.cpp: mbarriers, TMA copies

/// emit_inline_asm.cpp: inline_asm and inline_asm_impure (tl::inline_asm_elementwise).
void emit_inline_asm(Emitter& e, const ir::Op& op);

}  // namespace tessera::ptx
