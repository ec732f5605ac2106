/// \file Internal to the tensor-core lowering (lower_mma.cpp, lower_pipeline.cpp): a dot operand's
/// tile in XOR-swizzled shared memory, how it is written there (vector stores from registers or
/// cp.async from global memory) and read back as mma fragments (ldmatrix, ldmatrix.trans or
/// scalar loads).
#pragma once

#include <string>
#include <vector>

#include "core/lower/lowerer.h"

namespace tessera::lower::detail {

/// An operand tile in shared memory: `rows` x `cols` elements, row-major from element `base` of
/// `buffer` (plus a per-stage offset for pipelined loops), each row's 16-byte chunks XOR-swizzled
/// so that the reads of one fragment load hit distinct banks: the 8 rows of one ldmatrix matrix
/// at one chunk (xor by row phase), or for scalar fragment reads 4 rows x 2 adjacent chunks (xor
/// by twice the phase). The swizzle is linear over GF(2) in the bits of (row, col), so an index is
/// a thread part XOR a constant part.
struct SmemTile {
  int buffer = 0;
  int64_t base = 0;  ///< a multiple of a power of two >= rows * cols, so base + x == base ^ x
  int64_t rows = 0, cols = 0;
  int64_t vec = 0;        ///< elements per 16-byte chunk
  int64_t per_phase = 1;  ///< consecutive rows sharing one phase
  int64_t max_phase = 1;  ///< phases
  int64_t stride = 1;     ///< chunks the xor moves per phase step (1 or 2)
  /// Columns per block: a tile wider than that is stored as blocks of `rows` x `block` side by
  /// side (wgmma's layout: rows of at most 128 bytes); cols for one block.
  int64_t block = 0;

  SmemTile() = default;
  SmemTile(int buffer, int64_t base, int64_t rows, int64_t cols, int elem_bytes, int64_t stride);
  /// wgmma's layout (core/ir/wgmma.h): blocks of `swizzle` bytes per row, 16-byte chunks XOR-ed
  /// by row (128 / swizzle rows per phase, swizzle / 16 phases).
  static SmemTile wgmma(int buffer, int64_t base, int64_t rows, int64_t cols, int elem_bytes,
                        int64_t swizzle);
  int64_t size() const { return rows * cols; }
  /// offset(row, col) relative to base.
  int64_t offset(int64_t row, int64_t col) const;
  /// base + offset(row, col) for i32 values.
  ir::Value* index(Lowerer& lw, ir::Value* row, ir::Value* col) const;
  std::string key() const;
};

/// How an operand's fragments come out of shared memory.
enum class ReadMode {
  Ldmatrix,       ///< stored along k: ldmatrix
  LdmatrixTrans,  ///< stored along M (A) or N (B), 16-bit elements: ldmatrix .trans
  Scalar,         ///< stored along M or N, 8- or 32-bit elements: one shared_load per value
};

/// One dot operand on its way to fragments. Coordinates are the operand's own ([M, K] for A,
/// [K, N] for B); `outer` is M or N.
struct Operand {
  bool is_a = true;
  ir::DType dtype = ir::DType::f16;
  int k_dim = 1, outer_dim = 0;
  int row_dim = 0;  ///< the coordinate along the shared tile's rows (the other is contiguous)
  ReadMode mode = ReadMode::Ldmatrix;
  int count = 4;  ///< matrices per ldmatrix
  SmemTile tile;
  Layout frag;  ///< the fragment layout (DotPlan::a or ::b)
  Layout addr;  ///< ldmatrix: thread bits naming the coordinates each lane addresses
  int64_t reps = 1, kinst = 16, values = 8;  ///< instruction tiles per warp, k per step, values
  ir::Value* read_base = nullptr;            ///< set by prepare_reads
};

/// The tile of a wgmma dot's operand (`is_a`: A, else B; `shape` the operand's) in `buffer` from
/// element `base`, in the layout the plan chose; *row_dim is the coordinate its rows run along.
SmemTile wgmma_tile(const DotPlan& plan, bool is_a, const ir::Shape& shape, int buffer,
                    int64_t base, int* row_dim);
/// The elements one stage of tile `t` occupies: a multiple of 1024 bytes (stages start aligned).
int64_t wgmma_stage_elements(const SmemTile& t, int elem_bytes);

/// A cooperative-matrix operand staged in shared memory: `tile` from element `base` (an i32;
/// null: 0) of `buffer`.
struct CoopStage {
  int buffer = 0;
  PaddedTile tile;
  ir::Value* base = nullptr;
};

/// The operands of a dot that a pipelined loop has staged (read_base prepared for the stage
/// the current iteration reads; cooperative-matrix dots: ca and cb). A wgmma dot in a ring of
/// several may have only one operand there, or none (fed_a, fed_b); it stores the others.
struct StagedDot {
  Operand a, b;
  CoopStage ca, cb;
  bool fed_a = false, fed_b = false;  ///< a, b are set (fed or held by the ring)
};

/// Stores `v`, operand A (`is_a`) or B of the wgmma dot planned `plan`, from registers (its
/// home) into a fresh swizzled tile in wgmma's layout: the tile and row_dim of the result are
/// set. The stores are the generic proxy's: a fence_async_shared and a barrier must follow before
/// a wgmma reads them.
Operand store_wgmma_operand(Lowerer& lw, const DotPlan& plan, bool is_a, const ir::Value* v);

/// The operand `is_a ? A : B` of `plan`'s dot, `shape` its shape and `dtype` its element type,
/// stored contiguously along `fast_dim` (its source's contiguous dimension) in `buffer` from
/// element `base`.
Operand make_operand(bool is_a, ir::DType dtype, const ir::Shape& shape, int fast_dim,
                     const DotPlan& plan, int buffer, int64_t base, int64_t threads);

/// Each owner thread writes its registers of the operand (in layout `l`) into the tile, as vectors
/// of the registers that run along the tile's rows (at most 16 bytes, 8 elements).
void store_operand(Lowerer& lw, const Operand& o, const Regs& r, const Layout& l);
/// The same for any tile whose rows run along coordinate `row_dim` of the value; `stage` (an i32
/// element offset, or null) moves the tile.
void store_tile(Lowerer& lw, const SmemTile& tile, int row_dim, const Regs& r, const Layout& l,
                ir::Value* stage = nullptr);
/// Emits the thread part of the fragment reads' indices, plus `stage_offset` (an i32 element
/// offset, or null), into o.read_base. Call before fragments().
void prepare_reads(Lowerer& lw, Operand& o, ir::Value* stage_offset);
/// The fragments of the k step at `k0` for each of the warp's instruction tiles along M (A) or N
/// (B): values in PTX's fragment order.
std::vector<Regs> fragments(Lowerer& lw, const Operand& o, const DotPlan& plan, int64_t k0);

}  // namespace tessera::lower::detail
