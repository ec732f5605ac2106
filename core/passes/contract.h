/// \file Floating-point contraction (Triton's `enable_fp_fusion`, on by default there and here):
/// a product whose only use is a sum becomes one fused multiply-add, rounded once.
///
///   add(mul(a, b), c), add(c, mul(a, b))  ->  fma(a, b, c)
///   sub(mul(a, b), c)                     ->  fma(a, b, neg(c))
///   sub(c, mul(a, b))                     ->  fma(neg(a), b, c)
///
/// for f32 and f64 only (f16 and bf16 arithmetic keeps its own rounding). Negation is exact, so
/// each form is the fused value of the expression as written. The rewrite is in the tile IR, before
/// the host interpreter's stage, so the devices compute the same fused values: the host and simt
/// interpreters run `fma` exactly (std::fma), PTX emits fma.rn, SPIR-V GLSL.std.450 Fma. The
/// pipeline runs it where CompileOptions::fp_fusion is on and the target's fma rounds once
/// (Cap::FusedFma; lavapipe's GLSL Fma may round twice, so there nothing is fused).
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Fuses every single-use f32/f64 product into the sum or difference that uses it; returns true
/// if it fused one.
bool contract_fp(ir::Module& m);

}  // namespace tessera::passes
