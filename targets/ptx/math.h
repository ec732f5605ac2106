/// \file The PTX target's math library: the functions of targets/math/functions.h (exp ... hypot
/// and fmod) built in LLVM IR from targets/math/algorithms.h (accuracy in ptx.h), as internal
/// functions of the module.
#pragma once

#include "core/ir/ir.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {

/// The library function of unary `kind` (math::function) of a half, bfloat, float or double value
/// (narrow floats compute in f32 and round once).
llvm::Value* math_unary(Emitter& e, ir::OpKind kind, llvm::Value* x);
/// C's fmod (exact) of two values of one float type.
llvm::Value* math_fmod(Emitter& e, llvm::Value* x, llvm::Value* y);
/// pow, atan2 or hypot of two values of one float type (narrow floats through f32).
llvm::Value* math_binary(Emitter& e, ir::OpKind kind, llvm::Value* x, llvm::Value* y);

}  // namespace tessera::ptx
