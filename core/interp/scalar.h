/// \file The pieces of the tile interpreter that the SIMT interpreter (simt.h) reuses so both mean
/// the same thing by an op: parameter reading, constants, math functions, print formatting, loop
/// trip counts and the global-memory access check. (Per-element arithmetic lives in numeric.h and
/// convert.h.)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/interp/interpreter.h"
#include "core/interp/value.h"
#include "core/ir/ir.h"

namespace tessera::interp {

/// Reads the kernel's parameters out of the packed block (core/ir/abi.h); i1 reads as 0 or 1.
/// Throws ErrorKind::Argument when the block is too small.
std::vector<RuntimeValue> read_params(const ir::Function& fn, std::span<const std::byte> block);

/// The value of a `constant` op: a scalar, or a tile of its type with every element equal.
RuntimeValue constant_value(const ir::Op& op);

/// The double-precision function of a math op kind (exp ... ceil); its result is rounded once
/// to the operand's dtype. Internal error for any other kind.
using MathFn = double (*)(double);
MathFn math_fn(ir::OpKind kind);
/// The double-precision function of a two-operand math op kind (pow, atan2, hypot); null for any
/// other kind.
using MathFn2 = double (*)(double, double);
MathFn2 math_fn2(ir::OpKind kind);

/// One element as `print` writes it: floats in the shortest form that reads back exactly,
/// integers in decimal, pointers and `hex` values as 0x and two digits per byte.
std::string format_scalar(ir::DType dtype, bool is_ptr, const std::byte* bits, bool hex);

/// Iterations of `for lb to ub step st` (0 for an empty range; step != 0), computed in 64-bit
/// unsigned arithmetic so that bounds near the limits neither overflow nor loop forever.
uint64_t trip_count(int64_t lb, int64_t ub, int64_t step);

/// What is wrong with a global access, as "<what>" ("out-of-bounds load") and "<detail>"
/// (": address 0x.. (4 bytes) is not inside a live buffer") of a DeviceFault message.
struct AccessFault {
  std::string what;
  std::string detail;
};
/// Nothing when [address, address + bytes) lies inside one live allocation and address is a
/// multiple of `align`; otherwise the fault. `access` is "load", "store" or "atomic".
std::optional<AccessFault> check_access(const MemoryMap& memory, std::string_view access,
                                        uint64_t address, int bytes, int align);

}  // namespace tessera::interp
