/// \file The SIMT interpreter: runs a SIMT-stage function (core/ir/simt.h) on the CPU, one
/// workgroup per program of the grid, at whatever subgroup size it was lowered for, with real
/// barrier and shuffle semantics, so the lowering from tiles to threads is testable without a GPU
/// against the tile interpreter (interpreter.h).
///
/// Semantics beyond core/ir/simt.h (the tile interpreter's definitions of the undefined cases
/// hold for every scalar op, whose arithmetic is the tile interpreter's own code):
///  - The threads of a workgroup run in lock-step, op by op; within one op, the stores and
///    atomics of the threads land in a pseudo-random order chosen by `schedule_seed` (every seed,
///    0 included, is a fixed order that differs between ops), so results that depend on the order
///    show up as differences between seeds. Programs run one at a time in x-fastest order.
///  - A barrier must be reached by every thread of the workgroup and a shuffle by every lane of
///    each subgroup that executes it; otherwise it is a DeviceFault. So is a shuffle reading an
///    inactive lane, or (xor, idx) a lane outside [0, S); up/down past either end of the subgroup
///    give the caller's own value.
///  - Shared memory starts every workgroup filled with 0xCD bytes (GPUs do not zero it), so a read
///    of an unwritten element yields garbage rather than zero. An i1 read from it is 0 or 1.
///  - With `check_races`, every shared element remembers its last writer and readers and the
///    barrier interval ("epoch") they accessed it in. Within one interval, a read of an element
///    another thread wrote, a write of an element another thread read, and a write of a different
///    value over another thread's write are DeviceFaults ("shared-memory race"). A second write of
///    the same value (threads that hold replicated data storing it) is allowed.
///  - Global accesses are checked per thread over their whole `width` range against the
///    MemoryMap and for `align`; shared accesses for the buffer's bounds and for index % width.
///    The fault messages are the tile interpreter's, with ", thread t" after the program.
///  - mma and ldmatrix need every lane of each subgroup that executes them (else a DeviceFault).
///    mma sums each D element as the tile interpreter's `dot` does: C plus one exact product at
///    a time, k increasing, rounding to f32 after each addition. ldmatrix checks the row address
///    of each of the 8 x count addressing lanes (bounds, 16-byte alignment; the fault names that
///    lane) and counts each element as read by the lane that receives it.
///  - cp_async reads global memory (checked like a 16-byte load) when issued and is checked by
///    the race detector as a write then, but its bytes reach shared memory only when the issuing
///    thread's cp_async_wait retires its group (checked again as a write at that point): a
///    missing or too weak wait leaves the destination as it was (poison before the first write).
///    Copies never waited for are dropped at the end of the workgroup.
///  - tma_load reads global memory (checked per row) when issued; its box reaches shared memory,
///    and its bytes complete on its mbarrier, when a thread next arrives at or waits on that
///    mbarrier. A wait whose phase has still not completed then can never complete (every thread
///    is at the wait) and is a DeviceFault naming the op and what the phase still expects; so is
///    a use of an mbarrier no mbarrier_init set up, and an arrival its phase does not expect.
///    Copies never waited for are dropped at the end of the workgroup.
///  - print writes the tile interpreter's lines (`pid (x, y, z) idx (i, j) <prefix><value>`), one
///    per active thread, in thread order; a failing assert reports the lowest failing thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>

#include "core/interp/interpreter.h"
#include "core/ir/ir.h"

namespace tessera::interp {

struct SimtOptions {
  std::ostream* print_out = nullptr;  ///< where `print` writes; null means std::cout
  uint64_t schedule_seed = 0;         ///< picks the order of threads' stores and atomics in an op
  bool check_races = true;            ///< the shared-memory race detector
  Deadline deadline;                  ///< none by default (interpreter.h)
};

/// Runs `fn` (a verified SIMT function) over `grid`; `params` is the packed parameter block of
/// core/ir/abi.h. Throws tessera::Error: DeviceFault for a bad global or shared address, a failed
/// assert or assume, a shared-memory race, a barrier in divergent control flow, a shuffle with
/// inactive lanes, a `for` with step 0 or a passed deadline; User for a function that is not a
/// SIMT function.
void run_simt(const ir::Function& fn, std::span<const std::byte> params, Grid grid,
              const MemoryMap& memory, const SimtOptions& options = {});

}  // namespace tessera::interp
