/// \file Which tile values are free (recomputed in whatever layout a consumer asks) and the home
/// layout of every other one: loads and atomics coalesced through their pointers, dots in their
/// plan's accumulator layout, reductions in the slice of their input, loop-carried values at a
/// fixed point.
#pragma once

#include <functional>
#include <span>
#include <unordered_map>

#include "core/ir/ir.h"
#include "core/ir/ops.h"
#include "core/lower/axis_info.h"
#include "core/lower/layout.h"
#include "core/target/target.h"

namespace tessera::lower {

/// Can an op of this kind be recomputed in any layout at its definition point, from its operands
/// alone (constants, arange, splat, the shape ops, hints and pure elementwise ops)? A value is free
/// when its op is such and all its operands are free: index arithmetic, masks, pointer tiles.
bool is_free_kind(ir::OpKind kind);

/// Home layouts of the non-free tile values, and which values are free.
class Homes {
 public:
  /// `dot_layout` gives the accumulator layout each dot's plan chose.
  Homes(const ir::Function& fn, const AxisInfoMap& axis, int64_t threads,
        std::function<const Layout&(const ir::Op& dot)> dot_layout);
  bool is_free(const ir::Value* v) const;
  const Layout& home(const ir::Value* v) const;
  /// The layout a load, store or atomic through `ptr` (a pointer tile) works in: coalesced
  /// along its most contiguous dimension, vectorized where alignment allows.
  Layout coalesced(const ir::Value* ptr) const;
  /// The home of a non-free value (the linear twin of an opaque one: mat_twin), or the default
  /// layout of a free one: the layout a consumer other than a dot or control flow works in.
  Layout layout_for(const ir::Value* v) const;

 private:
  void region(const ir::Region& r);
  void op(const ir::Op& o);
  void for_op(ir::ForOp f);
  void while_op(ir::WhileOp w);
  void if_op(ir::IfOp f);
  /// The homes of a non-free op's results (or a reduction's), other than control flow's.
  void result_homes(const ir::Op& o);
  /// A descriptor load's home (kept for TMA).
  Layout desc_load_home(const ir::Value* r) const;
  /// An inline asm's home for all its results.
  Layout inline_asm_home(const ir::Op& o) const;
  void loop_args(const ir::Region& body, size_t first, std::span<ir::Value* const> inits);
  Layout operand_home(const ir::Op& o) const;
  /// `l`, or its linear twin when it is opaque (homes derived from an operand's are linear).
  Layout linear(const Layout& l) const;
  /// The home of operand 0, or its default layout when it is free.
  Layout operand_layout(const ir::Op& o) const;
  bool known(const ir::Value* v) const { return homes_.count(v) != 0; }

  const AxisInfoMap& axis_;
  int64_t threads_;
  std::function<const Layout&(const ir::Op&)> dot_layout_;
  std::unordered_map<const ir::Value*, bool> free_;
  std::unordered_map<const ir::Value*, Layout> homes_;
};

}  // namespace tessera::lower
