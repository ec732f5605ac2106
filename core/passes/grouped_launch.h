/// \file Grouped launch order: the programs of a matmul-like kernel's 2-D grid run in groups of
/// kLaunchGroup rows, so that the programs resident at one time share operand tiles in L2.
///
/// Nothing in Triton's model or CUDA's orders the programs of a grid; the hardware starts them
/// roughly in the order of its linear block index, x fastest. A kernel that computes the C tile
/// (program_id(0), program_id(1)) therefore runs, at one time, a few columns of C tiles across
/// every row: each wave of resident programs reads all of A. This step renames the programs: the
/// hardware's linear index b = y * X + x (X, Y the grid's extents) is mapped to
///
///   group = b / (G * Y), first = group * G, size = min(X - first, G), local = b % (G * Y)
///   program_id(0) = first + local % size,  program_id(1) = local / size
///
/// (G = kLaunchGroup), Triton's GROUP_M order over the grid's first axis: G consecutive programs
/// walk down a column, then the next column, and a wave of resident programs covers G rows of A.
/// It is a bijection of the X x Y grid (every group but the last holds G * Y indices, G rows of
/// Y; the last holds size * Y, since first < X whenever b < X * Y), so every program still runs
/// exactly once with its own ids; the kernel cannot tell, except by its order, which the model
/// leaves open. Where X * Y might not fit an i32 (X > 32768 or Y > 65535) the ids stay as they
/// were: the arithmetic runs on the extents clamped to those limits, so it neither overflows nor
/// divides by zero, and a `where` keeps the hardware's ids.
///
/// The step applies (CompileOptions::grouped_launch, on by default) to a kernel that
///  - reads program_id(0) and program_id(1) (a 2-D grid of tiles),
///  - runs a `dot` inside a loop whose A operand depends on one of the two ids and not the other,
///    and B on the other one (a matmul's tiles: a row of programs shares A's tiles, a column B's;
///    attention, whose Q depends on both ids, keeps its order), and
///  - has no atomic operations (a kernel that coordinates its programs through memory, a lock or
///    a ticket, may expect the hardware's order to make progress; it keeps it).
/// A kernel that orders its programs itself (a 1-D grid split with `/` and `%`, as Triton's
/// tutorial does) is left as written.
#pragma once

#include <cstdint>

#include "core/ir/ir.h"

namespace tessera::passes {

/// Rows of the grid's first axis per group (Triton's tutorial uses GROUP_M = 8).
inline constexpr int64_t kLaunchGroup = 8;

/// Renames the programs of every kernel of `m` to which the step applies (above); true if it
/// renamed any.
bool group_launch_order(ir::Module& m);

}  // namespace tessera::passes
