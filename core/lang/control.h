/// \file The kernel language's IR control flow (part of tl.h, which includes it): loops over
/// tiles (tl::range, with Triton's per-loop options), branches (tl::if_), early returns
/// (tl::return_if) and while loops (tl::while_).
#pragma once

#include <functional>
#include <optional>

#include "range.h"
#include "tensor.h"

namespace tessera::tl {

/// An IR loop: `for (auto i : tl::range(lo, hi, step)) { ... }`. The body is traced once;
/// variables it assigns are carried from one iteration to the next, and hold the last values
/// after the loop. `break` and `return` inside the body are not supported (use tl::while_).
Range range(const Operand& lo, const Operand& hi, const Operand& step = 1,
            Here loc = Here::current());
/// Triton's per-loop keyword arguments of tl.range: `tl::range(0, K, BK, {.num_stages = 3})`.
/// They are carried on the loop's `for` op as attributes of the same names. num_stages is
/// honored where the compiler pipelines a loop (the cp.async and register rings of loops
/// feeding a dot): it replaces the launch's num_stages for that loop (1 turns pipelining off).
/// loop_unroll_factor and flatten are accepted and carried but not used yet: the loop is
/// emitted as without them (the same results). warp_specialize asks that a producer warpgroup
/// feed the loop's wgmma dots by TMA while the kernel's warps compute (sm_90a; a loop at the
/// kernel's top level whose dot operands are descriptor loads): elsewhere the loop is pipelined
/// as without it, and TESSERA_DUMP=layouts says which.
struct RangeOptions {
  std::optional<int> num_stages;          ///< software-pipelining depth of this loop (>= 1)
  std::optional<int> loop_unroll_factor;  ///< unroll hint (>= 1; carried, not used yet)
  bool flatten = false;                   ///< flatten a nest into one loop (carried, not used)
  bool warp_specialize = false;           ///< a TMA producer warpgroup (Triton's keyword)
};
/// An IR loop with Triton's per-loop options (see tl::RangeOptions).
Range range(const Operand& lo, const Operand& hi, const Operand& step, const RangeOptions& options,
            Here loc = Here::current());

/// An IR branch on an i1 scalar. Variables assigned in either branch become the branch's
/// results (a variable first given a value inside a branch must be given one in both).
void if_(const Operand& cond, const std::function<void()>& then_fn, Here loc = Here::current());
/// An IR branch with an else branch.
void if_(const Operand& cond, const std::function<void()>& then_fn,
         const std::function<void()>& else_fn, Here loc = Here::current());

/// An early return under a dynamic condition (Triton's `if cond: return` in the kernel body):
/// where the i1 scalar `cond` is true, the program ends here. Everything traced after the call
/// goes into the else branch of an IR branch on `cond` (closed when tracing ends), so the rest
/// of the body runs only where `cond` is false; several calls nest. It must be called at the
/// top level of the kernel body: inside a tl::range, tl::if_ or tl::while_ body it is a user
/// error (wrap the rest of that body in tl::if_ instead). A C++ `return` after a plain C++ `if`
/// on a constant is the trace-time form, as with constexpr conditions in Triton.
void return_if(const Operand& cond, Here loc = Here::current());

/// An IR while loop: `cond` is traced into the loop header and must return an i1 scalar;
/// variables assigned in `cond` or `body` are carried.
void while_(const std::function<tensor()>& cond, const std::function<void()>& body,
            Here loc = Here::current());

}  // namespace tessera::tl
