/// \file The kernel language: Triton's block-level model as C++ functions in `tessera::tl`.
///
///   void gelu_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, int BLOCK) {
///     auto pid  = tl::program_id(0);
///     auto offs = pid * BLOCK + tl::arange(0, BLOCK);   // [BLOCK] i32
///     auto mask = offs < n;                              // [BLOCK] i1
///     auto v    = tl::load(x + offs, mask);              // [BLOCK] f32
///     ...
///     tl::store(y + offs, result, mask);
///   }
///
/// Runtime parameters are handle types (tl::ptr<T>, tl::i32, ...; tl::pointer and tl::scalar
/// take their dtype from the launch argument); compile-time constants are plain C++ values, so
/// shapes are known while tracing (Triton's tl.constexpr). Plain C++ `if`/`for` run at trace
/// time; tl::range, tl::if_ and tl::while_ build IR loops and branches. Every operation records
/// the caller's file:line, and misuse is a tessera::Error (ErrorKind::User) naming it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "core/lang/params.h"
#include "core/lang/tensor.h"

namespace tessera::tl {

// --- program identity ---------------------------------------------------------------------
tensor program_id(int axis, Here loc = Here::current());
tensor num_programs(int axis, Here loc = Here::current());

// --- tile construction ----------------------------------------------------------------------
/// [start, end) as an i32 tile; end - start must be a power of two.
tensor arange(int64_t start, int64_t end, Here loc = Here::current());
tensor full(const Shape& shape, const Operand& value, DType dtype, Here loc = Here::current());
tensor zeros(const Shape& shape, DType dtype, Here loc = Here::current());
template <class T>
tensor zeros(const Shape& shape, Here loc = Here::current());
tensor broadcast_to(const tensor& x, const Shape& shape, Here loc = Here::current());
tensor expand_dims(const tensor& x, int axis, Here loc = Here::current());
tensor reshape(const tensor& x, const Shape& shape, Here loc = Here::current());
tensor permute(const tensor& x, const std::vector<int64_t>& order, Here loc = Here::current());
/// Transpose of a 2-D tile (or of the last two dimensions).
tensor trans(const tensor& x, Here loc = Here::current());
/// Concatenation along `axis` (default 0).
tensor cat(const tensor& a, const tensor& b, int axis = 0, Here loc = Here::current());

// --- elementwise ----------------------------------------------------------------------------
tensor where(const Operand& cond, const Operand& a, const Operand& b, Here loc = Here::current());
enum class PropagateNan { All, None };
tensor minimum(const Operand& a, const Operand& b, PropagateNan nan = PropagateNan::All,
               Here loc = Here::current());
tensor maximum(const Operand& a, const Operand& b, PropagateNan nan = PropagateNan::All,
               Here loc = Here::current());
tensor clamp(const Operand& x, const Operand& lo, const Operand& hi, Here loc = Here::current());
/// True division: integer operands are converted to f32 first (Triton's `/`).
tensor fdiv(const Operand& a, const Operand& b, Here loc = Here::current());
/// Integer ceiling division (Triton's tl.cdiv).
tensor cdiv(const Operand& a, const Operand& b, Here loc = Here::current());
tensor fma(const Operand& a, const Operand& b, const Operand& c, Here loc = Here::current());
tensor exp(const Operand& x, Here loc = Here::current());
tensor exp2(const Operand& x, Here loc = Here::current());
tensor log(const Operand& x, Here loc = Here::current());
tensor log2(const Operand& x, Here loc = Here::current());
tensor sqrt(const Operand& x, Here loc = Here::current());
tensor rsqrt(const Operand& x, Here loc = Here::current());
tensor sin(const Operand& x, Here loc = Here::current());
tensor cos(const Operand& x, Here loc = Here::current());
tensor tanh(const Operand& x, Here loc = Here::current());
tensor erf(const Operand& x, Here loc = Here::current());
tensor floor(const Operand& x, Here loc = Here::current());
tensor ceil(const Operand& x, Here loc = Here::current());
tensor abs(const Operand& x, Here loc = Here::current());
tensor sigmoid(const Operand& x, Here loc = Here::current());

// --- memory ---------------------------------------------------------------------------------
struct LoadOptions {
  std::string cache;  ///< "", "ca", "cg", "cs", "cv" (hints; a target may ignore them)
  bool is_volatile = false;
};
/// Reads one element per pointer. Lanes where `mask` is false read nothing and yield `other`.
tensor load(const tensor& ptr, Here loc = Here::current());
tensor load(const tensor& ptr, const Operand& mask, Here loc = Here::current());
tensor load(const tensor& ptr, const Operand& mask, const Operand& other,
            const LoadOptions& options = {}, Here loc = Here::current());
/// Writes one element per pointer (converting `value` to the pointee dtype, as Triton does).
void store(const tensor& ptr, const Operand& value, Here loc = Here::current());
void store(const tensor& ptr, const Operand& value, const Operand& mask, Here loc = Here::current());

// --- tensor descriptors ---------------------------------------------------------------------
/// A tensor in global memory read and written a block at a time (Triton's
/// tl.make_tensor_descriptor): `shape` and `strides` (in elements) have one integer per
/// dimension, `block_shape` one power of two per dimension.
///
///   auto a = tl::make_tensor_descriptor(a_ptr, {M, K}, {stride_am, 1}, {BLOCK_M, BLOCK_K});
///   auto tile = a.load({pid_m * BLOCK_M, k});  // [BLOCK_M, BLOCK_K]; zero outside the tensor
///   c.store({pid_m * BLOCK_M, pid_n * BLOCK_N}, acc);  // elements outside the tensor dropped
///
/// Offsets may be negative or past the end: only the elements inside the tensor are accessed.
/// Addresses are computed in i32 unless a shape, stride or offset is a 64-bit (or u32) value,
/// then in i64: pass int64 values for tensors of more than 2^31 elements.
class tensor_descriptor {
 public:
  /// The block at `offsets` (one per dimension), in the base pointer's dtype.
  tensor load(std::initializer_list<Operand> offsets, Here loc = Here::current()) const;
  /// Writes `value` (converted to the pointee dtype, broadcast to the block) at `offsets`.
  void store(std::initializer_list<Operand> offsets, const Operand& value,
             Here loc = Here::current()) const;
  const Shape& block_shape() const { return block_; }

 private:
  friend tensor_descriptor make_tensor_descriptor(const tensor&, std::initializer_list<Operand>,
                                                  std::initializer_list<Operand>, const Shape&,
                                                  Here);
  /// base, then the dims and strides, then `offsets`, in one index dtype.
  std::vector<ir::Value*> operands(std::initializer_list<Operand> offsets, std::string_view op,
                                   const Here& loc) const;
  tensor base_;
  std::vector<tensor> dims_, strides_;
  Shape block_;
};
tensor_descriptor make_tensor_descriptor(const tensor& base, std::initializer_list<Operand> shape,
                                         std::initializer_list<Operand> strides,
                                         const Shape& block_shape, Here loc = Here::current());

// --- atomics (yield the old values) -------------------------------------------------------------
struct AtomicOptions {
  std::string sem = "acq_rel";  ///< relaxed, acquire, release, acq_rel
  std::string scope = "gpu";    ///< cta, gpu, sys
};
tensor atomic_add(const tensor& ptr, const Operand& val, const Operand& mask = true,
                  const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_max(const tensor& ptr, const Operand& val, const Operand& mask = true,
                  const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_min(const tensor& ptr, const Operand& val, const Operand& mask = true,
                  const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_and(const tensor& ptr, const Operand& val, const Operand& mask = true,
                  const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_or(const tensor& ptr, const Operand& val, const Operand& mask = true,
                 const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_xor(const tensor& ptr, const Operand& val, const Operand& mask = true,
                  const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_xchg(const tensor& ptr, const Operand& val, const Operand& mask = true,
                   const AtomicOptions& o = {}, Here loc = Here::current());
tensor atomic_cas(const tensor& ptr, const Operand& cmp, const Operand& val,
                  const AtomicOptions& o = {}, Here loc = Here::current());

// --- reductions and scans ---------------------------------------------------------------------
// `axis` = -1 counts from the end; `keep_dims` keeps the reduced axis as size 1. Sums of
// narrow integers accumulate in i32 (u32 for unsigned), sums of f16/bf16 in f32, as in Triton.
tensor sum(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor prod(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor max(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor min(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor argmax(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor argmin(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor xor_sum(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
/// Generic reduction: `combine(lhs..., rhs...)` returns the combined values; it must be
/// associative. Reduces several same-shape tiles together (e.g. Welford's mean and M2).
using Combine = std::function<std::vector<tensor>(const std::vector<tensor>& lhs,
                                                  const std::vector<tensor>& rhs)>;
std::vector<tensor> reduce(const std::vector<tensor>& xs, int axis, const Combine& combine,
                           bool keep_dims = false, Here loc = Here::current());
tensor reduce(const tensor& x, int axis,
              const std::function<tensor(const tensor&, const tensor&)>& combine,
              bool keep_dims = false, Here loc = Here::current());
tensor cumsum(const tensor& x, int axis = 0, bool reverse = false, Here loc = Here::current());
tensor cumprod(const tensor& x, int axis = 0, bool reverse = false, Here loc = Here::current());
std::vector<tensor> associative_scan(const std::vector<tensor>& xs, int axis,
                                     const Combine& combine, bool reverse = false,
                                     Here loc = Here::current());
tensor associative_scan(const tensor& x, int axis,
                        const std::function<tensor(const tensor&, const tensor&)>& combine,
                        bool reverse = false, Here loc = Here::current());

// --- matrix product -----------------------------------------------------------------------------
enum class InputPrecision { Tf32, Ieee };
/// acc + a x b for a:[M,K], b:[K,N]. Without acc the accumulator is zeros of f32 (i32 for int8
/// inputs). f32 inputs use TF32 unless InputPrecision::Ieee is asked, like Triton.
tensor dot(const tensor& a, const tensor& b, Here loc = Here::current());
tensor dot(const tensor& a, const tensor& b, const tensor& acc,
           InputPrecision precision = InputPrecision::Tf32, Here loc = Here::current());

// --- debugging and hints ------------------------------------------------------------------------
void device_print(const std::string& prefix, const std::vector<tensor>& values, bool hex = false,
                  Here loc = Here::current());
void device_assert(const Operand& cond, const std::string& message, Here loc = Here::current());
tensor multiple_of(const tensor& x, int64_t divisor, Here loc = Here::current());
tensor multiple_of(const tensor& x, const std::vector<int64_t>& divisors, Here loc = Here::current());
tensor max_contiguous(const tensor& x, int64_t run, Here loc = Here::current());
tensor max_contiguous(const tensor& x, const std::vector<int64_t>& runs, Here loc = Here::current());
void assume(const Operand& cond, Here loc = Here::current());

// --- IR control flow ------------------------------------------------------------------------------
/// An IR loop: `for (auto i : tl::range(lo, hi, step)) { ... }`. The body is traced once;
/// variables it assigns are carried from one iteration to the next, and hold the last values
/// after the loop. `break` and `return` inside the body are not supported (use tl::while_).
class Range;
Range range(const Operand& lo, const Operand& hi, const Operand& step = 1, Here loc = Here::current());

/// An IR branch on an i1 scalar. Variables assigned in either branch become the branch's
/// results (a variable first given a value inside a branch must be given one in both).
void if_(const Operand& cond, const std::function<void()>& then_fn, Here loc = Here::current());
void if_(const Operand& cond, const std::function<void()>& then_fn,
         const std::function<void()>& else_fn, Here loc = Here::current());

/// An IR while loop: `cond` is traced into the loop header and must return an i1 scalar;
/// variables assigned in `cond` or `body` are carried.
void while_(const std::function<tensor()>& cond, const std::function<void()>& body,
            Here loc = Here::current());

}  // namespace tessera::tl

#include "core/lang/range.h"

namespace tessera::tl {
template <class T>
tensor zeros(const Shape& shape, Here loc) {
  return zeros(shape, dtype_of<T>(), loc);
}
}  // namespace tessera::tl
