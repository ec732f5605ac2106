/// \file The cross-program part of a TMA ring shared by a cluster (ring_cluster.h).
#include "core/lower/ring_cluster.h"

#include "core/ir/ops.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

void hoist_tma_coords(Shifted& at, const LoopPlan& plan, bool sliced) {
  for (const RingFeed& f : plan.feeds) {
    if (!f.load.tma || (sliced && !f.load.slice)) continue;
    const ir::DescOperands d = ir::DescLoadOp(f.load.load).desc();
    for (int c = 0; c < d.rank; ++c) at.hoist(d.offset(c));
  }
}

ClusterRing::ClusterRing(Lowerer& lw, const ir::Op& loop, const LoopPlan& plan, int bars)
    : lw_(lw), loop_(loop), plan_(plan), bars_(bars) {
  Lowerer& l = lw;
  const int buffer = bars, count = 2 * plan.stages;
  l.at_exit([&l, buffer, count] {
    l.b().create(OpKind::ClusterBarrier, {}, {});
    // tid == 0 again here: at_entry's value lives in the consumers' role of a warp-specialized
    // kernel, and this is after it.
    ir::Value* first =
        l.emit(OpKind::CmpEq, {l.tid(), l.const_int(DType::i32, 0)}, Type::scalar(DType::i1));
    l.guarded(first, [&] {
      for (int s = 0; s < count; ++s)
        l.b().create(OpKind::MbarrierInval, {l.const_int(DType::i32, s)}, {},
                     {{attr::kBuffer, int64_t{buffer}}});
    });
  });
}

void ClusterRing::prepare() {
  const Type i32 = Type::scalar(DType::i32);
  ir::Value* x = lw_.emit(OpKind::ProgramId, {}, i32, {{attr::kAxis, int64_t{0}}});
  ir::Value* first = lw_.emit(OpKind::Sub, {x, lw_.emit(OpKind::ClusterRank, {}, i32)}, i32);
  x_.clear();
  hoisted_.clear();
  for (int r = 0; r < plan_.cluster; ++r) {
    x_.push_back(r ? lw_.add(first, lw_.const_int(DType::i32, r)) : first);
    Shifted peer(lw_, *ir::ForOp(&loop_).body(), nullptr, /*outside=*/true);
    peer.set_program_x(x_.back());
    hoist_tma_coords(peer, plan_, true);
    hoisted_.push_back(peer.values());
  }
}

std::vector<ir::Value*> ClusterRing::same_boxes(const std::vector<std::vector<ir::Value*>>& coords,
                                                ir::Value* it) {
  const Type i1 = Type::scalar(DType::i1);
  std::vector<ir::Value*> same(plan_.feeds.size(), nullptr);
  for (int r = 0; r < plan_.cluster; ++r) {
    Shifted peer(lw_, *ir::ForOp(&loop_).body(), it, /*outside=*/true);
    peer.set_program_x(x_[static_cast<size_t>(r)]);
    peer.seed(hoisted_[static_cast<size_t>(r)]);
    for (size_t i = 0; i < plan_.feeds.size(); ++i) {
      const RingLoad& l = plan_.feeds[i].load;
      if (!l.slice) continue;
      const std::vector<ir::Value*> theirs = tma_coords(lw_, l, peer);
      for (size_t d = 0; d < theirs.size(); ++d) {
        ir::Value* eq = lw_.emit(OpKind::CmpEq, {theirs[d], coords[i][d]}, i1);
        same[i] = same[i] ? lw_.and_(same[i], eq) : eq;
      }
    }
  }
  return same;
}

void ClusterRing::free_everywhere(ir::Value* empty) {
  for (int r = 0; r < plan_.cluster; ++r)
    lw_.b().create(OpKind::MbarrierArriveTx,
                   {empty, lw_.const_int(DType::i32, 0), lw_.const_int(DType::i32, r)}, {},
                   {{attr::kBuffer, int64_t{bars_}}});
}

}  // namespace tessera::lower::detail
