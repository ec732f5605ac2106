/// \file The SIMT IR: the per-thread program that every target emits from.
///
/// The SIMT IR reuses the tile IR's containers (Module, Function, Region, Op, Value), its printer,
/// parser, verifier and scalar passes. A Function whose attribute `stage` is "simt" is a SIMT
/// kernel: every value is a scalar or a pointer (no tiles), and it runs as one *workgroup* per
/// program of the grid. Its function attributes say how:
///
///   stage = "simt"
///   threads = T          threads per workgroup (32 x num_warps)
///   subgroup = S         the subgroup size it was lowered for (8, 32, 64); T % S == 0
///   shared = [b0, b1..]  shared-memory buffers: element count of buffer i ...
///   shared_types = [..]  ... and its element dtype as a DType index (see `shared_buffer_dtype`)
///   target = "<text>"    the target description it was lowered for (core/target)
///
/// Thread t of a workgroup is lane t % S of subgroup t / S.
///
/// Ops only the SIMT IR has (trait kSimt):
///   lane_id                  i32 in [0, S)
///   subgroup_id              i32 in [0, T / S)
///   barrier                  every thread of the workgroup waits for the others; shared-memory
///                            writes before it are visible to reads after it. It must be reached
///                            by all threads (uniform control flow).
///   shuffle %v, %n {mode}    the value of %v in another lane of the same subgroup:
///                            mode "xor": lane ^ n; "idx": lane n; "up": lane - n; "down": lane + n
///                            ("up"/"down" past the subgroup's end give the caller's own %v).
///                            All lanes of the subgroup must execute it together.
///   shared_load %index {buffer, width}
///                            `width` (1, 2, 4, 8) consecutive elements of shared buffer `buffer`
///                            starting at element %index (i32, a multiple of width): `width`
///                            results of the buffer's dtype.
///   shared_store %index, %v0, ... {buffer, width}
///   global_load %ptr, %pred, %other0, ... {width, align, cache?}
///                            if %pred (i1): `width` consecutive elements at %ptr (a scalar
///                            pointer, `align`-byte aligned, align >= element size); else the
///                            %other values. `width` results of the pointee dtype.
///   global_store %ptr, %pred, %v0, ... {width, align}
///                            if %pred: writes the `width` values to consecutive elements.
///   print %i0.., %v {prefix, hex, rank}
///                            prints element (i0, ..) of a tile of rank `rank` held by this thread
///                            (rank 0: a scalar), as the tile interpreter does.
///   assert %i0.., %cond {message, rank}
///                            a false %cond is a device fault naming the message and the index.
///
/// Every scalar tile-IR op keeps its meaning on scalars: program_id, num_programs, constant,
/// the elementwise ops, cast, bitcast, where, ptr_add, atomic_rmw and atomic_cas (scalar
/// pointer, value and mask), multiple_of, max_contiguous, assume, and the structured control
/// flow (for, if, while, yield, condition). Tile-only ops (arange, splat, broadcast, expand_dims,
/// reshape, permute, cat, load, store, reduce*, scan*, dot) do not appear.
#pragma once

#include <vector>

#include "core/ir/ir.h"

namespace tessera::ir {

/// True if `fn` is a SIMT-stage function (attribute stage = "simt").
bool is_simt(const Function& fn);

}  // namespace tessera::ir
