/// \file The lowering's decisions, made before any SIMT IR is emitted and kept as data that can be
/// printed (TESSERA_DUMP=layouts) and tested: the layout every tile value lives in (its home),
/// how each `dot` runs, how each loop is pipelined and the tensor map of each TMA store.
///
/// A new hardware feature is a new plan kind (a DotKind or a LoopKind) with its own emission, never
/// a hook in the shared walk: the walk asks the plan what to do.
///
///   LoweringPlan plan(kernel, target, options);   // axis info, dot plans, homes, loop plans
///   std::cout << plan.str();                      // one line per tile value, dot and loop
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/abi.h"
#include "core/ir/ir.h"
#include "core/ir/simt.h"
#include "core/ir/wgmma.h"
#include "core/lower/axis_info.h"
#include "core/lower/homes.h"
#include "core/lower/layout.h"
#include "core/target/options.h"
#include "core/target/target.h"

namespace tessera::lower {

/// How a dot's multiply-adds are issued.
enum class DotKind {
  Fma,       ///< operands staged in shared memory, one fma per product (every target, every dtype)
  MmaSync,   ///< warp-level tensor-core instructions (PTX mma.sync) on fragments from shared memory
  Wgmma,     ///< warpgroup-level asynchronous tensor-core instructions (Hopper's wgmma) reading
             ///< both operands from swizzled shared memory
  CoopMat,   ///< subgroup-scope cooperative matrices (SPIR-V's KHR extension): operands staged in
             ///< padded shared memory, the accumulator kept as matrices (an opaque layout)
  CoopMat2,  ///< one workgroup-scope cooperative matrix per program (VK_NV_cooperative_matrix2):
             ///< A and B (desc_loads) read straight from global memory through tensor layouts
};

/// How one wgmma operand lies in shared memory: a tile of `rows` x `cols` elements (cols the
/// contiguous dimension) stored as column blocks of `block` = swizzle / element bytes columns,
/// each block `rows` rows of `swizzle` bytes whose 16-byte chunks are XOR-swizzled by row.
struct WgmmaOperand {
  bool mn_major = false;  ///< the contiguous dimension is M (A) or N (B), not K
  int64_t swizzle = 128;  ///< bytes: 32, 64 or 128
  std::string str() const;
};
std::string_view dot_kind_name(DotKind kind);

/// A cooperative-matrix operand in shared memory: contiguous along `fast` (its home's), each
/// line along fast padded by 16 bytes; element (c0, c1) at c0 * stride + c1 (fast = 1) or
/// c1 * stride + c0.
struct PaddedTile {
  int fast = 1;
  int64_t stride = 0;  ///< elements from one line to the next
  int64_t size = 0;    ///< elements of the whole tile
};
PaddedTile padded_tile(const ir::Shape& shape, int fast, int elem_bytes);

/// The plan of one `dot`.
struct DotPlan {
  DotKind kind = DotKind::Fma;
  Layout acc;  ///< the accumulator's and the result's layout
  // mma.sync:
  const ir::MmaShape* shape = nullptr;  ///< the instruction
  MmaWarps warps;                       ///< how the warps tile the accumulator
  Layout a, b;                          ///< the operand fragments' layouts
  // wgmma:
  std::optional<ir::WgmmaShape> wgmma;  ///< the instruction (its N is tiling.instr_n)
  WgmmaTiling tiling;                   ///< how the warpgroups tile the accumulator
  WgmmaOperand wa, wb;                  ///< the operands' shared-memory layouts
  /// A is read from registers in layout `ra` (wgmma_a_layout), not from shared memory: where it
  /// is computed (not loaded), f16 or bf16, the warpgroups tile M only and its home is `ra`.
  bool a_registers = false;
  Layout ra;
  /// The instructions compute C^T = B^T A^T (32- and 8-bit B lying N-major): `wgmma` and
  /// `tiling` describe them over [N, M], A (K-major, `wa`) is their B through a descriptor, B
  /// (N-major in shared memory, read as scalars: mma_operand.h's wgmma_tile) is their A from
  /// registers, and `acc` is wgmma_acc_t_layout.
  bool swapped = false;
  // cooperative matrices (the tiling is acc.mats):
  int64_t mat_k = 0;  ///< K of one matrix product
  /// The loop whose ring stages this dot's operands in shared memory (null: the dot stages
  /// them itself from registers). In a ring of several wgmma dots an operand that the ring
  /// neither feeds nor holds is still stored from registers by the dot.
  const ir::Op* ring = nullptr;

  std::string str() const;
};

/// How a loop runs.
enum class LoopKind {
  Plain,         ///< one iteration after another
  CpAsyncRing,   ///< the loads feeding its tensor-core dots (one mma.sync dot, or wgmma dots)
                 ///< prefetched num_stages - 1 iterations ahead into a ring of shared buffers, by
                 ///< cp.async (or through registers, for an operand whose layout there is not
                 ///< its source's)
  RegisterRing,  ///< (targets without cp.async) the loads feeding its one cooperative-matrix dot
                 ///< issued an iteration before their stores into the other of two shared
                 ///< buffers: one barrier per iteration, a load's latency hidden by an iteration
                 ///< (one buffer where two do not fit: a second barrier after the stores)
  /// (sm_90a, asked with tl::RangeOptions::warp_specialize) a ring of TMA-copied stages whose
  /// copies a producer warpgroup issues, handing each stage over through a *full* and an *empty*
  /// mbarrier, while the kernel's warps (the consumers) run the wgmma dots: the kernel becomes a
  /// warp_specialize of the consumers' role (the whole body) and the producer's (the loop's
  /// copies). Only for a loop at the kernel's top level, every fed operand a TMA copy, whose
  /// bounds and descriptor offsets are scalar arithmetic of parameters, program ids and the
  /// induction variable (the producer computes them again in its own role).
  WarpSpecialized,
};
std::string_view loop_kind_name(LoopKind kind);

/// One dot operand's load that a ring prefetches.
struct RingLoad {
  const ir::Op* load = nullptr;
  bool transposed = false;  ///< the dot reads permute(load, [1, 0])
  /// The tile cannot be copied as it lies (a wgmma operand of 32- or 8-bit elements must be
  /// K-major in shared memory; cp.async only copies along the source's contiguous dimension): it
  /// is loaded into registers one iteration before it is stored into its stage.
  bool via_registers = false;
  Layout layout;                    ///< the copies' (or loads') layout, in the load's coordinates
  int64_t width = 1;                ///< elements per 16-byte copy (per vector load)
  int iter_arg = -1;                ///< the pointer is this loop-carried value (index), or -1
  const ir::Value* init = nullptr;  ///< ... starting at this free value
  const ir::Value* inc = nullptr;   ///< ... advanced by this loop-invariant offset
  /// (sm_90a) The load is a desc_load copied into its stage by TMA with this tensor map (its
  /// offsets evaluated at the prefetched iteration); layout is then the load's home.
  std::optional<ir::TensorMapParam> tma;
  /// (A ring planned for a cluster, LoopPlan::cluster > 1) The map of 1 / cluster of the box's
  /// rows (its outermost dimension): where every program of the cluster copies the same box, each
  /// copies its slice of rows to all of them (multicast); null: always copied whole, locally.
  std::optional<ir::TensorMapParam> slice;
  /// The layout of the copies in the dot operand's coordinates.
  Layout operand_layout() const;
};

/// One dot operand that a ring moves into its stages.
struct RingFeed {
  const ir::Op* dot = nullptr;  ///< the dot it feeds
  bool is_a = true;             ///< operand A (else B)
  RingLoad load;
};

/// An operand of a ring's wgmma dot that is defined outside the loop: stored into shared memory
/// once, before the loop, and read there by every iteration.
struct HeldOperand {
  const ir::Op* dot = nullptr;
  bool is_a = true;
};

/// The plan of one `for`.
struct LoopPlan {
  LoopKind kind = LoopKind::Plain;
  /// The operands the ring moves, dot by dot in the body's order, A before B. One dot reading
  /// two loads, or (wgmma) several dots, each operand a load of the body, a value from outside
  /// the loop (held) or a value the body computes (stored from registers by the dot).
  std::vector<RingFeed> feeds;
  std::vector<HeldOperand> held;  ///< loop-invariant wgmma operands, staged before the loop
  int stages = 0;                 ///< shared buffers per fed operand
  int prefetch = 0;               ///< iterations prefetched ahead: stages - 1
  /// The dot's last wgmma group stays in flight into the next iteration; the copies of each
  /// iteration are then issued after its dot (whose wait retired the previous iteration's group,
  /// the reader of the stage refilled) and a barrier, instead of before it. Only for a ring of
  /// one dot.
  bool async_dot = false;
  /// Programs per cluster whose TMA copies this ring shares (1: none). Each stage has an *empty*
  /// mbarrier that every program of the cluster arrives on when it has read the stage, so that a
  /// copy into the stage of all of them waits for all of them (lower_pipeline.cpp). Only for a
  /// ring whose operands all arrive by TMA, at the kernel's top level, whose trip count is the
  /// same in every program (its bounds depend on no program id) and whose box coordinates the
  /// issuing thread can compute for any program (as a warp-specialized producer does).
  int cluster = 1;

  /// The dots the ring feeds, in the body's order.
  std::vector<const ir::Op*> dots() const;
  std::string str(const std::unordered_map<const ir::Value*, std::string>& names) const;
};

/// Every decision of one kernel's lowering.
class LoweringPlan {
 public:
  /// Plans `fn` (a verified tile-IR kernel) for `target` and `options`: axis info, then each
  /// dot's plan, then the homes (a dot's result lives in its plan's accumulator layout), then each
  /// loop's plan.
  /// `lean_rings`: a wgmma ring or a register ring may fill shared memory, its buffers reused
  /// after the loop by conversions of the same dtype; else it leaves room for an f32 conversion of
  /// its dot's result beside it, as an mma.sync ring does (the pipeline re-plans so when the lean
  /// plan overflows).
  LoweringPlan(const ir::Function& fn, const target::Target& target, const CompileOptions& options,
               bool lean_rings = true);
  /// Is `op` a desc_load that a workgroup-scope cooperative-matrix dot reads itself (DotKind::
  /// CoopMat2)? Such a load is not lowered on its own.
  bool loaded_by_dot(const ir::Op& op) const { return dot_loads_.count(&op) != 0; }
  bool lean_rings() const { return lean_rings_; }
  /// Does a ring's stage count depend on lean_rings (so that re-planning can change anything)?
  bool has_lean_ring() const;

  const ir::Function& function() const { return fn_; }
  const target::Target& target() const { return target_; }
  const CompileOptions& options() const { return options_; }
  /// The kernel's warps' threads (32 x num_warps): the threads its layouts describe.
  int64_t threads() const { return threads_; }
  /// The loop planned LoopKind::WarpSpecialized (at most one per kernel), or null.
  const ir::Op* warp_specialized_loop() const { return ws_loop_; }
  /// Programs per thread-block cluster: CompileOptions::cluster on a target with clusters (they
  /// come with TMA: sm_90+), else 1 (the same grid runs without them).
  int cluster() const { return target_.has(target::Cap::Tma) ? options_.cluster : 1; }
  /// The producer warpgroup's threads, beside threads(): 128 with a warp-specialized loop.
  int64_t producer_threads() const { return ws_loop_ ? 128 : 0; }
  const AxisInfoMap& axis() const { return axis_; }
  const Homes& homes() const { return *homes_; }
  const DotPlan& dot(const ir::Op& dot) const;
  /// The loop's plan (LoopKind::Plain for every loop without another).
  const LoopPlan& loop(const ir::Op& loop) const;
  /// The tensor map through which TMA stores desc_store `op` (lower::plan_tma_store's; the
  /// `descriptors` step keeps only such stores, with CompileOptions::tma_store).
  const ir::TensorMapParam& tma_store(const ir::Op& op) const;
  /// Is `op` lowered by the plan of an enclosing loop (a ring's loads and their transposes)?
  bool lowered_by_loop(const ir::Op& op) const {
    return ring_ops_.count(&op) != 0 || loaded_by_dot(op);
  }

  /// The plans as text: the kernel's tile values, one per line with the op that defines it and
  /// its home ("free" for values recomputed in whatever layout a consumer asks), each dot's plan
  /// and each pipelined loop's.
  std::string str() const;

 private:
  void plan_loops(const ir::Region& r);

  const ir::Function& fn_;
  target::Target target_;
  CompileOptions options_;
  bool lean_rings_ = true;
  int64_t threads_;
  AxisInfoMap axis_;
  std::unordered_map<const ir::Op*, DotPlan> dots_;
  std::unique_ptr<Homes> homes_;
  std::unordered_map<const ir::Op*, LoopPlan> loops_;
  std::unordered_map<const ir::Op*, const ir::Op*> ring_ops_;   // op -> the loop that lowers it
  std::unordered_map<const ir::Op*, const ir::Op*> dot_loads_;  // desc_load -> its CoopMat2 dot
  std::unordered_map<const ir::Op*, ir::TensorMapParam> tma_stores_;  // desc_store -> its map
  LoopPlan plain_;
  const ir::Op* ws_loop_ = nullptr;
};

/// The plan of one dot (dot_plan.cpp): wgmma where the target has it (Cap::Wgmma), the dtypes
/// have an instruction (f16/bf16 into f32, f32 with TF32 precision into f32, i8 into i32) and the
/// tile is a whole number of 64-row instruction tiles for the warpgroups (num_warps a multiple of
/// 4) with at most 128 accumulators per thread; else mma.sync where the target has it
/// (Cap::MmaSync, 32-lane subgroups), the instruction is listed in the target's matrix shapes and
/// the tile is a whole number of instruction tiles for the warps; else the FMA form. A wgmma dot
/// of 32- or 8-bit elements whose B is loaded N-major and A K-major (axis info) is swapped
/// (DotPlan::swapped) where the transposed tiling fits.
/// With `coopmat2` (CompileOptions::coopmat2) on a target with Cap::CooperativeMatrix2, first the
/// workgroup-scope plan (DotKind::CoopMat2): A and B rank-2 desc_loads of i32 descriptors, the
/// dtypes and the tile multiples of a workgroup shape's granularity for exactly `threads`
/// invocations, and the f32 (i32) accumulator fitting the target's shared memory for its
/// conversion to the epilogue's layout.
DotPlan plan_dot(const ir::Op& dot, const target::Target& target, const AxisInfoMap& axis,
                 int64_t threads, bool coopmat2 = false);
/// A wgmma dot's operand layouts in shared memory, once the homes are known (dot_plan.cpp): each
/// operand contiguous where its source is (so copies and stores run along rows), unless MN-major
/// is not allowed (tf32, i8: then K-major); swizzle the widest of 128, 64, 32 bytes that the
/// contiguous extent fills. A stays in registers where DotPlan::a_registers says.
void plan_wgmma_operands(DotPlan& plan, const ir::Op& dot, const Homes& homes);

/// The plan of one loop (loop_plan.cpp): a cp.async ring when the target has cp.async,
/// num_stages > 1, and either the loop body's one mma.sync dot reads two loads, or its dots are
/// all wgmma and read at least one load, each load (read directly or transposed) with pointers
/// and masks that can be evaluated at later iterations and 16-byte copies (a wgmma operand that
/// cannot be copied as it lies goes through registers instead); wgmma operands from outside the
/// loop are held in shared memory across it; num_stages buffers of every fed operand (at least
/// two) fit in shared memory beside the held operands, the operands the dots store from
/// registers and one f32 accumulator conversion; else Plain.
LoopPlan plan_loop(const ir::Op& loop, const LoweringPlan& plan);

/// The widest vector (in elements) an access in layout `l` through `ptr` can use: registers 0..w-1
/// consecutive along one dimension, and the pointers' contiguity and alignment, the mask's and
/// `other`'s constancy covering w elements (lower_memory.cpp).
int64_t access_width(const AxisInfoMap& axis, const Layout& l, const ir::Value* ptr,
                     const ir::Value* mask, const ir::Value* other);

}  // namespace tessera::lower
