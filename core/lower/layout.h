/// \file Distributed layouts: which thread of a workgroup holds which element of a tile, in which
/// register.
///
/// A layout is a linear map over GF(2) from (register index, thread id) to the element's
/// row-major coordinates whose bases are unit vectors: each bit of the register index and each
/// bit of the thread id names one bit of one coordinate, or nothing (the position holds a
/// broadcast copy). Every bit of every coordinate is named exactly once, so each element has one
/// register slot in each thread group that owns it. Triton's blocked, slice and MMA layouts are all
/// of this form; reshapes, permutes and expand_dims only relabel the named bits, so they are free.
///
/// Thread ids count lanes first: thread t is lane t % S of subgroup t / S, so the low log2(S)
/// thread bits are lanes (reachable by shuffles) and the high bits are subgroups (reachable
/// through shared memory). The same layout serves every subgroup size.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/types.h"

namespace tessera::lower {

/// Bit `bit` of coordinate `dim`, or none (dim < 0).
struct DimBit {
  int dim = -1;
  int bit = 0;
  bool none() const { return dim < 0; }
  bool operator==(const DimBit&) const = default;
};

/// How the subgroups of a workgroup tile a 2-D accumulator held as cooperative matrices (whose
/// element-to-lane mapping the target keeps to itself): matrices of m x n elements; wm x wn
/// subgroups of `lanes` lanes, subgroup s taking the block (s % wm, s / wm) of the wm x wn grid of
/// blocks; each block reps_m x reps_n matrices (its registers, row-major over the matrices).
struct MatTiling {
  int64_t m = 16, n = 16;
  int wm = 1, wn = 1;
  int lanes = 32;
  bool workgroup = false;  ///< one workgroup-scope matrix (lanes = the workgroup's threads)
  bool operator==(const MatTiling&) const = default;
};

class Layout {
 public:
  ir::Shape shape;
  std::vector<DimBit> regs;     ///< register-index bit i
  std::vector<DimBit> threads;  ///< thread-id bit i (log2 of the workgroup size entries)
  /// Set for an *opaque* layout: the tile lives in cooperative matrices, one register per matrix
  /// (regs and threads are empty; mat_twin() gives a linear layout with the same owners).
  std::optional<MatTiling> mats;

  int num_regs() const { return mats ? mat_count() : 1 << regs.size(); }
  /// Matrices per subgroup of an opaque layout: reps_m x reps_n.
  int64_t reps_m() const { return shape[0] / (mats->m * mats->wm); }
  int64_t reps_n() const { return shape[1] / (mats->n * mats->wn); }
  int mat_count() const { return static_cast<int>(reps_m() * reps_n()); }
  int64_t num_threads() const { return int64_t{1} << threads.size(); }
  int rank() const { return static_cast<int>(shape.size()); }

  /// The part of element coordinates contributed by register index r / thread id t; an
  /// element's coordinates are the sum of both.
  std::vector<int64_t> reg_coords(int r) const;
  std::vector<int64_t> thread_coords(int64_t t) const;
  std::vector<int64_t> coords(int r, int64_t t) const;
  /// Does thread t hold a copy that another thread with lower id also holds (a broadcast
  /// duplicate)? Exactly one thread of each group of copies has `is_owner` true.
  bool is_owner(int64_t t) const;
  /// The register holding coordinates `c` in a thread that holds them (regs and the thread's
  /// share must add up to c); -1 if the layout has no register whose bits give `c`'s reg part.
  int reg_of(const std::vector<int64_t>& reg_part) const;

  bool operator==(const Layout&) const = default;
  /// "[64x32] regs=(1.0,1.1,0.4) threads=(1.2,1.3,1.4,0.0,0.1,0.2,0.3)" (dim.bit, '-' = none).
  std::string str() const;
  /// Internal check of the invariant (every coordinate bit named exactly once).
  void check() const;
};

/// Row-major element index of coordinates `c` in `shape`.
int64_t linear_index(const ir::Shape& shape, const std::vector<int64_t>& c);

/// The element strides of a tile of `shape` staged row-major in shared memory (a layout
/// conversion): rows of a whole number of 128-byte bank periods are padded by 16 bytes, so that
/// the rows one warp writes at one column (an MMA accumulator's) start in different banks and
/// 16-byte accesses along a row stay aligned. The tile takes strides[0] * shape[0] elements.
std::vector<int64_t> staging_strides(const ir::Shape& shape, int elem_bytes);
int64_t staging_elements(const ir::Shape& shape, int elem_bytes);

/// Triton's blocked layout: `vec` consecutive elements of dimension order[0] per thread, then
/// consecutive threads along order[0], order[1], ..., then the remaining bits in registers.
/// `order` lists dimensions fastest first; thread bits beyond the tile are broadcast.
Layout blocked(const ir::Shape& shape, const std::vector<int>& order, int vec, int64_t threads);
/// A 2-D tile's layout for loading it from global memory `vec` elements at a time along `fast`
/// and storing it into shared memory at byte offsets `byte_offset(coords)` (XOR-linear in the
/// coordinates' bits, as swizzled tiles are), in vectors of up to `store_vec` elements along
/// `store_dim` (the shared tile's contiguous dimension): the registers start with the load vector,
/// then (when store_dim is not fast) the store vector, as far as the tile has elements per thread
/// (a thread then holds a vec x store_vec block and transposes it for free); the lanes of one
/// store phase (128 bytes of the 32 banks) take coordinate bits that move the stores to distinct
/// banks, fast's first, so that the stores are conflict-free; the other lanes, warps and
/// registers take the rest, fast's first (coalesced loads).
Layout staging_layout(const ir::Shape& shape, int fast, int vec, int store_dim, int store_vec,
                      int elem_bytes, int64_t threads, int lanes,
                      const std::function<int64_t(const std::vector<int64_t>&)>& byte_offset);
/// The opaque layout of a [m, n] accumulator tiled by `t` (m and n multiples of t.m * t.wm and
/// t.n * t.wn).
Layout mat_layout(int64_t m, int64_t n, const MatTiling& t);
/// The linear layout whose threads own the elements the subgroups of opaque layout `l` own:
/// within a matrix, registers take the low column bits (up to 4 elements), lanes the next column
/// bits and then the rows, registers the remaining rows; registers then repeat over the
/// subgroup's matrices (columns, then rows) and subgroups over the blocks (wm along rows first).
/// Converting between the two moves one matrix per subgroup at a time through shared memory.
Layout mat_twin(const Layout& l, int64_t threads);

/// The default layout of a tile: blocked, row-major order, vec 1 (or a scalar layout).
Layout default_layout(const ir::Shape& shape, int64_t threads);

/// The layout of a tile reduced along `axis`: the axis' bits become none, the axis disappears.
Layout slice(const Layout& l, int axis);
/// Inserts a size-1 dimension at `axis` (no bits move).
Layout expand_dims(const Layout& l, int axis);
/// The layout a tile of shape `to` must have so that reshaping it gives `l` (and conversely):
/// row-major reshapes relabel bits.
Layout reshape(const Layout& l, const ir::Shape& to);
/// result.shape[i] = l.shape[order[i]].
Layout permute(const Layout& l, const std::vector<int64_t>& order);
/// For broadcast: a layout of `shape` (same rank as l, each dim equal or l's dim 1) that keeps
/// every bit of `l` where it is and puts the new bits on l's free thread slots, then registers.
Layout broadcast(const Layout& l, const ir::Shape& shape);
/// The layout an operand of shape `from` (l's rank, dims equal or 1) has when broadcast to `l`:
/// `l` with the bits of the size-1 dims made none (inverse of broadcast()).
Layout unbroadcast(const Layout& l, const ir::Shape& from);
/// cat along `axis` of two tiles in layout `l`: the new top bit of the axis goes to a new
/// (most significant) register bit.
Layout cat(const Layout& l, int axis);

/// The accumulator layout of a dot in FMA form: each thread owns an rm x rn block of C made of
/// vm x vn blocks of consecutive elements (vm, vn up to 4) repeated at strides over the tile,
/// so that it reads A's transpose and B from shared memory in vectors; threads take the bits
/// above the vectors, n's first (a subgroup's reads of one k are broadcasts or contiguous).
Layout dot_layout(int64_t m, int64_t n, int64_t threads);

/// How the warps of a workgroup tile a tensor-core accumulator: m x n warps (m * n = warps).
struct MmaWarps {
  int m = 1, n = 1;
  bool operator==(const MmaWarps&) const = default;
};
/// Triton's choice (warpsPerTileV2) for an [m, n] accumulator of 16x8 instruction tiles: double
/// the warps along M while M has at least as many tiles per warp as N has pairs of tiles, else
/// along N. Tiles may run out (then m > M / 16 or n > N / 8: too little work for the warps).
MmaWarps mma_warps(int64_t m, int64_t n, int warps);

// Tensor-core (mma.sync) layouts. One instruction multiplies a 16 x k tile of A by a k x 8 tile of
// B into a 16 x 8 tile of C, with k = 8 * per (per = operand elements in a 32-bit register: 2 for
// f16/bf16, 1 for tf32, 4 for i8). Lanes hold PTX's fragments (lane = 4 * groupID +
// threadID_in_group); warp w (thread bits above the 5 lane bits) takes instruction tiles
// (w % warps.m, w / warps.m) of every warps.m x warps.n block of tiles; the registers repeat the
// fragment over the blocks. Register order: the fragment's values in PTX order first, then the
// repetitions along M (or N for B), then along K. Require 32-lane subgroups (threads counts
// lanes first) and m % 16 == 0, n % 8 == 0, k % (8 * per) == 0 with enough tiles for the warps.

/// C and D [m, n]: value i (bit 0: column + 1, bit 1: row + 8) of lane l at row l / 4, column
/// 2 * (l % 4); repetitions along N, then M.
Layout mma_acc_layout(int64_t m, int64_t n, MmaWarps warps, int64_t threads);
/// A [m, k]: the warps along N hold copies (their thread bits name nothing).
Layout mma_a_layout(int64_t m, int64_t k, int per, MmaWarps warps, int64_t threads);
/// B [k, n]: the warps along M hold copies.
Layout mma_b_layout(int64_t k, int64_t n, int per, MmaWarps warps, int64_t threads);

/// How the warpgroups of a workgroup tile a wgmma accumulator [m, n] (m = 64 * wg_m * reps_m,
/// n = instr_n * reps_n * wg_n): wg_m x wg_n warpgroups, each issuing reps_m x reps_n
/// instructions of 64 x instr_n.
struct WgmmaTiling {
  int wg_m = 1, wg_n = 1;
  int instr_n = 8;
  int reps_m = 1, reps_n = 1;
  bool operator==(const WgmmaTiling&) const = default;
};
/// The wgmma accumulator (core/ir/wgmma.h's fragment): value i of thread t of a warpgroup at
/// row 16 (t / 32 % 4) + t % 32 / 4 + 8 (i / 2 % 2), column 8 (i / 4) + 2 (t % 4) + i % 2 of its
/// instruction tile; warpgroup g takes row slab g % wg_m and column slab g / wg_m; the
/// registers run: the instruction's values, then its repetitions along N, then along M.
Layout wgmma_acc_layout(int64_t m, int64_t n, const WgmmaTiling& t, int64_t threads);
/// The accumulator of a swapped wgmma dot (DotPlan::swapped): the instructions compute C^T
/// [n, m] tiled by `t` (its M is C's N), so C [m, n] lies as wgmma_acc_layout(n, m, t) with the
/// coordinates exchanged.
Layout wgmma_acc_t_layout(int64_t m, int64_t n, const WgmmaTiling& t, int64_t threads);
/// wgmma's A [m, k] read into registers (core/ir/wgmma.h's arrangement for `elem_bytes`-byte
/// elements) for tiling `t`: the registers run over one instruction's k / 2 values, then its
/// repetitions along M, then the k steps; the warpgroups along N hold copies.
Layout wgmma_a_regs_layout(int64_t m, int64_t k, const WgmmaTiling& t, int elem_bytes,
                           int64_t threads);
/// wgmma's A [m, k] from registers, for warpgroups tiling M only (t.wg_n == 1): the
/// accumulator's arrangement with k for the column (core/ir/wgmma.h), the registers running along
/// k, then along M. A dot's accumulator [m, k] tiled the same way along M lies exactly so.
Layout wgmma_a_layout(int64_t m, int64_t k, const WgmmaTiling& t, int64_t threads);

/// The dimension a layout holds contiguously: its first register bit's, else its first lane's
/// (-1 when it has neither).
int fast_dim(const Layout& l);
/// How many register bits from bit 0 name bits 0, 1, ... of `dim` in order: 2^that consecutive
/// elements along dim lie in consecutive registers.
int reg_run(const Layout& l, int dim);
/// The widest vector of such a run: at most 16 bytes of `elem_bytes` elements, and 8 elements.
int64_t vector_width(const Layout& l, int dim, int elem_bytes);

/// Number of bits of a power-of-two dimension.
int log2_exact(int64_t v);

}  // namespace tessera::lower
