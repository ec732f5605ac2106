/// \file The math library of targets/math/algorithms.h on SPIR-V (internal to targets/spirv):
/// each use expands the algorithm inline into the kernel's function, its branches as selection
/// constructs (the Payne-Hanek reduction of sin and cos runs only where an argument is huge).
#pragma once

#include "core/ir/ops.h"
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

/// Unary `kind` (one with a library function: targets/math/functions.h) of an f32 or f64 value
/// `x`, as the math library computes it (with GLSL Fma where the target fuses it, else an fma built
/// from exact products).
Value library_math(Emitter& e, ir::OpKind kind, Value x);
/// pow, atan2 or hypot of two f32 or f64 values of one type, from the math library.
Value library_math(Emitter& e, ir::OpKind kind, Value x, Value y);

}  // namespace tessera::spirv::impl
