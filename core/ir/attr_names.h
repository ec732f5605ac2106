/// \file Every attribute name of the tile IR and the SIMT IR, spelled once.
///
/// Ops, functions and parameters carry attributes by name (ir.h). Writing the name as a
/// constant everywhere makes a misspelling a compile error instead of an op that one pass
/// writes under one name and another reads under a second. The textual IR prints these names
/// unchanged, so the constants are part of the IR's format: renaming one changes the text.
/// Each comment lists the ops (or the function or parameter) that carry the attribute; ops.h
/// and simt.h give their meaning.
#pragma once

#include <string_view>

namespace tessera::attr {

// ---- tile-IR ops -------------------------------------------------------------------------
/// program_id, num_programs (grid axis); expand_dims, cat, reduce, reduce_generic, scan,
/// scan_generic (tile axis); simt program_id, num_programs.
inline constexpr std::string_view kAxis = "axis";
/// constant: the value (int64 or double).
inline constexpr std::string_view kValue = "value";
/// arange: the first element.
inline constexpr std::string_view kStart = "start";
/// arange: one past the last element.
inline constexpr std::string_view kEnd = "end";
/// permute: the dimension order.
inline constexpr std::string_view kOrder = "order";
/// min, max, reduce, scan (and the SIMT min and max they lower to): "propagate" or "ignore".
inline constexpr std::string_view kNan = "nan";
/// atomic_rmw (tile and SIMT): the read-modify-write operation.
inline constexpr std::string_view kOp = "op";
/// atomic_rmw, atomic_cas (tile and SIMT): the memory order.
inline constexpr std::string_view kSem = "sem";
/// atomic_rmw, atomic_cas (tile and SIMT): the memory scope.
inline constexpr std::string_view kScope = "scope";
/// load, store, SIMT global_load and global_store: the cache modifier.
inline constexpr std::string_view kCache = "cache";
/// load, store, SIMT global_load and global_store: the eviction policy.
inline constexpr std::string_view kEviction = "eviction";
/// load, SIMT global_load: 1 for a volatile access.
inline constexpr std::string_view kVolatile = "volatile";
/// load, store: a group number (> 0) set by single-trip versioning (core/passes/single_trip.h):
/// where the code runs, a run-time test has proved that the group's stores write none of the
/// bytes that its loads read, so loads of the group merge across its stores (cse.h).
inline constexpr std::string_view kDisjoint = "disjoint";
/// reduce, scan: the combining operation.
inline constexpr std::string_view kKind = "kind";
/// scan, scan_generic: 1 to scan from the end.
inline constexpr std::string_view kReverse = "reverse";
/// dot: the input precision.
inline constexpr std::string_view kPrecision = "precision";
/// print (tile and SIMT): the text before the values.
inline constexpr std::string_view kPrefix = "prefix";
/// print (tile and SIMT): 1 to print integers in hex.
inline constexpr std::string_view kHex = "hex";
/// assert (tile and SIMT): the user's message.
inline constexpr std::string_view kMessage = "message";
/// assert (tile and SIMT): the number of value operands; multiple_of, max_contiguous: the
/// per-dimension list.
inline constexpr std::string_view kValues = "values";
/// assert (tile and SIMT): the heading of the fault a false element raises.
inline constexpr std::string_view kFault = "fault";
/// inline_asm, inline_asm_impure: the PTX text.
inline constexpr std::string_view kAsm = "asm";
/// inline_asm, inline_asm_impure: the LLVM constraint string.
inline constexpr std::string_view kConstraints = "constraints";
/// inline_asm, inline_asm_impure: elements per invocation.
inline constexpr std::string_view kPack = "pack";
/// for: the software-pipelining depth asked for this loop.
inline constexpr std::string_view kNumStages = "num_stages";
/// for: the unroll hint (carried, not used yet).
inline constexpr std::string_view kLoopUnrollFactor = "loop_unroll_factor";
/// for: 1 to flatten a loop nest (carried, not used yet).
inline constexpr std::string_view kFlatten = "flatten";
/// for: 1 to ask for a producer warpgroup that feeds the loop's dots by TMA (LoopKind::
/// WarpSpecialized).
inline constexpr std::string_view kWarpSpecialize = "warp_specialize";

// ---- kernel parameters -------------------------------------------------------------------
/// A parameter (tile and SIMT functions): the integer or address is a multiple of this.
inline constexpr std::string_view kDivisibility = "divisibility";
/// A parameter (tile and SIMT functions): 1 when the integer is known to equal one.
inline constexpr std::string_view kEqualTo = "equal_to";

// ---- SIMT functions ----------------------------------------------------------------------
/// A function: "simt" for the SIMT stage; absent for the tile IR.
inline constexpr std::string_view kStage = "stage";
/// A SIMT function: the workgroup's thread count.
inline constexpr std::string_view kThreads = "threads";
/// A SIMT function: the subgroup size.
inline constexpr std::string_view kSubgroup = "subgroup";
/// A SIMT function: the target description it was lowered for.
inline constexpr std::string_view kTarget = "target";
/// A SIMT function: the register limit per thread.
inline constexpr std::string_view kMaxnreg = "maxnreg";
/// A SIMT function: the programs of one thread-block cluster (along x).
inline constexpr std::string_view kCluster = "cluster";
/// A SIMT function: "shared_<i>" declares shared buffer i (simt.h's shared_buffer_attr).
inline constexpr std::string_view kSharedPrefix = "shared_";
/// A SIMT function: "tensor_map_<i>" declares TMA tensor map i (simt.h's tensor_map_attr).
inline constexpr std::string_view kTensorMapPrefix = "tensor_map_";

// ---- SIMT ops ----------------------------------------------------------------------------
/// barrier: 1 when global memory is ordered too (debug_barrier).
inline constexpr std::string_view kGlobal = "global";
/// barrier: the named barrier's number (0 to 15; absent: 0).
inline constexpr std::string_view kBarrierId = "id";
/// barrier: how many threads the named barrier waits for (absent: the workgroup's).
inline constexpr std::string_view kThreadCount = "threads";
/// setmaxnreg: the new register limit per thread; setmaxnreg: 1 to raise it, 0 to lower it.
inline constexpr std::string_view kRegisters = "registers";
inline constexpr std::string_view kIncrease = "inc";
/// warp_specialize: each role's thread count, in region order (role k runs the threads after
/// the first k roles').
inline constexpr std::string_view kRoles = "roles";
/// shuffle: "xor", "idx", "up" or "down".
inline constexpr std::string_view kMode = "mode";
/// shared_load, shared_store, ldmatrix, cp_async, mbarrier_init, mbarrier_arrive_tx,
/// mbarrier_wait, tma_load, coopmat_load, coopmat_store: the shared buffer's number.
inline constexpr std::string_view kBuffer = "buffer";
/// shared_load, shared_store, global_load, global_store: elements per access.
inline constexpr std::string_view kWidth = "width";
/// global_load, global_store: the access's alignment in bytes.
inline constexpr std::string_view kAlign = "align";
/// mma, wgmma: the instruction shape ("m16n8k16", ...).
inline constexpr std::string_view kShape = "shape";
/// mma, wgmma: the input type of A and B ("f16", "bf16", "tf32", "i8", ...).
inline constexpr std::string_view kA = "a";
/// wgmma: A's shared-memory layout; absent when A comes from registers.
inline constexpr std::string_view kASmem = "a_smem";
/// wgmma: B's shared-memory layout.
inline constexpr std::string_view kBSmem = "b_smem";
/// ldmatrix: the number of 8x8 matrices.
inline constexpr std::string_view kCount = "count";
/// ldmatrix: 1 for the transposing form.
inline constexpr std::string_view kTrans = "trans";
/// cp_async_wait, wgmma_wait: the groups that may stay in flight.
inline constexpr std::string_view kPending = "pending";
/// tma_load: the mbarrier's shared buffer.
inline constexpr std::string_view kBarrier = "barrier";
/// tma_load: the tensor map's number.
inline constexpr std::string_view kMap = "map";
/// tma_load: 1 when the last operand is the mask of the cluster's programs the copy writes to
/// (PTX .multicast::cluster).
inline constexpr std::string_view kMulticast = "multicast";
/// coopmat_load, coopmat_store: the row (or column) stride in elements.
inline constexpr std::string_view kStride = "stride";
/// coopmat_load, coopmat_store: 1 for a column-major matrix.
inline constexpr std::string_view kColMajor = "col_major";
/// coopmat_load_tensor: 1 where elements outside the tensor read zero (the edge path), 0 where
/// the whole matrix must lie inside it (the fast path).
inline constexpr std::string_view kClampZero = "clamp_zero";
/// print, assert: the rank of the tile whose element indices lead the operands.
inline constexpr std::string_view kRank = "rank";

}  // namespace tessera::attr
