/// \file The SIMT interpreter's cluster ops: cluster_rank and cluster_barrier, and the lookup of
/// another workgroup of the cluster (the target of a remote arrival or a multicast copy,
/// simt_tma.cpp). The workgroups run as cooperative tasks (simt_tasks.cpp), so a barrier that
/// another has not reached yet lets the others run.
#include <string>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

/// cluster_rank: the workgroup's rank in its cluster (0 without one).
void cluster_rank(Machine& m, const Instr& in, const Mask&) {
  int32_t* r = in.out[0].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) r[t] = static_cast<int32_t>(m.rank);
}

/// cluster_barrier: every thread arrives; the workgroup goes on once every workgroup of the
/// cluster has arrived as often. Within the workgroup it is a barrier as well.
void cluster_barrier(Machine& m, const Instr& in, const Mask& mask) {
  if (mask.count != m.threads)
    m.fault(*in.op, -1, "cluster_barrier in divergent control flow",
            ": only " + std::to_string(mask.count) + " of " + std::to_string(m.threads) +
                " threads reach it");
  if (m.cluster) {
    Cluster& c = *m.cluster;
    const uint64_t mine = ++c.barriers[m.rank];
    ++c.changes;
    for (;;) {
      size_t behind = c.members.size();
      for (size_t r = 0; r < c.members.size() && behind == c.members.size(); ++r)
        if (c.barriers[r] < mine) behind = r;
      if (behind == c.members.size()) break;
      const std::string who =
          c.members[behind]->program() + " (rank " + std::to_string(behind) + ")";
      if (c.ended[behind])
        m.fault(*in.op, -1, "cluster_barrier that can never complete (a GPU hangs)",
                ": " + who + " of the cluster has ended without reaching it");
      const std::string what = who + " to reach cluster_barrier " + std::to_string(mine);
      if (!wait_for_other_roles(m, *in.op, what))
        m.fault(*in.op, -1, "cluster_barrier that can never complete (a GPU hangs)",
                ": it waits for " + what);
    }
  }
  m.shared.barrier();
}

}  // namespace

Machine& cluster_member(Machine& m, const ir::Op& op, uint32_t t, int64_t rank) {
  const size_t size = m.cluster ? m.cluster->members.size() : 1;
  if (rank < 0 || static_cast<size_t>(rank) >= size)
    m.fault(op, static_cast<int>(t), "a cluster rank outside the cluster",
            ": rank " + std::to_string(rank) + " of a cluster of " + std::to_string(size));
  if (!m.cluster) return m;
  const auto r = static_cast<size_t>(rank);
  if (m.cluster->ended[r])
    m.fault(op, static_cast<int>(t), "a write to the shared memory of a program that has ended",
            ": " + m.cluster->members[r]->program() + " (rank " + std::to_string(rank) +
                ") of the cluster ended first (a cluster_barrier before its end orders them)");
  return *m.cluster->members[r];
}

Handler select_cluster(Instr& in) {
  switch (in.op->kind) {
    case ir::OpKind::ClusterRank:
      return &cluster_rank;
    case ir::OpKind::ClusterBarrier:
      return &cluster_barrier;
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
