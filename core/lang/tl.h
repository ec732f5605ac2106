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

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "params.h"
#include "tensor.h"

namespace tessera::tl {

// --- program identity ---------------------------------------------------------------------
/// This program's index along grid `axis` (0, 1 or 2), an i32 scalar (Triton's tl.program_id).
tensor program_id(int axis, Here loc = Here::current());
/// The grid's size along `axis` (0, 1 or 2), an i32 scalar (Triton's tl.num_programs).
tensor num_programs(int axis, Here loc = Here::current());

// --- tile construction ----------------------------------------------------------------------
/// [start, end) as an i32 tile; end - start must be a power of two.
tensor arange(int64_t start, int64_t end, Here loc = Here::current());
/// A tile of `shape` and `dtype` with every element `value` (a scalar tensor or a number).
tensor full(const Shape& shape, const Operand& value, DType dtype, Here loc = Here::current());
/// A tile of `shape` and `dtype` filled with zeros.
tensor zeros(const Shape& shape, DType dtype, Here loc = Here::current());
/// A tile of `shape` filled with zeros, of the dtype of the C++ type T (`tl::zeros<float>`).
template <class T>
tensor zeros(const Shape& shape, Here loc = Here::current());
/// `x` broadcast to `shape` (numpy rules: size-1 dimensions stretch, new ones on the left).
tensor broadcast_to(const tensor& x, const Shape& shape, Here loc = Here::current());
/// `x` with a size-1 dimension inserted at `axis` (`x[{_, None}]` for axis 1).
tensor expand_dims(const tensor& x, int axis, Here loc = Here::current());
/// `x` with the same elements in row-major order under a new `shape` of the same size.
tensor reshape(const tensor& x, const Shape& shape, Here loc = Here::current());
/// `x` with its dimensions reordered: result dimension i is `x`'s dimension `order[i]`.
tensor permute(const tensor& x, const std::vector<int64_t>& order, Here loc = Here::current());
/// Transpose of a 2-D tile (or of the last two dimensions).
tensor trans(const tensor& x, Here loc = Here::current());
/// Concatenation along `axis` (default 0).
tensor cat(const tensor& a, const tensor& b, int axis = 0, Here loc = Here::current());
/// \name Joining, splitting and flipping (Triton's tl.join, tl.split, tl.interleave, tl.flip)
/// Composed of shape ops, bitcasts and the xor_sum reduction, so every target runs them; the
/// elements move bit for bit (NaN payloads and -0 kept). Pointer tiles are refused by split and
/// flip.
//@{
/// `a` and `b` (one dtype, broadcast to one shape S) stacked along a new minor dimension of 2:
/// the result has shape S + [2], `a` at index 0 (two scalars give a [2] tile).
tensor join(const tensor& a, const tensor& b, Here loc = Here::current());
/// The inverse of tl::join: a tile whose last dimension is 2 as the pair {x[..., 0], x[..., 1]}
/// (a [2] tile gives two scalars).
std::array<tensor, 2> split(const tensor& x, Here loc = Here::current());
/// `a` and `b` interleaved along their last dimension: [a0, b0, a1, b1, ...], shape S with its
/// last dimension doubled (tl::join then a reshape, as Triton defines it).
tensor interleave(const tensor& a, const tensor& b, Here loc = Here::current());
/// `x` reversed along `axis` (-1, the last dimension, by default).
tensor flip(const tensor& x, int axis = -1, Here loc = Here::current());
//@}

/// \name Sorting, histograms and in-register gathers (Triton's tl.sort, tl.histogram, tl.gather)
/// Composed of shape ops, comparisons, where and the sum and xor_sum reductions, so every
/// target runs them; sort and gather move elements bit for bit (NaN payloads and -0 kept).
//@{
/// `x` sorted along `dim` (the last dimension by default), ascending or `descending`, by
/// Triton's bitonic network: the dimension's size is a power of two (as every tile's), and
/// the other dimensions are independent rows. Every dtype but pointers; i1 sorts as 0 < 1.
/// Ties and NaN follow from the network's IEEE `>` comparisons exactly as in Triton 3.6 (the
/// same pairs compared in the same order), so the result is Triton's permutation of the input:
/// without NaN it is the sorted sequence (-0 and +0 compare equal and keep the network's
/// order); a NaN compares false both ways and so lands where the network leaves it, not
/// necessarily at an end. Triton sorts only the last dimension; another `dim` is sorted here
/// by a permute to the last and back.
tensor sort(const tensor& x, int dim = -1, bool descending = false, Here loc = Here::current());
/// The histogram of the 1-D integer tile `x` over `num_bins` bins of width 1 starting at 0
/// (Triton's tl.histogram): an i32 tile of shape [num_bins], element b the number of elements
/// equal to b. `num_bins` is a power of two (a tile size). Values below 0 or at or past
/// num_bins are not counted (Triton's interpreter drops them, np.histogram over [0, num_bins);
/// Triton's documentation does not define them on a GPU). Composed of a compare of `x` against
/// tl::arange(0, num_bins) and a sum, so the tile [size(x), num_bins] must fit the tile limit.
tensor histogram(const tensor& x, int64_t num_bins, Here loc = Here::current());
/// tl::histogram counting only the elements where `mask` (an i1 tile of x's shape, or an i1
/// scalar) is true (Triton's `mask=`).
tensor histogram(const tensor& x, int64_t num_bins, const tensor& mask, Here loc = Here::current());
/// The elements of `src` picked along `axis` by `index` (Triton's tl.gather): `index` is an
/// integer tile of src's rank whose dimensions other than `axis` equal src's, the result has
/// index's shape and src's dtype, and for axis 0 of a 2-D tile out[i][j] = src[index[i][j]][j].
/// The elements are copied bit for bit (-0, NaN payloads). An index outside [0, src's size
/// along axis) gives 0 bits (0, +0.0); Triton leaves it undefined. Composed of a one-hot compare
/// along a new dimension and an xor_sum of the one selected element's bits, so the tile of
/// index's shape times src's size along `axis` must fit the tile limit.
tensor gather(const tensor& src, const tensor& index, int axis, Here loc = Here::current());
//@}

// --- elementwise ----------------------------------------------------------------------------
/// `a` where `cond` (i1) is true, else `b`, elementwise with broadcasting.
tensor where(const Operand& cond, const Operand& a, const Operand& b, Here loc = Here::current());
/// How tl::minimum, tl::maximum and tl::clamp treat NaN operands (Triton's propagate_nan).
enum class PropagateNan {
  All,   ///< a NaN in either operand gives NaN
  None,  ///< a NaN operand is ignored when the other is a number (Triton's default)
};
/// The elementwise minimum of `a` and `b`. As in Triton, a NaN operand is ignored unless
/// PropagateNan::All is asked: minimum(NaN, 1) is 1 (NaN only when both are NaN); -0 < +0.
tensor minimum(const Operand& a, const Operand& b, PropagateNan nan = PropagateNan::None,
               Here loc = Here::current());
/// The elementwise maximum of `a` and `b`, with tl::minimum's NaN rule: maximum(x, 0.0f) is 0
/// where x is NaN, as Triton's tl.maximum gives.
tensor maximum(const Operand& a, const Operand& b, PropagateNan nan = PropagateNan::None,
               Here loc = Here::current());
/// `x` limited to [lo, hi], elementwise (Triton's tl.clamp): minimum(maximum(x, lo), hi) with
/// the NaN rule `nan`, so a NaN `x` gives `lo` by default and NaN with PropagateNan::All.
tensor clamp(const Operand& x, const Operand& lo, const Operand& hi,
             PropagateNan nan = PropagateNan::None, Here loc = Here::current());
/// True division (Triton's `/`): integer operands are converted to f32 first, an integer and a
/// float operand divide in the float's dtype. Tessera's `/` on two integers is C's division
/// truncating toward zero, which is Triton's `//`.
tensor truediv(const Operand& a, const Operand& b, Here loc = Here::current());
/// The same as tl::truediv (Tessera's earlier name; Triton's tl.fdiv takes floats only).
tensor fdiv(const Operand& a, const Operand& b, Here loc = Here::current());
/// Integer ceiling division (Triton's tl.cdiv).
tensor cdiv(const Operand& a, const Operand& b, Here loc = Here::current());
/// a * b + c with one rounding, elementwise (floating-point operands).
tensor fma(const Operand& a, const Operand& b, const Operand& c, Here loc = Here::current());
/// \name Math functions
/// Elementwise math, named as in Triton: floating-point operands only (tl::abs also takes
/// integers); an integer operand is a user error.
//@{
/// The function of its name, elementwise: exp is e^x, exp2 is 2^x, log and log2 their inverses,
/// rsqrt is 1/sqrt, sigmoid is 1/(1+e^-x), log1p is log(1+x) (accurate for small x: Triton's
/// libdevice.log1p); sqrt, sin, cos, tanh, erf, floor, ceil, abs as in C.
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
tensor log1p(const Operand& x, Here loc = Here::current());
tensor floor(const Operand& x, Here loc = Here::current());
tensor ceil(const Operand& x, Here loc = Here::current());
tensor abs(const Operand& x, Here loc = Here::current());
tensor sigmoid(const Operand& x, Here loc = Here::current());
/// Triton's libdevice functions of one operand, as C's: expm1 is e^x - 1 (accurate for small x),
/// log10 the base-10 logarithm, sinh and cosh the hyperbolic functions, asin, acos and atan the
/// inverse trigonometric functions (asin and acos NaN outside [-1, 1]), cbrt the real cube root
/// (cbrt(-8) = -2). GPU targets compute them with the math library of targets/math (the
/// interpreters with the C library); the guide's math table gives each one's ulp bound.
tensor expm1(const Operand& x, Here loc = Here::current());
tensor log10(const Operand& x, Here loc = Here::current());
tensor sinh(const Operand& x, Here loc = Here::current());
tensor cosh(const Operand& x, Here loc = Here::current());
tensor asin(const Operand& x, Here loc = Here::current());
tensor acos(const Operand& x, Here loc = Here::current());
tensor atan(const Operand& x, Here loc = Here::current());
tensor cbrt(const Operand& x, Here loc = Here::current());
/// Triton's libdevice.erfinv: the inverse of erf, erfinv(erf(x)) = x; NaN outside [-1, 1],
/// +-inf at +-1. GPU targets compute it with the math library (the guide gives its ulp bound).
tensor erfinv(const Operand& x, Here loc = Here::current());
/// Triton's libdevice functions of two operands, as C's (C99 Annex F's special values): pow is
/// x^y (NaN for a negative x and a non-integer y), atan2 the angle of (x = b, y = a) in [-pi, pi],
/// hypot sqrt(a^2 + b^2) without intermediate overflow. Operands are promoted and broadcast as
/// for `+`; the common dtype must be a float.
tensor pow(const Operand& a, const Operand& b, Here loc = Here::current());
tensor atan2(const Operand& a, const Operand& b, Here loc = Here::current());
tensor hypot(const Operand& a, const Operand& b, Here loc = Here::current());
//@}

// --- integer high product and random numbers ------------------------------------------------
/// The high half of the full product of two integers of 32 or 64 bits (Triton's tl.umulhi):
/// the operands are promoted and broadcast as for `*`, their bits read as unsigned, and the
/// result holds bits [N, 2N) of the 2N-bit product in the operands' dtype. Composed of existing
/// ops (a 64-bit product for 32-bit operands; four 32x32 partial products for 64-bit ones), so
/// every target runs it. Other dtypes (8/16-bit integers, floats, pointers) are a user error.
tensor umulhi(const Operand& a, const Operand& b, Here loc = Here::current());

/// \name Random numbers
/// Triton's tl.random, giving Triton's numbers for the same seed and offsets: the Philox 4x32
/// generator with `n_rounds` rounds (10 by default) keyed by the seed (an integer scalar or
/// literal, converted to u64: key 0 is its low 32 bits, key 1 its high 32 bits) and counted by
/// the offsets (an integer tile: counter 0 is its low 32 bits, counter 1 its high 32 bits for a
/// 64-bit offset and 0 otherwise, counters 2 and 3 are 0). Each element is independent, so a
/// stream is reproducible from (seed, offset) alone, as in Triton. Library functions over
/// elementwise ops and tl::umulhi: no target needs code of its own for them.
//@{
/// Philox on the counters `c0..c3` (the same integer dtype: 32-bit ones run Philox 4x32 with
/// key (low, high) 32 bits of the seed, 64-bit ones Philox 4x64 keyed by (seed, 0)), as
/// Triton's tl.philox; returns the four output words in the counters' unsigned dtype.
std::array<tensor, 4> philox(const Operand& seed, const Operand& c0, const Operand& c1,
                             const Operand& c2, const Operand& c3, int n_rounds = 10,
                             Here loc = Here::current());
/// The four u32 words of Philox 4x32 at `offset` (Triton's tl.randint4x).
std::array<tensor, 4> randint4x(const Operand& seed, const tensor& offset, int n_rounds = 10,
                                Here loc = Here::current());
/// The first word of tl::randint4x, a u32 tile of the offset's shape (Triton's tl.randint).
tensor randint(const Operand& seed, const tensor& offset, int n_rounds = 10,
               Here loc = Here::current());
/// A u32 (or u64) random word as an f32 in [0, 1), as Triton's uint_to_uniform_float: the bits
/// read as signed, x < 0 folded to -x - 1, then times 4.6566127342e-10 (2^-31 rounded below
/// 1 / (2^31 - 1); 1.0842020432385337e-19 for 64-bit words).
tensor uint_to_uniform_float(const tensor& x, Here loc = Here::current());
/// Uniform f32 in [0, 1) from tl::randint (Triton's tl.rand).
tensor rand(const Operand& seed, const tensor& offset, int n_rounds = 10,
            Here loc = Here::current());
/// Four uniform f32 tiles from the four words of tl::randint4x (Triton's tl.rand4x).
std::array<tensor, 4> rand4x(const Operand& seed, const tensor& offset, int n_rounds = 10,
                             Here loc = Here::current());
/// Standard normal f32 from the first two words by Box-Muller (Triton's tl.randn):
/// u1 = max(1e-7, rand word 0), u2 = rand word 1, sqrt(-2 log u1) * cos(2 pi u2) in f32.
tensor randn(const Operand& seed, const tensor& offset, int n_rounds = 10,
             Here loc = Here::current());
/// Four standard normal f32 tiles: Box-Muller on words (0, 1) and (2, 3), the cosine and the
/// sine of each pair (Triton's tl.randn4x).
std::array<tensor, 4> randn4x(const Operand& seed, const tensor& offset, int n_rounds = 10,
                              Here loc = Here::current());
//@}

// --- inline assembly (Triton's tl.inline_asm_elementwise) ------------------------------------
/// \name Inline PTX assembly, element by element (Triton's tl.inline_asm_elementwise)
/// `asm_text` is PTX with $0.. naming the registers of `constraints` (LLVM's inline-asm
/// constraints: outputs "=r" first, then inputs, then clobbers such as "~{memory}"). The `args`
/// (tensors or numbers; at least one) are broadcast together as numpy does; each result has
/// their shape and its dtype from `dtypes`. The asm runs once per `pack` consecutive elements
/// (a power of two, at most 16): an element type below 32 bits puts min(32 / bits, pack)
/// elements in one register (the first in the low bits, as Triton), a wider one one element per
/// register, so a type takes pack / that registers: the output registers of the results in
/// order, then the input registers of the args in order. With `is_pure` the compiler may
/// merge identical calls and drop unused ones; otherwise every call is kept, in order. PTX only
/// (CUDA devices): every other device refuses the kernel when it compiles (Unsupported, naming
/// the op, the target and this call's file:line). Pointers and i1 are not accepted; with
/// pack > 1 the args must be tiles whose last dimension holds at least `pack` elements.
//@{
/// One result of dtype `dtype`.
tensor inline_asm_elementwise(const std::string& asm_text, const std::string& constraints,
                              const std::vector<Operand>& args, DType dtype, bool is_pure = true,
                              int pack = 1, Here loc = Here::current());
/// One result per dtype of `dtypes` (Triton's tuple of dtypes).
std::vector<tensor> inline_asm_elementwise(const std::string& asm_text,
                                           const std::string& constraints,
                                           const std::vector<Operand>& args,
                                           const std::vector<DType>& dtypes, bool is_pure = true,
                                           int pack = 1, Here loc = Here::current());
//@}

// --- memory ---------------------------------------------------------------------------------
/// Hints for tl::load (Triton's cache_modifier, eviction_policy and volatile). The cache and
/// eviction hints are carried to the targets: PTX qualifiers on CUDA; on SPIR-V, whose one cache
/// hint is the Nontemporal memory operand, the streaming ones ("cs", "evict_first", a load's "cg")
/// become it and the rest are dropped. A kernel that passes them gets the same results either way.
/// A spelling not listed is a user error; Triton's leading '.' (".cg") is accepted.
struct LoadOptions {
  std::string cache;         ///< "", "ca", "cg", "cs", "cv" (hints; a target may ignore them)
  bool is_volatile = false;  ///< read memory every time (no caching, no reordering of the read)
  std::string eviction;      ///< "", "evict_normal", "evict_first", "evict_last" (a hint)
};
/// Hints for tl::store (Triton's cache_modifier and eviction_policy), as LoadOptions's.
struct StoreOptions {
  std::string cache;     ///< "", "wb", "cg", "cs", "wt" (a hint)
  std::string eviction;  ///< "", "evict_normal", "evict_first", "evict_last" (a hint)
};
/// Reads one element per pointer of the pointer tile (or scalar) `ptr`.
tensor load(const tensor& ptr, Here loc = Here::current());
/// Reads one element per pointer where `mask` is true; masked-off lanes read nothing and yield
/// an unspecified value (pass `other` to choose it).
tensor load(const tensor& ptr, const Operand& mask, Here loc = Here::current());
/// Reads one element per pointer. Lanes where `mask` is false read nothing and yield `other`.
tensor load(const tensor& ptr, const Operand& mask, const Operand& other,
            const LoadOptions& options = {}, Here loc = Here::current());
/// Writes one element per pointer (converting `value` to the pointee dtype, as Triton does).
void store(const tensor& ptr, const Operand& value, Here loc = Here::current());
/// Writes one element per pointer where `mask` is true; masked-off lanes write nothing.
void store(const tensor& ptr, const Operand& value, const Operand& mask,
           Here loc = Here::current());
/// A masked store with cache and eviction hints (`tl::store(p, v, m, {.cache = "cs"})`).
void store(const tensor& ptr, const Operand& value, const Operand& mask,
           const StoreOptions& options, Here loc = Here::current());

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
  /// The shape of the blocks read and written, as given to tl::make_tensor_descriptor.
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
/// A tl::tensor_descriptor over the tensor at `base` (a scalar pointer) with the given `shape`,
/// `strides` (in elements) and `block_shape`; see tl::tensor_descriptor.
tensor_descriptor make_tensor_descriptor(const tensor& base, std::initializer_list<Operand> shape,
                                         std::initializer_list<Operand> strides,
                                         const Shape& block_shape, Here loc = Here::current());

// --- block pointers ---------------------------------------------------------------------------
/// How tl::load of a block pointer fills the elements that a boundary check leaves out
/// (Triton's padding_option).
enum class PaddingOption {
  Zero,  ///< 0 of the pointee dtype ("zero", and Triton's unspecified default here)
  Nan,   ///< NaN ("nan"; floating-point pointees only)
};
/// A block of a 2-D (or N-D) tensor in global memory, addressed by offsets that move (Triton's
/// tl.make_block_ptr and tl.advance). Made by tl::make_block_ptr, moved by tl::advance, read by
/// tl::load and written by tl::store; lowered as a tile of pointers base + sum of
/// (offset_d + i_d) * stride_d with a mask for the dimensions the access checks (Triton's
/// lowering before tensor descriptors). A variable assigned inside tl::range or tl::if_
/// (`a = tl::advance(a, {0, BK})`) carries its offsets as any tensor variable does.
///
///   auto a = tl::make_block_ptr(a_ptr, {M, K}, {stride_am, 1}, {pid_m * BM, 0}, {BM, BK},
///                               {1, 0});
///   for (auto k : tl::range(0, K, BK)) {
///     acc = tl::dot(tl::load(a, {0, 1}), tl::load(b, {0, 1}), acc);
///     a = tl::advance(a, {0, BK});
///   }
class block_ptr {
 public:
  /// Another variable addressing the same block.
  block_ptr(const block_ptr& o) = default;
  /// Gives this variable `o`'s offsets (and the rest, which must describe the same tensor
  /// and block shape: a user error otherwise).
  block_ptr& operator=(const block_ptr& o);
  /// The shape of the blocks read and written (Triton's block_shape).
  const Shape& block_shape() const { return block_; }
  /// The dimension order given to tl::make_block_ptr (a layout hint, as in Triton).
  const std::vector<int64_t>& order() const { return order_; }

 private:
  block_ptr() = default;
  friend block_ptr make_block_ptr(const tensor&, std::initializer_list<Operand>,
                                  std::initializer_list<Operand>, std::initializer_list<Operand>,
                                  const Shape&, const std::vector<int64_t>&, Here);
  friend block_ptr advance(const block_ptr&, std::initializer_list<Operand>, Here);
  friend tensor load(const block_ptr&, const std::vector<int>&, PaddingOption, Here);
  friend void store(const block_ptr&, const Operand&, const std::vector<int>&, Here);
  /// The tile of pointers of the block, and in `mask` (when asked) the elements inside the
  /// tensor along the `checked` dimensions.
  tensor pointers(const std::vector<int>& checked, tensor* mask, std::string_view op,
                  const Here& loc) const;
  tensor base_;
  std::vector<tensor> dims_, strides_, offsets_;  // in one index dtype (i32 or i64)
  Shape block_;
  std::vector<int64_t> order_;
};
/// A block pointer (Triton's tl.make_block_ptr) into the tensor at `base` (a scalar pointer)
/// with the given `shape` and `strides` (in elements, one integer scalar or number per
/// dimension), whose block starts at `offsets` and has the power-of-two `block_shape`; `order`
/// (a permutation of the dimensions, minor first as in Triton) is checked and kept as a hint.
/// Addresses are i32 unless a shape, stride or offset is a 64-bit (or u32) value, then i64.
block_ptr make_block_ptr(const tensor& base, std::initializer_list<Operand> shape,
                         std::initializer_list<Operand> strides,
                         std::initializer_list<Operand> offsets, const Shape& block_shape,
                         const std::vector<int64_t>& order, Here loc = Here::current());
/// `p` moved by `offsets` (one integer per dimension, added to its offsets; Triton's
/// tl.advance).
block_ptr advance(const block_ptr& p, std::initializer_list<Operand> offsets,
                  Here loc = Here::current());
/// The block at `p`, a tile of the block shape in the pointee dtype (Triton's tl.load of a
/// block pointer). Along the dimensions listed in `boundary_check` the elements outside
/// [0, shape) are not read and hold `padding`; along the others every element is read (an
/// access outside the tensor is the caller's error, as in Triton).
tensor load(const block_ptr& p, const std::vector<int>& boundary_check = {},
            PaddingOption padding = PaddingOption::Zero, Here loc = Here::current());
/// Writes `value` (converted to the pointee dtype, broadcast to the block shape) at `p`;
/// along the dimensions listed in `boundary_check` the elements outside the tensor are not
/// written (Triton's tl.store of a block pointer).
void store(const block_ptr& p, const Operand& value, const std::vector<int>& boundary_check = {},
           Here loc = Here::current());

// --- atomics (yield the old values) -------------------------------------------------------------
/// The memory order and scope of an atomic operation (Triton's sem and scope).
struct AtomicOptions {
  std::string sem = "acq_rel";  ///< relaxed, acquire, release, acq_rel
  std::string scope = "gpu";    ///< cta, gpu, sys
};
/// \name Atomics
/// Read-modify-write of one element per pointer, as in Triton; each returns the old values.
//@{
/// Atomically combines `val` into `*ptr` where `mask` is true (add, max, min, and, or, xor;
/// xchg stores `val`) and returns the values before; masked-off lanes touch nothing.
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
//@}
/// Compare and swap: where `*ptr == cmp`, stores `val`; returns the values before.
tensor atomic_cas(const tensor& ptr, const Operand& cmp, const Operand& val,
                  const AtomicOptions& o = {}, Here loc = Here::current());

// --- reductions and scans ---------------------------------------------------------------------
/// \name Reductions
/// Reduce `x` along `axis` (-1 counts from the end); `keep_dims` keeps the reduced axis as size 1.
//@{
/// Reduces `x` along `axis` by the function of its name: sum, prod, max and min, argmax and
/// argmin (the index of the extreme, ties to the lower index; a NaN is the extreme), xor_sum
/// (bitwise xor). The dtypes are Triton's where a port could tell: max and min of f16/bf16
/// return f32 and of 8/16-bit integers i32 (the same values); sums of 8/16-bit integers
/// accumulate in i32 (u32 for unsigned). Sums of f16/bf16 accumulate in f32 and return f32,
/// where Triton 3.6 adds in the input dtype: the sum here is the more accurate one (cast it,
/// `tl::sum(x).to(tl::float16)`, for Triton's dtype). max and min ignore NaN elements as Triton's
/// do (NaN only when every element is NaN) unless PropagateNan::All is passed.
tensor sum(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor prod(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor max(const tensor& x, int axis = 0, bool keep_dims = false,
           PropagateNan nan = PropagateNan::None, Here loc = Here::current());
tensor min(const tensor& x, int axis = 0, bool keep_dims = false,
           PropagateNan nan = PropagateNan::None, Here loc = Here::current());
tensor argmax(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor argmin(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
tensor xor_sum(const tensor& x, int axis = 0, bool keep_dims = false, Here loc = Here::current());
//@}
/// The sum of `x` converted to `dtype` first, accumulated in `dtype` (Triton's
/// `tl.sum(x, axis, keep_dims, dtype=...)`): `tl::sum(x_i32, 0, false, tl::int64)` cannot
/// overflow 32 bits, `tl::sum(x_f16, 0, false, tl::float16)` adds in f16 and returns f16 as
/// Triton does, and 8/16-bit integer dtypes wrap in their width. i1 is a user error.
tensor sum(const tensor& x, int axis, bool keep_dims, DType dtype, Here loc = Here::current());
/// Generic reduction: `combine(lhs..., rhs...)` returns the combined values; it must be
/// associative. Reduces several same-shape tiles together (e.g. Welford's mean and M2).
using Combine = std::function<std::vector<tensor>(const std::vector<tensor>& lhs,
                                                  const std::vector<tensor>& rhs)>;
std::vector<tensor> reduce(const std::vector<tensor>& xs, int axis, const Combine& combine,
                           bool keep_dims = false, Here loc = Here::current());
/// Generic reduction of one tile with a two-operand `combine` (Triton's tl.reduce).
tensor reduce(const tensor& x, int axis,
              const std::function<tensor(const tensor&, const tensor&)>& combine,
              bool keep_dims = false, Here loc = Here::current());
/// Inclusive prefix sum along `axis` (from the end when `reverse`); accumulates as tl::sum.
tensor cumsum(const tensor& x, int axis = 0, bool reverse = false, Here loc = Here::current());
/// Inclusive prefix sum of `x` converted to `dtype`, accumulated in `dtype` (Triton's
/// `tl.cumsum(x, axis, reverse, dtype=...)`), with tl::sum's dtype rules.
tensor cumsum(const tensor& x, int axis, bool reverse, DType dtype, Here loc = Here::current());
/// Inclusive prefix product along `axis` (from the end when `reverse`); bf16 in f32, as Triton.
tensor cumprod(const tensor& x, int axis = 0, bool reverse = false, Here loc = Here::current());
/// Inclusive scan of several same-shape tiles together with an associative `combine`.
std::vector<tensor> associative_scan(const std::vector<tensor>& xs, int axis,
                                     const Combine& combine, bool reverse = false,
                                     Here loc = Here::current());
/// Inclusive scan of one tile with an associative two-operand `combine` (Triton's
/// tl.associative_scan).
tensor associative_scan(const tensor& x, int axis,
                        const std::function<tensor(const tensor&, const tensor&)>& combine,
                        bool reverse = false, Here loc = Here::current());

// --- matrix product -----------------------------------------------------------------------------
/// How tl::dot multiplies f32 inputs (Triton's input_precision).
enum class InputPrecision {
  Tf32,  ///< round the inputs to TF32 where the target has TF32 tensor cores (the default)
  Ieee,  ///< full f32 products
};
/// acc + a x b for a:[M,K], b:[K,N]. Without acc the accumulator is zeros of f32 (i32 for int8
/// inputs). f32 inputs use TF32 unless InputPrecision::Ieee is asked, like Triton.
tensor dot(const tensor& a, const tensor& b, Here loc = Here::current());
/// acc + a x b, accumulating into `acc`'s dtype.
tensor dot(const tensor& a, const tensor& b, const tensor& acc,
           InputPrecision precision = InputPrecision::Tf32, Here loc = Here::current());
/// Triton's keyword arguments of tl.dot: `tl::dot(a, b, {.out_dtype = tl::float16})`.
struct DotOptions {
  /// The result's dtype without an accumulator (Triton's out_dtype): as in Triton it decides
  /// only for f16 inputs (f16 accumulates and returns f16, f32 the default); other inputs give
  /// their default accumulator's dtype (f32, i32 for int8, f64). bf16 is a user error, as in
  /// Triton. With an accumulator it must be the accumulator's dtype.
  std::optional<DType> out_dtype;
  InputPrecision input_precision = InputPrecision::Tf32;  ///< how f32 inputs multiply
};
/// a x b with `options` (a zero accumulator of the dtype out_dtype chooses).
tensor dot(const tensor& a, const tensor& b, const DotOptions& options, Here loc = Here::current());
/// acc + a x b with `options`.
tensor dot(const tensor& a, const tensor& b, const tensor& acc, const DotOptions& options,
           Here loc = Here::current());

// --- debugging and hints ------------------------------------------------------------------------
/// Prints `pid (x, y, z) idx (i) <prefix><value>` lines for every element of `values` (in hex
/// when `hex`), in the host interpreter's order on every device (Triton's tl.device_print).
void device_print(const std::string& prefix, const std::vector<tensor>& values, bool hex = false,
                  Here loc = Here::current());
/// Where `cond` is false, the launch fails with ErrorKind::DeviceFault naming the kernel, this
/// line and `message` (Triton's tl.device_assert).
void device_assert(const Operand& cond, const std::string& message, Here loc = Here::current());
/// `x`, with the promise that every element is a multiple of `divisor` (Triton's
/// tl.multiple_of): lets the compiler vectorize; a false promise gives wrong results.
tensor multiple_of(const tensor& x, int64_t divisor, Here loc = Here::current());
/// `x`, with one divisibility promise per dimension.
tensor multiple_of(const tensor& x, const std::vector<int64_t>& divisors,
                   Here loc = Here::current());
/// `x`, with the promise that its values run contiguously in groups of `run` (Triton's
/// tl.max_contiguous).
tensor max_contiguous(const tensor& x, int64_t run, Here loc = Here::current());
/// `x`, with one contiguity promise per dimension.
tensor max_contiguous(const tensor& x, const std::vector<int64_t>& runs,
                      Here loc = Here::current());
/// A promise that the i1 `cond` holds, for the compiler's use (Triton's tl.assume).
void assume(const Operand& cond, Here loc = Here::current());
/// Every thread of the program waits here, and the program's global and shared memory accesses
/// before it are visible to its accesses after it (Triton's tl.debug_barrier: `__syncthreads()`),
/// e.g. between storing to a scratch buffer and loading other threads' elements from it.
void debug_barrier(Here loc = Here::current());
/// A trace-time check (Triton's tl.static_assert; `static_assert` is a C++ keyword): when `cond`
/// is false, tracing stops with a user error at this line saying `message`. `cond` is a C++
/// value known while tracing (shapes, dtypes, constexpr parameters), never a tensor.
void static_assert_(bool cond, const std::string& message = "", Here loc = Here::current());
/// Prints `prefix` and each operand at trace time, once per compilation (Triton's
/// tl.static_print): a tensor as its type (`tile<64xf32>`), a number as its value; to stdout.
void static_print(const std::string& prefix, const std::vector<Operand>& values = {},
                  Here loc = Here::current());

// --- IR control flow: control.h (tl::range, tl::if_, tl::return_if, tl::while_)
}  // namespace tessera::tl

#include "control.h"

namespace tessera::tl {
template <class T>
tensor zeros(const Shape& shape, Here loc) {
  return zeros(shape, dtype_of<T>(), loc);
}
}  // namespace tessera::tl
