/// \file The SIMT IR's warpgroup matrix ops (Hopper's wgmma family): their semantics, shapes and
/// the shared-memory operand layouts they read. core/ir/simt.h describes the other SIMT ops.
///
/// A warpgroup is 4 consecutive subgroups of 32 lanes (threads 128g .. 128g+127); the ops below
/// need 32-lane subgroups, a workgroup of whole warpgroups, and all 128 threads of a warpgroup
/// executing them together (uniform control flow).
///
///   %d0, ... = wgmma %a_index, %b_index, %c0, ... {shape, a, a_smem, b_smem}
///       D = A x B + C for the warpgroup: A is 64 x K, B is K x N, C and D 64 x N, with
///       (shape, a) one of ("m64n<N>k16", "f16" | "bf16"), ("m64n<N>k8", "tf32"),
///       ("m64n<N>k32", "i8" | "e4m3" | "e5m2"); N a multiple of 8 in 8..256 (for i8 also a
///       multiple of 16 above 32). A and B are read from shared memory (below); C and D are N / 2
///       values per thread (f32, or i32 for i8): value i of thread t (w = t / 32 % 4 its warp in
///       the warpgroup, l = t % 32) is element
///           row 16 w + l / 4 + 8 * (i / 2 % 2),   col 8 * (i / 4) + 2 * (l % 4) + i % 2.
///       Products are exact and accumulate as `mma`'s do; tf32 inputs are f32 values of which
///       only the sign, exponent and 10 high mantissa bits count (the low 13 bits are ignored,
///       as the hardware reads them), i8 products accumulate in i32 (wrapping), fp8 (e4m3,
///       e5m2) in f32.
///       The op is asynchronous: it joins the thread's open group (see wgmma_commit), and its
///       results, and the shared memory it reads, are settled only when a wgmma_wait retires
///       that group. Until then its results may only feed another wgmma's C, a wgmma_wait or a
///       yield (the verifier checks the direct uses); the memory it reads must not change (the
///       SIMT interpreter reports a change as a race).
///   %d0, ... = wgmma %a0, ..., %a<k/2 - 1>, %b_index, %c0, ... {shape, a, b_smem}
///       The same with A from registers (no a_smem): k / 2 values per thread, packed p = 4 / E
///       to a 32-bit register (E the element bytes: p = 2 for f16/bf16, 1 for tf32, 4 for i8 and
///       fp8), four registers in all. Value j of thread t is A's element at
///           row 16 w + l / 4 + 8 (j / p % 2),   k 4p (j / 2p) + p (l % 4) + j % p
///       i.e. each warp holds the 16 x k slab of mma.sync's A fragment (for f16 the
///       accumulator's arrangement with k for col). The registers, like C, must be settled
///       before the op (wgmma_fence) and unchanged until its group retires.
///   wgmma_fence                 orders the registers of earlier non-wgmma ops before the
///                               wgmma ops that follow (PTX wgmma.fence).
///   wgmma_commit                closes the thread's open group of wgmma ops.
///   %r0, ... = wgmma_wait %v0, ... {pending}
///                               waits until at most `pending` of the thread's committed groups
///                               are unfinished; its results are its operands (the accumulators
///                               passed through, so that their readers follow the wait).
///   fence_async_shared          makes this thread's earlier shared-memory writes visible to
///                               wgmma's reads (PTX fence.proxy.async.shared::cta); needed
///                               before the barrier that precedes the wgmma reading them.
///
/// The operand attributes `a_smem` and `b_smem` are [buffer, swizzle, lbo, sbo, trans]: the
/// shared buffer, the swizzle width S in bytes (32, 64 or 128), the leading and stride byte
/// offsets, and trans (0: K-major, the operand's K elements contiguous; 1: MN-major, its M (A) or
/// N (B) elements contiguous; 1 only for f16 and bf16). %a_index and %b_index (i32) are the
/// element indices where the operands start. With E the element bytes and T = S / E, element
/// (r, k) of an operand (r < 64 along M for A, r < N along N for B; k < K) lies at byte
///     K-major:  start + (r / 8) sbo + (r % 8) S + k E
///     MN-major: start + (r / T) lbo + (k / 8) sbo + (k % 8) S + (r % T) E
/// of the buffer (start = index x E), after the swizzle x -> x ^ (((x >> 7) & (S / 16 - 1)) << 4)
/// (16-byte chunks exchanged within each S-byte row). A buffer that a wgmma reads starts at a
/// multiple of 1024 bytes (its byte size is a multiple of 1024: core/ir/simt.h's shared layout).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ir.h"
#include "ops.h"

namespace tessera::ir {

/// A wgmma instruction: m64 n<n> k<k> with operand type `a` ("f16", "bf16", "tf32", "i8",
/// "e4m3", "e5m2").
struct WgmmaShape {
  int n = 0, k = 0;
  std::string_view a;
  DType in = DType::f16;                   ///< the A and B elements' dtype (f32 for tf32)
  DType acc = DType::f32;                  ///< the C and D values' dtype
  int acc_count() const { return n / 2; }  ///< C and D values per thread
  bool allows_trans() const { return in == DType::f16 || in == DType::bf16; }
  std::string shape() const;  ///< "m64n128k16"
};
/// The shape of (shape text, a), or nullopt when wgmma has no such instruction.
std::optional<WgmmaShape> find_wgmma_shape(std::string_view shape, std::string_view a);
/// The instruction for A/B dtype `in` (f32 meaning tf32) and width n; nullopt if none.
std::optional<WgmmaShape> wgmma_shape_for(DType in, int n);

/// One operand's shared-memory layout (the `a_smem` / `b_smem` attribute).
struct WgmmaSmem {
  int64_t buffer = 0;
  int64_t swizzle = 128;  ///< S: 32, 64 or 128 bytes
  int64_t lbo = 0;        ///< leading byte offset
  int64_t sbo = 0;        ///< stride byte offset
  bool trans = false;     ///< MN-major
  std::array<int64_t, 5> attr() const { return {buffer, swizzle, lbo, sbo, trans ? 1 : 0}; }
  /// The byte of element (r, k) relative to the operand's start byte `start` (swizzled; the
  /// buffer starting 1024-byte aligned).
  int64_t byte_of(int64_t start, int64_t r, int64_t k, int elem_bytes) const;
};
std::optional<WgmmaSmem> parse_wgmma_smem(const Op& op, std::string_view attr);

/// The (row, col) of accumulator value i of thread t (see `wgmma` above).
struct WgmmaCoord {
  int row, col;
};
WgmmaCoord wgmma_acc_coord(int thread, int i);
/// The (row, k) of A's value j of thread t, A from registers of `elem_bytes`-byte elements.
WgmmaCoord wgmma_a_coord(int thread, int j, int elem_bytes);

struct WgmmaOp : OpView<OpKind::Wgmma> {
  using OpView::OpView;
  /// The shape; internal error for unverified IR.
  WgmmaShape shape() const;
  /// A comes from registers (the op has no a_smem).
  bool a_in_registers() const { return !op->has_attr(attr::kASmem); }
  /// A's registers per thread (k / 2), or 0 when A is in shared memory.
  size_t a_count() const;
  WgmmaSmem a_smem() const;
  WgmmaSmem b_smem() const;
  Value* a_index() const { return op->operand(0); }
  /// A's values, in the order core/ir/wgmma.h gives (A from registers).
  std::span<Value* const> a_regs() const { return {op->operands.data(), a_count()}; }
  Value* b_index() const { return op->operand(b_slot()); }
  std::span<Value* const> c() const {
    return {op->operands.data() + b_slot() + 1, op->operands.size() - b_slot() - 1};
  }
  /// The operand index of B's start: 1, or a_count() with A from registers.
  size_t b_slot() const { return a_in_registers() ? a_count() : 1; }
};

}  // namespace tessera::ir
