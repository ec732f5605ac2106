/// \file The host interpreter: the executable definition of the tile IR's semantics.
///
/// It runs a kernel's tile IR for every program of a 1-3-D grid, one program at a time, in
/// row-major program order (x fastest), on host memory: a pointer is a host address. Every load,
/// store and atomic is checked against the live allocations given by a MemoryMap, so a bad
/// access is an Error (DeviceFault) naming the kernel, the source line, the program id and the
/// address, never a segfault.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>

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

struct RunOptions {
  std::ostream* print_out = nullptr;  ///< where `print` writes; null means std::cout
  /// Programs to run, as linear ids [first, last) in x-fastest order; default all of the grid.
  uint64_t first_program = 0;
  uint64_t last_program = UINT64_MAX;
};

/// Runs `fn` (a verified kernel) over `grid`. `params` is the packed parameter block of
/// core/ir/abi.h. Throws tessera::Error: DeviceFault for a bad address or a failed assert.
void run(const ir::Function& fn, std::span<const std::byte> params, Grid grid,
         const MemoryMap& memory, const RunOptions& options = {});

}  // namespace tessera::interp
