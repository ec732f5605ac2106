/// \file The host interpreter: the executable definition of the tile IR's semantics.
///
/// It runs a kernel's tile IR for every program of a 1-3-D grid, one program at a time, in
/// row-major program order (x fastest), on host memory: a pointer is a host address. Every load,
/// store and atomic is checked against the live allocations given by a MemoryMap, so a bad
/// access is an Error (DeviceFault) naming the kernel, the source line, the program id and the
/// address, never a segfault.
///
/// Where core/ir/ops.h leaves a result undefined, the interpreter defines it (and never has
/// undefined behaviour itself):
///  - integer x / 0 == 0 and x % 0 == x (so x == (x / y) * y + x % y still holds);
///    MIN / -1 wraps to MIN and MIN % -1 == 0.
///  - shift counts are read as unsigned; a count >= the bit width gives 0 for shl and for a
///    logical shr, and the sign fill (0 or -1) for an arithmetic shr (PTX's clamping).
///  - float -> int of NaN gives 0; out-of-range values saturate to the target's min or max
///    (PTX's cvt.rzi); x -> i1 is x != 0, so NaN -> 1.
///  - a masked-off lane of a load without `other`, and of an atomic, yields zero bits.
///  - a misaligned access is a DeviceFault like an out-of-bounds one; so is a `for` with step 0
///    and a false `assume`.
///  - i1 is handled as an unsigned 1-bit integer: arithmetic wraps mod 2, 0 < 1 in compares,
///    min/max and reductions.
/// Orders (which matter for float rounding and non-associative combines):
///  - reduce and reduce_generic combine adjacent pairs level by level, an order-preserving
///    pairwise tree ((x0 . x1) . (x2 . x3)) whose left operand is always the lower-index range;
///    argmax/argmin treat NaN as the extreme and +0 > -0, ties to the lowest index.
///  - scan and scan_generic fold in index order; reverse = 1 folds from the end with the carry
///    (the higher indices) as the left operand, i.e. flip, scan, flip as in Triton.
///  - dot sums over k in increasing order, each step acc = round(acc + a*b) with an exact
///    product (a fused multiply-add), after rounding f32 inputs to TF32 unless precision = ieee.
///  - atomics apply lane by lane in lane order, so duplicate addresses in one op accumulate;
///    float atomic max/min follow the nan = "ignore" rule on both sides (a NaN in memory is
///    replaced by a number) with -0 < +0; f16/bf16 atomic add rounds once per lane.
/// Print writes `pid (x, y, z) idx (i, j) <prefix><value>` per element of a tile (row-major),
/// `pid (x, y, z) <prefix><value>` for a scalar, with `(operand k) ` after the prefix when
/// there are several operands; floats in the shortest form that reads back exactly, integers in
/// decimal, pointers and `hex` values as 0x and two digits per byte.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "core/ir/ir.h"

namespace tessera::interp {

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

/// The address ranges a kernel may touch.
class MemoryMap {
 public:
  virtual ~MemoryMap() = default;
  /// True if [address, address + bytes) lies inside one live allocation.
  virtual bool contains(uint64_t address, uint64_t bytes) const = 0;
};

/// A wall-clock limit on a run, so that a kernel that never ends (a `while` whose condition stays
/// true) ends the run with an error instead of hanging its caller. The interpreters look at the
/// clock at every program and every 256th loop iteration; past `at`, the run throws a DeviceFault
/// "timed out" naming the kernel, the loop's file:line, the program and `seconds`.
struct Deadline {
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  double seconds = 0;             ///< the limit `at` was computed from, for the message
  const char* setting = nullptr;  ///< what sets the limit (named in the message), or null

  /// A deadline `seconds` from now; none (never passes) when seconds <= 0.
  static Deadline after(double seconds, const char* setting = nullptr);
  bool none() const { return at == std::chrono::steady_clock::time_point::max(); }
  bool passed() const { return !none() && std::chrono::steady_clock::now() >= at; }
  /// "timed out: still running after the time limit of 1 s (TESSERA_TIMEOUT)".
  std::string describe() const;
};

struct RunOptions {
  std::ostream* print_out = nullptr;  ///< where `print` writes; null means std::cout
  Deadline deadline;                  ///< none by default
  /// Programs to run, as linear ids [first, last) in x-fastest order; default all of the grid.
  uint64_t first_program = 0;
  uint64_t last_program = UINT64_MAX;
};

/// Throws ErrorKind::Unsupported if `fn` (tile or SIMT IR) holds an op that no interpreter runs:
/// inline assembly (tl::inline_asm_elementwise, PTX only). The message names the op, its
/// file:line, the kernel and `device` (the interpreter's device name, "host" or "simt:8").
/// Devices call it when they compile a kernel; run() and run_simt() refuse such ops too.
void check_interpretable(const ir::Function& fn, std::string_view device);

/// Runs `fn` (a verified kernel) over `grid`. `params` is the packed parameter block of
/// core/ir/abi.h. Throws tessera::Error: DeviceFault for a bad address, a failed assert or a
/// passed deadline.
void run(const ir::Function& fn, std::span<const std::byte> params, Grid grid,
         const MemoryMap& memory, const RunOptions& options = {});

}  // namespace tessera::interp
