/// \file The semantics of Hopper's TMA copies and mbarriers, written once for the SIMT
/// interpreter and for the tests of the lowering that plans them (core/lower/tma.h):
///
///   * a tensor copy (PTX cp.async.bulk.tensor ... .mbarrier::complete_tx::bytes) reads a box of
///     a tensor in global memory, elements outside the tensor read as zero, and writes it to
///     shared memory densely, innermost dimension fastest, with the 16-byte chunks of each row
///     swizzled (tma_swizzle); it then completes the box's bytes on an mbarrier;
///   * a tensor store (cp.async.bulk.tensor, shared to global) reads a box so laid out and writes
///     the elements that lie inside the tensor, in whole 16-byte chunks (so also those past the
///     innermost extent up to the next 16-byte boundary);
///   * an mbarrier counts the arrivals its current phase still expects and the bytes of
///     transactions (copies) it still expects; when both reach zero the phase completes and the
///     next begins with the initial arrival count. A wait names the parity of the phase it waits
///     for: it is satisfied once that phase has completed (the current phase's parity differs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera::ir {

/// The shared-memory byte offset where TMA puts byte `offset` of a densely laid out box with
/// `swizzle` (0, 32, 64 or 128 bytes): bits 4.. of the offset (the 16-byte chunk within a
/// swizzle span) XOR-ed with bits 7.. (the 128-byte row group), log2(swizzle / 16) bits of each.
/// The pattern repeats every 8 x swizzle bytes, so a box must start at a multiple of that (1024
/// bytes for 128). It is the layout wgmma's descriptors read with the same swizzle.
int64_t tma_swizzle(int64_t offset, int swizzle);

/// One TMA tensor copy: a box at `coords` (signed, may lie partly or wholly outside) of the
/// tensor of `dims` at `base` with byte `strides`; all outermost first, the innermost stride
/// one element of `elem_bytes`.
struct TmaCopy {
  uint64_t base = 0;
  std::vector<int64_t> dims, strides, box, coords;
  int elem_bytes = 2;
  int swizzle = 0;
  /// Bytes the copy writes (and completes on its mbarrier), zero-filled elements included.
  int64_t bytes() const;
};

/// Reads `n` bytes of global memory at `address` into `out`.
using ReadGlobal = std::function<void(uint64_t address, std::byte* out, size_t n)>;

/// Performs `c` into `smem` (at least c.bytes() bytes, at a multiple of 8 x swizzle bytes):
/// elements inside the tensor read through `read`, the others zero.
void tma_copy(const TmaCopy& c, const ReadGlobal& read, std::byte* smem);

/// Writes `n` bytes from `in` to global memory at `address`.
using WriteGlobal = std::function<void(uint64_t address, const std::byte* in, size_t n)>;

/// Performs the tensor store of `c` (PTX cp.async.bulk.tensor, shared to global): the box, laid
/// out in `smem` as tma_copy writes it, goes to the tensor through `write`; elements outside
/// the tensor are not written, but for those in the 16-byte chunk where the innermost extent
/// ends: the hardware writes whole chunks (an extent of 45 i8, f16 or f32 elements is written
/// up to 48, measured on the H200), so a lowering stores by TMA only extents known to be
/// multiples of 16 bytes (lower::plan_tma_store).
void tma_store_copy(const TmaCopy& c, const std::byte* smem, const WriteGlobal& write);

/// One mbarrier's state (PTX mbarrier: arrival count, pending arrivals, tx-count, phase).
class MBarrier {
 public:
  /// mbarrier.init: `arrivals` (at least 1) arrivals complete each phase; phase 0 begins.
  void init(int64_t arrivals);
  bool initialized() const { return expected_ > 0; }
  /// mbarrier.expect_tx: the current phase also waits for `bytes` more of transactions.
  void expect_tx(int64_t bytes);
  /// A copy completed `bytes` of the phase's transactions (complete_tx). The count may go
  /// below zero for a while, as PTX allows (a copy completing before its expect_tx).
  void complete_tx(int64_t bytes);
  /// mbarrier.arrive: one arrival; false if the phase expected none (misuse).
  bool arrive();
  /// mbarrier.try_wait.parity: has the phase of parity `parity` (0 or 1) completed?
  bool test_wait(int parity) const { return (phase_ & 1) != parity; }
  int64_t phase() const { return phase_; }
  /// "2 arrivals and 16384 bytes outstanding in phase 3", for the report of a wait that cannot
  /// complete.
  std::string pending() const;

 private:
  void maybe_complete();

  int64_t expected_ = 0;  ///< arrivals per phase
  int64_t arrivals_ = 0;  ///< arrivals the current phase still expects
  int64_t tx_ = 0;        ///< bytes the current phase still expects
  int64_t phase_ = 0;
};

}  // namespace tessera::ir
