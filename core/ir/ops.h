/// \file Typed views of tile-IR ops and the semantics of every op kind.
///
/// A view wraps an `Op*` of one kind (checked on construction) and names its operands,
/// attributes and regions. Text examples use the printer's generic form:
///   %r = name %operands {attrs} (regions) : result types loc("file":line)
///
/// Program identity
///   program_id {axis}      i32 index of this program along grid axis 0, 1 or 2.
///   num_programs {axis}    i32 grid size along the axis.
///
/// Constants and tile construction (all pure)
///   constant {value}       a scalar, or a tile with every element equal to `value`
///                          (int64 attribute for integer dtypes, double for floats).
///   arange {start, end}    tile<(end-start) x i32> holding start, start+1, ..., end-1;
///                          end-start is a power of two.
///   splat %s               a tile whose every element is the scalar %s.
///   broadcast %t           expands size-1 dimensions of %t to the result shape (same rank).
///   expand_dims %t {axis}  inserts a size-1 dimension at `axis`.
///   reshape %t             same elements in row-major order, new shape (same count).
///   permute %t {order}     result.shape[i] = t.shape[order[i]]; element moves accordingly.
///   cat %a, %b {axis}      concatenation along `axis`; the other dimensions agree.
///
/// Elementwise (operands have identical types unless stated; scalars or tiles)
///   add sub mul            wrap for integers; IEEE for floats.
///   div rem                integers: C semantics (truncate toward zero; remainder has the sign
///                          of the dividend); by zero undefined. Floats: division within 2.5 ulp
///                          of IEEE's (SPIR-V's OpFDiv bound; CUDA's f32 div.full is within 2,
///                          the interpreters and f64 round correctly), fmod exact.
///   min max {nan}          floats: NaN if either operand is NaN (nan = "propagate", the
///                          default) or the other operand (nan = "ignore"); -0 < +0.
///   and or xor not         bitwise (logical on i1).
///   shl shr                shift by the second operand; shr is arithmetic for signed dtypes,
///                          logical for unsigned; a count >= the bit width is undefined.
///   cmp_eq ... cmp_ge      result dtype i1; float compares are ordered (false on NaN) except
///                          cmp_ne, which is true when either operand is NaN.
///   neg abs                integers wrap (abs(INT_MIN) == INT_MIN).
///   exp exp2 log log2 log1p sqrt rsqrt sin cos tanh erf floor ceil
///   expm1 log10 sinh cosh asin acos atan cbrt
///   erfinv                 the inverse of erf: NaN outside [-1, 1], +-inf at +-1.
///   pow atan2 hypot %a, %b (the two operands of one float type, C99's special values: pow(x, 0)
///                          = pow(1, y) = 1, a negative x NaN unless y is an integer ...)
///                          float only; results within the target's documented ulp of the
///                          correctly rounded value (the interpreter computes in double and
///                          rounds once); f32 exp2 may flush results below 2^-126 to +0 (PTX
///                          does: ex2.approx.ftz, as Triton's tl.exp2).
///   fma %a, %b, %c         a*b+c with one rounding.
///   where %c, %a, %b       %c (i1) ? %a : %b; %a and %b share a type, %c its shape.
///   cast %x                to the result dtype. int->int truncates or extends by the source's
///                          signedness; i1 -> int gives 0/1; x -> i1 is x != 0; int->float and
///                          float->float round to nearest even; float->int truncates toward
///                          zero (NaN or out of range: undefined).
///   bitcast %x             reinterpret the bits (same width); a pointer and an i64/u64
///                          reinterpret as the byte address.
///   ptr_add %p, %off       %p advanced by %off elements of its pointee (integer %off).
///
/// Memory
///   load %ptr [, %mask [, %other]] {cache?}
///       reads one element per pointer. A masked-off lane reads no memory and yields %other
///       (undefined without %other). %mask is i1 of the pointer's shape; %other has the result
///       type.
///   store %ptr, %value [, %mask]
///       writes one element per pointer; masked-off lanes write nothing. If two lanes of one
///       store name the same address, one of the values lands (unspecified which).
///   Ordering within a program: a load or store sees an earlier store of the same program to
///   the same address when both access it at the same position of tiles of one shape (x + offs
///   stored, then loaded again). Accesses to one address at different tile positions by
///   different ops are unordered, as in Triton: a program must not read what another position
///   of its own tiles wrote earlier.
///   atomic_rmw %ptr, %val [, %mask] {op, sem, scope}
///       op in add max min and or xor xchg; per lane, atomically old = *p; *p = op(old, val);
///       yields old. sem in relaxed acquire release acq_rel (default acq_rel), scope in
///       cta gpu sys (default gpu). Float max/min order -0 < +0 and ignore NaN in val.
///   atomic_cas %ptr, %cmp, %val {sem, scope}
///       per lane, atomically old = *p; if (old == cmp) *p = val; yields old (bitwise compare).
///   desc_load %base, %dim0.., %stride0.., %off0..
///       a tensor descriptor's block (Triton's make_tensor_descriptor + load): %base a scalar
///       pointer, then rank scalars each of the tensor's shape, its strides (in elements) and
///       the block's offsets, all of one integer dtype (i32 or i64); rank is the result's.
///       Element i of the block is the tensor's element c = off + i when 0 <= c[d] < dim[d]
///       for every d, at %base + sum(c[d] * stride[d]) (computed in the index dtype, wrapping);
///       every other element is zero and reads no memory.
///   desc_store %base, %dim0.., %stride0.., %off0.., %value
///       writes the block %value (the pointee dtype; its rank is the descriptor's) to the same
///       addresses; elements outside the tensor write nothing.
///   Targets without a tensor-memory engine run both as the masked load and store above
///   (core/passes/descriptors.h expands them before planning).
///
/// Reductions, scans and the matrix product
///   reduce %t {axis, kind}
///       kind in sum prod max min argmax argmin xor_sum and or. The result drops `axis`
///       (rank-1 input gives a scalar); argmax/argmin give the i32 index of the first extreme
///       element (ties to the lowest index; a NaN is the extreme for both). max/min follow the
///       `max`/`min` op's rule `nan`: "propagate" (the default: NaN if any element is NaN) or
///       "ignore" (NaN only if every element is; Triton's tl.max/tl.min, which tl::max/tl::min
///       emit). Float sums may be reassociated; f16 and bf16 sums accumulate in f32 and round
///       each result once (`sum_accumulator`), so the order hardly shows.
///   reduce_generic %t0, ... {axis} ({ ^(%l0.., %r0..): ...; yield %c0.. })
///       combines N same-shape tiles along `axis` with the region, which receives the left
///       (lower-index) then the right elements; the combine must be associative. N results.
///   scan %t {axis, kind, reverse, nan}
///       inclusive scan (kind in sum prod max min; max/min take `nan` as reduce does); reverse
///       = 1 scans from the end. Float sums may be reassociated and, as for reduce, f16/bf16
///       sums accumulate in f32 and round each result once.
///   scan_generic %t0, ... {axis, reverse} ({ region as for reduce_generic })
///   dot %a, %b, %acc {precision}
///       a:[M,K], b:[K,N], acc:[M,N] -> [M,N] of acc's dtype: acc + a x b, accumulated in
///       acc's dtype (the interpreter adds one exact product at a time, k increasing, rounding
///       once per step, as tensor cores and FMA units do). precision "tf32" (the default for f32
///       inputs) keeps 10 mantissa bits of each f32 input: the interpreters and mma.sync round to
///       nearest (ties away), Hopper's wgmma drops the low 13 bits; "ieee" uses the inputs as they
///       are. f16/bf16 inputs give exact products; i8 inputs accumulate in i32. Summation order is
///       unspecified.
///
/// Debugging and hints
///   print %v... {prefix, hex}   prints the program id, the prefix and each value.
///   assert %v.., %cond {message, values, fault}
///                               a false element is a device fault naming the message (and
///                               beginning with `fault`, default "device assert failed"). The
///                               `values` operands (default none, at most kMaxAssertValues;
///                               integers (not i1) of %cond's shape) are reported with it: in the
///                               message, `{k}` stands for the failing element's k-th value in
///                               decimal and
///                               `{k:x}` for it in hex (core/support/fault_text.h).
///   multiple_of %x {values}     %x (integers, or pointers: Triton's
///                               `tl.multiple_of(ptr + offs, 16)`), with a promise that dimension
///                               i's elements are multiples of values[i] (for scalars:
///                               values[0]); for pointers, their byte addresses are.
///   max_contiguous %x {values}  %x (integers or pointers), with a promise of runs of values[i]
///                               consecutive integers (for pointers: consecutive elements).
///   assume %cond                a promise that the i1 scalar is true (checked by the
///                               interpreter).
///   debug_barrier               every thread of the program waits for the others, and its global
///                               and shared memory accesses before it are visible to the
///                               program's accesses after it (Triton's tl.debug_barrier); the
///                               interpreters run a program's ops in order, so there it does
///                               nothing. Lowered to the SIMT `barrier {global = 1}`.
///
/// Inline assembly (Triton's tl.inline_asm_elementwise)
///   inline_asm %a... {asm, constraints, pack}         (pure: may be CSE'd and deleted)
///   inline_asm_impure %a... {asm, constraints, pack}  (kept and ordered as a side effect)
///       PTX text run once per `pack` elements: in the tile IR the operands (at least one) share
///       one shape (or are all scalars) and each result has that shape and its own dtype; element
///       e of every result is what the asm computes from element e of every operand. The
///       constraint string lists LLVM's inline-asm constraints, outputs ("=r") first, then
///       inputs, then clobbers ("~{memory}"); $i names the i-th. With pack = p (a power of two,
///       at most 16), a type of b < 32 bits puts min(32 / b, p) consecutive elements in one
///       register (the first in the low bits) and a wider type one element per register, so a
///       type takes p / that registers: output registers result by result, then input registers
///       operand by operand. Only PTX runs it; every other target refuses it (Unsupported). In
///       the SIMT IR the operands and results are scalars, p consecutive elements of each
///       tile-IR operand (result) in turn, one invocation of the asm.
///
/// Structured control flow
///   for %lb, %ub, %step, %init... ({ ^(%iv, %iter...): ...; yield %next... })
///       iv runs from lb while iv < ub (step > 0) or iv > ub (step < 0), in the bounds' type
///       (i32 or i64); the iteration arguments start at the inits and take each yield; the
///       results are the last values. step == 0 is undefined.
///   if %cond ({ then: ...; yield %a... }, { else: ...; yield %b... })
///       runs one region; results are what it yields.
///   while %init... ({ before: ^(%args...): ...; condition %c, %v... },
///                   { after: ^(%v...): ...; yield %next... })
///       runs `before`; if %c is false the results are %v, otherwise runs `after` with %v and
///       starts over with what it yields.
///   yield %v...                 ends a region, passing values to its op.
///   condition %c, %v...         ends a while's before-region.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "../support/error.h"
#include "ir.h"

namespace tessera::ir {

/// Base of the typed views: checks the kind, forwards to the op.
template <OpKind K>
struct OpView {
  const Op* op;  ///< views only read: a view of a const op needs no const_cast
  explicit OpView(const Op* o) : op(o) {
    TESSERA_CHECK(o && o->kind == K, "expected op '", op_name(K), "'");
  }
  static bool is(const Op* o) { return o && o->kind == K; }
  Value* result(size_t i = 0) const { return op->result(i); }
  Location loc() const { return op->loc; }
};

struct ProgramIdOp : OpView<OpKind::ProgramId> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
};
struct NumProgramsOp : OpView<OpKind::NumPrograms> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
};
struct ConstantOp : OpView<OpKind::Constant> {
  using OpView::OpView;
  bool is_float() const { return std::holds_alternative<double>(*op->find_attr(attr::kValue)); }
  int64_t int_value() const { return op->int_attr(attr::kValue); }
  double float_value() const { return op->float_attr(attr::kValue); }
};
struct ArangeOp : OpView<OpKind::Arange> {
  using OpView::OpView;
  int64_t start() const { return op->int_attr(attr::kStart); }
  int64_t end() const { return op->int_attr(attr::kEnd); }
};
struct ExpandDimsOp : OpView<OpKind::ExpandDims> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
};
struct PermuteOp : OpView<OpKind::Permute> {
  using OpView::OpView;
  const std::vector<int64_t>& order() const { return op->ints_attr(attr::kOrder); }
};
struct CatOp : OpView<OpKind::Cat> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
};

struct LoadOp : OpView<OpKind::Load> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* mask() const { return op->operands.size() > 1 ? op->operand(1) : nullptr; }
  Value* other() const { return op->operands.size() > 2 ? op->operand(2) : nullptr; }
};
struct StoreOp : OpView<OpKind::Store> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* value() const { return op->operand(1); }
  Value* mask() const { return op->operands.size() > 2 ? op->operand(2) : nullptr; }
};

/// The operands shared by desc_load and desc_store: base, then rank each of dims, strides and
/// offsets.
struct DescOperands {
  const Op* op;
  int rank;
  Value* base() const { return op->operand(0); }
  Value* dim(int d) const { return op->operand(1 + d); }
  Value* stride(int d) const { return op->operand(1 + rank + d); }
  Value* offset(int d) const { return op->operand(1 + 2 * rank + d); }
};
struct DescLoadOp : OpView<OpKind::DescLoad> {
  using OpView::OpView;
  DescOperands desc() const { return {op, static_cast<int>(op->operands.size() - 1) / 3}; }
};
struct DescStoreOp : OpView<OpKind::DescStore> {
  using OpView::OpView;
  DescOperands desc() const { return {op, static_cast<int>(op->operands.size() - 2) / 3}; }
  Value* value() const { return op->operands.back(); }
};

enum class AtomicOp { Add, Max, Min, And, Or, Xor, Xchg };
enum class MemSem { Relaxed, Acquire, Release, AcqRel };
enum class MemScope { Cta, Gpu, Sys };
std::string_view to_string(AtomicOp o);
std::string_view to_string(MemSem s);
std::string_view to_string(MemScope s);
bool parse_atomic_op(std::string_view s, AtomicOp* out);
bool parse_mem_sem(std::string_view s, MemSem* out);
bool parse_mem_scope(std::string_view s, MemScope* out);

struct AtomicRmwOp : OpView<OpKind::AtomicRmw> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* val() const { return op->operand(1); }
  Value* mask() const { return op->operands.size() > 2 ? op->operand(2) : nullptr; }
  AtomicOp atomic_op() const;
  MemSem sem() const;
  MemScope scope() const;
};
struct AtomicCasOp : OpView<OpKind::AtomicCas> {
  using OpView::OpView;
  Value* ptr() const { return op->operand(0); }
  Value* cmp() const { return op->operand(1); }
  Value* val() const { return op->operand(2); }
  MemSem sem() const;
  MemScope scope() const;
};

enum class ReduceKind { Sum, Prod, Max, Min, ArgMax, ArgMin, XorSum, And, Or };
std::string_view to_string(ReduceKind k);
bool parse_reduce_kind(std::string_view s, ReduceKind* out);

struct ReduceOp : OpView<OpKind::Reduce> {
  using OpView::OpView;
  Value* input() const { return op->operand(0); }
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
  ReduceKind reduce_kind() const;
};
struct ReduceGenericOp : OpView<OpKind::ReduceGeneric> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
  Region* combine() const { return op->region(0); }
};
struct ScanOp : OpView<OpKind::Scan> {
  using OpView::OpView;
  Value* input() const { return op->operand(0); }
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
  bool reverse() const { return op->int_attr_or(attr::kReverse, 0) != 0; }
  ReduceKind scan_kind() const;
};
struct ScanGenericOp : OpView<OpKind::ScanGeneric> {
  using OpView::OpView;
  int axis() const { return static_cast<int>(op->int_attr(attr::kAxis)); }
  bool reverse() const { return op->int_attr_or(attr::kReverse, 0) != 0; }
  Region* combine() const { return op->region(0); }
};

enum class DotPrecision { Ieee, Tf32 };
std::string_view to_string(DotPrecision p);
bool parse_dot_precision(std::string_view s, DotPrecision* out);

struct DotOp : OpView<OpKind::Dot> {
  using OpView::OpView;
  Value* lhs() const { return op->operand(0); }
  Value* rhs() const { return op->operand(1); }
  Value* acc() const { return op->operand(2); }
  DotPrecision precision() const;
};

struct PrintOp : OpView<OpKind::Print> {
  using OpView::OpView;
  std::string prefix() const { return op->str_attr_or(attr::kPrefix, ""); }
  bool hex() const { return op->int_attr_or(attr::kHex, 0) != 0; }
};
/// The most values an assert reports (the fault records of the GPU targets hold this many).
inline constexpr int kMaxAssertValues = 3;

struct AssertOp : OpView<OpKind::Assert> {
  using OpView::OpView;
  /// The condition: the last operand (SIMT asserts put element indices before the values).
  Value* cond() const { return op->operands.back(); }
  std::string message() const { return op->str_attr_or(attr::kMessage, ""); }
  /// How many values the assert reports (attribute `values`, default 0).
  int num_values() const { return static_cast<int>(op->int_attr_or(attr::kValues, 0)); }
  /// The reported values: the operands right before the condition.
  std::span<Value* const> values() const {
    const size_t n = static_cast<size_t>(num_values());
    return {op->operands.data() + op->operands.size() - 1 - n, n};
  }
};

/// What an assert's fault says first: its attribute `fault` (the bounds checks say
/// "out-of-bounds load", ...), else "device assert failed".
inline std::string assert_heading(const Op& assert_op) {
  return assert_op.str_attr_or(attr::kFault, "device assert failed");
}

struct ForOp : OpView<OpKind::For> {
  using OpView::OpView;
  Value* lower() const { return op->operand(0); }
  Value* upper() const { return op->operand(1); }
  Value* step() const { return op->operand(2); }
  std::span<Value* const> inits() const {
    return {op->operands.data() + 3, op->operands.size() - 3};
  }
  Region* body() const { return op->region(0); }
  Value* iv() const { return body()->args.at(0); }
  std::span<Value* const> iter_args() const {
    return {body()->args.data() + 1, body()->args.size() - 1};
  }
};
struct IfOp : OpView<OpKind::If> {
  using OpView::OpView;
  Value* cond() const { return op->operand(0); }
  Region* then_region() const { return op->region(0); }
  Region* else_region() const { return op->region(1); }
};
struct WhileOp : OpView<OpKind::While> {
  using OpView::OpView;
  Region* before() const { return op->region(0); }
  Region* after() const { return op->region(1); }
};

/// \name Inline assembly (inline_asm, inline_asm_impure)
//@{
/// Is `k` inline_asm or inline_asm_impure?
inline bool is_inline_asm(OpKind k) {
  return k == OpKind::InlineAsm || k == OpKind::InlineAsmImpure;
}
/// How many elements of dtype `t` one asm register holds at `pack` elements per invocation:
/// min(32 / bits, pack) below 32 bits, else 1.
int inline_asm_elems_per_reg(DType t, int64_t pack);
/// The entries of an inline-asm constraint string ("=r,=r,r,~{memory}"), counted by kind.
struct AsmConstraints {
  int outputs = 0;   ///< entries starting with '='
  int inputs = 0;    ///< the other entries but clobbers
  int clobbers = 0;  ///< entries starting with '~'
  /// Empty when well formed; else what is wrong (an empty entry, an output after an input,
  /// a clobber before an operand).
  std::string error;
};
AsmConstraints parse_asm_constraints(std::string_view constraints);
/// The registers an invocation takes for values of `dtypes` at `pack` (the sum over dtypes of
/// pack / inline_asm_elems_per_reg).
int inline_asm_registers(std::span<const DType> dtypes, int64_t pack);
/// The view of either inline-asm kind.
struct InlineAsmOp {
  const Op* op;
  explicit InlineAsmOp(const Op* o) : op(o) {
    TESSERA_CHECK(o && is_inline_asm(o->kind), "expected an inline_asm op");
  }
  const std::string& asm_text() const { return op->str_attr(attr::kAsm); }
  const std::string& constraints() const { return op->str_attr(attr::kConstraints); }
  int64_t pack() const { return op->int_attr_or(attr::kPack, 1); }
  bool pure() const { return op->kind == OpKind::InlineAsm; }
};
//@}

/// Min/max NaN rule of a min, max, reduce or scan op: true when NaN operands propagate (the
/// IR's default; the kernel language asks "ignore", Triton's default).
bool propagates_nan(const Op* minmax);

/// The dtype in which a reduce or scan of kind sum over `t` elements adds: f32 for f16 and bf16,
/// each result rounded once to `t` (adding in 8 or 11 bits, two orders of one sum can differ by
/// a large fraction of a result that cancels, and the order is the layout's), else `t`.
DType sum_accumulator(DType t);

}  // namespace tessera::ir
