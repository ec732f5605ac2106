/// \file Internal to the ring lowering (lower_pipeline.cpp): the values of a pipelined loop's body
/// at another iteration (Shifted), and the copies a ring issues with them: cp.async of an
/// operand's tile, its load into registers ahead of use, and a TMA box's coordinates.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {

/// Values of the loop body at iteration iv' (iv' given): recomputes what the body computes from
/// the induction variable (emitting at the builder's point); everything from outside the loop
/// comes from the lowering as usual, or, with `outside`, is computed again too (the scalars of
/// a warp-specialized loop's producer, which sees none of the consumers' values; parameters
/// still come from the lowering).
class Shifted : public ValueSource {
 public:
  Shifted(Lowerer& lw, const ir::Region& body, ir::Value* iv, bool outside = false)
      : lw_(lw), body_(body), iv_(iv), outside_(outside) {}
  void set_iv(ir::Value* iv) { iv_ = iv; }
  /// Evaluates as the program whose id along x is `x` would (with `outside`: the values of
  /// another program of the cluster).
  void set_program_x(ir::Value* x) { program_x_ = x; }

  /// The values computed so far, by the body's values.
  using Values = std::unordered_map<const ir::Value*, ir::Value*>;
  /// Computes now (at the builder's point) every part of `v` that does not change from one
  /// iteration to the next (no use of the induction variable or another loop-carried value):
  /// done before a loop, each is computed once rather than in every iteration (LLVM does not
  /// move an integer division out of a branch, or past an mbarrier wait).
  void hoist(const ir::Value* v);
  /// The values computed so far (after hoist: those of no iteration).
  const Values& values() const { return scalars_; }
  /// Starts from `values` (hoisted by a Shifted of the same program, before the loop).
  void seed(const Values& values) { scalars_ = values; }

  ir::Value* scalar(const ir::Value* v) override;
  Regs regs(const ir::Value* v, const Layout& l) override;

 private:
  Lowerer& lw_;
  const ir::Region& body_;
  ir::Value* iv_;
  bool outside_;
  ir::Value* program_x_ = nullptr;
  /// Does `v` change from one iteration to the next?
  bool varies(const ir::Value* v);

  Values scalars_;
  std::unordered_map<const ir::Value*, bool> varies_;
  std::unordered_map<std::string, Regs> tiles_;
};

/// step > 0 ? it < ub : it > ub (the loop's own test).
ir::Value* in_range(Lowerer& lw, ir::Value* it, ir::Value* ub, ir::Value* step);

/// cp_async of one operand's tile (`o` in shared memory) of iteration `j` (evaluated by `at`)
/// into the stage at element offset `stage` (a multiple of the power of two `stage_align`);
/// `valid`: the iteration exists.
void issue(Lowerer& lw, const RingLoad& p, const Operand& o, Shifted& at, ir::Value* j,
           ir::Value* stage, int64_t stage_align, ir::Value* valid);

/// Loads `p`'s tile of iteration `j` (evaluated by `at`) into registers in p.layout; `valid`:
/// the iteration exists (else the registers are zero and nothing is read).
Regs load_ahead(Lowerer& lw, const RingLoad& p, Shifted& at, ir::Value* j, ir::Value* valid);

/// The i32 coordinates of the block desc_load `p.load` reads at the iteration `at` evaluates,
/// outermost first (TMA's order).
std::vector<ir::Value*> tma_coords(Lowerer& lw, const RingLoad& p, Shifted& at);

}  // namespace tessera::lower::detail
