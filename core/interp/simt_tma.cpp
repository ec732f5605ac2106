/// \file The SIMT interpreter's TMA family: mbarriers with ir::MBarrier's phases, and tensor
/// copies with ir::tma_copy's zero fill and swizzle (core/ir/tma.h). A copy reads global memory
/// when issued and lands when its mbarrier is next used (arrive or wait), so that lock-step
/// threads see it exactly where a wait allows them to; a wait that cannot complete then is a
/// fault, where a GPU would hang. A tensor store reads shared memory and writes the tensor when
/// the tma_store_wait that retires its group runs; until then its source is marked as read (a
/// write there is a race), and a program that ends with one in flight is a fault.
#include <algorithm>
#include <cstring>
#include <deque>
#include <string>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

using Key = std::pair<int64_t, int64_t>;  // (buffer, element) of an mbarrier

/// Thread t's mbarrier, checked against its buffer.
Key barrier_key(Machine& m, const Instr& in, uint32_t t, int64_t buffer, int32_t index) {
  const SharedArray& buf = m.shared.buffers[static_cast<size_t>(buffer)];
  if (index < 0 || index >= buf.count)
    m.fault(*in.op, static_cast<int>(t), "out-of-bounds mbarrier",
            ": element " + std::to_string(index) + " of shared buffer " + std::to_string(buffer) +
                " (" + std::to_string(buf.count) + " elements)");
  return {buffer, index};
}

/// Lands every copy in flight that completes on mbarrier `key`.
void land(Machine& m, const Key& key) {
  std::vector<PendingTma>& queue = m.tma.pending;
  size_t kept = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    PendingTma& c = queue[i];
    if (c.barrier != key) {
      // (Not onto itself: a vector moved onto itself is left empty, and the copy's bytes with it.)
      if (kept != i) queue[kept] = std::move(c);
      ++kept;
      continue;
    }
    SharedArray& buf = m.shared.buffers[static_cast<size_t>(c.buffer)];
    std::memcpy(buf.data.data() + c.byte_offset, c.bytes.data(), c.bytes.size());
    m.tma.barriers[key].complete_tx(static_cast<int64_t>(c.bytes.size()));
    ++m.tma.changes;
  }
  queue.resize(kept);
}

/// The clocks of mbarrier `key` (SyncClocks on): once its phase has advanced, what the arrivals
/// saw is the completed phase's.
BarrierClocks& settled(Machine& m, const Key& key) {
  BarrierClocks& c = m.tma.clocks[key];
  if (c.arriving.empty()) {
    c.arriving.assign(m.threads, 0);
    c.completed.assign(m.threads, 0);
  }
  const int64_t phase = m.tma.barriers[key].phase();
  if (c.phase != phase) {
    c.completed = c.arriving;
    std::fill(c.arriving.begin(), c.arriving.end(), 0u);
    c.phase = phase;
  }
  return c;
}

/// Thread u arrives on `key`: what it has seen, and its own clock, go with the phase.
void release(Machine& m, const Key& key, uint32_t u) {
  if (!m.sync.on) return;
  BarrierClocks& c = settled(m, key);
  const uint32_t* row = m.sync.seen.data() + size_t{u} * m.threads;
  for (uint32_t v = 0; v < m.threads; ++v) c.arriving[v] = std::max(c.arriving[v], row[v]);
  c.arriving[u] = std::max(c.arriving[u], m.sync.own[u]++);
}

/// Thread t saw `key`'s phase complete: it is ordered after what the phase's arrivals saw.
void acquire(Machine& m, const Key& key, uint32_t t) {
  if (!m.sync.on) return;
  const BarrierClocks& c = settled(m, key);
  uint32_t* row = m.sync.seen.data() + size_t{t} * m.threads;
  for (uint32_t v = 0; v < m.threads; ++v) row[v] = std::max(row[v], c.completed[v]);
}

ir::MBarrier& initialized(Machine& m, const Instr& in, uint32_t t, const Key& key) {
  ir::MBarrier& b = m.tma.barriers[key];
  if (!b.initialized())
    m.fault(*in.op, static_cast<int>(t), "use of an uninitialized mbarrier",
            ": element " + std::to_string(key.second) + " of shared buffer " +
                std::to_string(key.first) + " (no mbarrier_init before it)");
  return b;
}

/// mbarrier_init %index, %count {buffer = imm[0]}.
void mbarrier_init(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* count = in.in[1].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    if (count[t] < 1)
      m.fault(*in.op, static_cast<int>(t), "mbarrier_init with a count below 1",
              ": " + std::to_string(count[t]));
    if (m.tma.barriers[key].initialized())
      m.fault(*in.op, static_cast<int>(t), "mbarrier_init of a valid mbarrier",
              ": element " + std::to_string(key.second) + " of shared buffer " +
                  std::to_string(key.first) + " (undefined in PTX: mbarrier_inval it first)");
    m.tma.barriers[key].init(count[t]);
    m.tma.clocks.erase(key);
    ++m.tma.changes;
  }
}

/// mbarrier_inval %index {buffer = imm[0]}: the mbarrier is uninitialized again.
void mbarrier_inval(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    initialized(m, in, t, key);
    for (const PendingTma& p : m.tma.pending)
      if (p.barrier == key)
        m.fault(*in.op, static_cast<int>(t), "mbarrier_inval with a copy in flight to it",
                ": element " + std::to_string(key.second) + " of shared buffer " +
                    std::to_string(key.first) + " (wait for its phase first)");
    m.tma.barriers.erase(key);
    m.tma.clocks.erase(key);
    ++m.tma.changes;
  }
}

/// mbarrier_arrive_tx %index, %bytes[, %rank] {buffer = imm[0]}: the copies in flight land
/// first. With %rank, the mbarrier is that of the cluster's program of that rank (the race
/// checks' clocks do not cross workgroups: an arrival on another's mbarrier orders nothing here).
void mbarrier_arrive_tx(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* bytes = in.in[1].as<int32_t>();
  const int32_t* rank = in.in.size() > 2 ? in.in[2].as<int32_t>() : nullptr;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    Machine& target = rank ? cluster_member(m, *in.op, t, rank[t]) : m;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    ir::MBarrier& b = initialized(target, in, t, key);
    land(target, key);
    if (bytes[t] < 0)
      m.fault(*in.op, static_cast<int>(t), "mbarrier_arrive_tx with negative bytes",
              ": " + std::to_string(bytes[t]));
    b.expect_tx(bytes[t]);
    if (&target == &m) {
      if (m.sync.on) settled(m, key);  // (a copy landed above may have completed a phase)
      release(m, key, t);
    }
    if (!b.arrive())
      m.fault(*in.op, static_cast<int>(t), "an arrival the mbarrier does not expect",
              " (" + b.pending() + ")");
    ++target.tma.changes;
  }
}

/// mbarrier_wait %index, %parity {buffer = imm[0]}: every copy in flight to the mbarrier lands;
/// if the phase has still not completed, only another warp_specialize role can complete it (the
/// other threads of this one are at this op too): the roles take their turns until one does, or
/// all wait, which is the fault a GPU hangs on.
void mbarrier_wait(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* parity = in.in[1].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    if (parity[t] != 0 && parity[t] != 1)
      m.fault(*in.op, static_cast<int>(t), "mbarrier_wait with a parity other than 0 or 1",
              ": " + std::to_string(parity[t]));
    for (;;) {
      // (Looked up again after the other roles ran: an inval and init may have replaced it.)
      ir::MBarrier& b = initialized(m, in, t, key);
      land(m, key);
      if (b.test_wait(parity[t])) break;
      const std::string what = "the phase of parity " + std::to_string(parity[t]) +
                               " of the mbarrier at element " + std::to_string(key.second) +
                               " of shared buffer " + std::to_string(key.first) + ", which has " +
                               b.pending() + " and no copy in flight";
      if (!wait_for_other_roles(m, *in.op, what))
        m.fault(*in.op, static_cast<int>(t), "mbarrier_wait that can never complete (a GPU hangs)",
                ": it waits for " + what);
    }
    acquire(m, key, t);
  }
}

/// Parameter `p`'s value as a signed integer (or a pointer's address).
int64_t param_value(const Machine& m, int p) {
  const ir::Value* v = m.fn.params[static_cast<size_t>(p)].value;
  const Slot& s = m.blocks[0].args[static_cast<size_t>(p)];
  if (v->type.is_ptr) return static_cast<int64_t>(*s.as<uint64_t>());
  switch (ir::dtype_bytes(v->type.dtype)) {
    case 1:
      return ir::is_signed_int(v->type.dtype) ? *s.as<int8_t>() : *s.as<uint8_t>();
    case 2:
      return ir::is_signed_int(v->type.dtype) ? *s.as<int16_t>() : *s.as<uint16_t>();
    case 4:
      return ir::is_signed_int(v->type.dtype) ? *s.as<int32_t>() : *s.as<uint32_t>();
    default:
      return *s.as<int64_t>();
  }
}

int64_t map_value(const Machine& m, const ir::TensorMapValue& v) {
  return v.param >= 0 ? param_value(m, v.param) : v.constant;
}

/// The map of a tma_load or tma_store as a copy with this program's parameters (coordinates
/// left empty).
ir::TmaCopy map_copy(const Machine& m, int64_t index) {
  const ir::TensorMapParam map = ir::tensor_maps(m.fn).at(static_cast<size_t>(index));
  ir::TmaCopy copy;
  copy.base = static_cast<uint64_t>(param_value(m, map.base_param));
  copy.elem_bytes = ir::dtype_bytes(map.dtype);
  copy.swizzle = map.swizzle;
  copy.box = map.box;
  for (int d = 0; d < map.rank(); ++d) {
    copy.dims.push_back(map_value(m, map.dims[static_cast<size_t>(d)]));
    copy.strides.push_back(map_value(m, map.strides[static_cast<size_t>(d)]) * copy.elem_bytes);
  }
  return copy;
}

/// Faults unless element `index` of `buf` starts a box of `copy` where TMA can put it: at a
/// 128-byte boundary (and 8 x the swizzle), the box inside the buffer.
void check_box(Machine& m, const Instr& in, uint32_t t, const SharedArray& buf, int64_t buffer,
               int32_t index, const ir::TmaCopy& copy) {
  const int64_t align = std::max<int64_t>(128, 8 * int64_t{copy.swizzle});
  const int64_t first = int64_t{index} * buf.elem_bytes;
  if (index < 0 || first % align != 0 || first + copy.bytes() > buf.count * buf.elem_bytes)
    m.fault(*in.op, static_cast<int>(t),
            in.op->kind == ir::OpKind::TmaLoad ? "bad TMA destination" : "bad TMA source",
            ": element " + std::to_string(index) + " of shared buffer " + std::to_string(buffer) +
                " (" + std::to_string(buf.count) + " elements) for a box of " +
                std::to_string(copy.bytes()) + " bytes at a " + std::to_string(align) +
                "-byte boundary");
}

/// The copy `p` (thread t's, of `in`) may land in `target`'s shared memory any time from now:
/// the race checks of its destination (across workgroups only the async readers': a wgmma of
/// the target still reading it).
void will_write(Machine& m, Machine& target, const Instr& in, uint32_t t, const PendingTma& p) {
  const SharedArray& buf = target.shared.buffers[static_cast<size_t>(p.buffer)];
  if (buf.access.empty()) return;
  const int64_t first = p.byte_offset / buf.elem_bytes;
  const int64_t end = first + static_cast<int64_t>(p.bytes.size()) / buf.elem_bytes;
  for (int64_t e = first; e < end; ++e) {
    if (&target == &m) {
      on_async_write(m, *in.op, p.buffer, t, buf, e);
      continue;
    }
    const SharedAccess& a = buf.access[static_cast<size_t>(e)];
    if (a.async_readers > 0)
      m.fault(*in.op, static_cast<int>(t), "shared-memory race",
              ": the copy writes " + ir::shared_buffer_attr(p.buffer) + "[" + std::to_string(e) +
                  "] of " + target.program() + " while its " + std::string(a.async_op->name()) +
                  " at " + a.async_op->loc.str() + " reads it");
  }
}

/// tma_load %index, %bar, %c...[, %mask] {buffer = imm[0], barrier = imm[1], map, multicast}:
/// the box goes to this workgroup, or with multicast to each of the cluster's whose rank's bit
/// is set in %mask, completing on the mbarrier at the same place in each.
void tma_load(Machine& m, const Instr& in, const Mask& mask) {
  const ir::TmaLoadOp op(in.op);
  ir::TmaCopy copy = map_copy(m, op.map());
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(in.imm[0])];
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* bar = in.in[1].as<int32_t>();
  const size_t coords_end = in.in.size() - (op.multicast() ? 1 : 0);
  const int32_t* targets = op.multicast() ? in.in[coords_end].as<int32_t>() : nullptr;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[1], bar[t]);
    check_box(m, in, t, buf, in.imm[0], index[t], copy);
    copy.coords.clear();
    for (size_t d = 2; d < coords_end; ++d) copy.coords.push_back(*(in.in[d].as<int32_t>() + t));
    PendingTma p;
    p.barrier = key;
    p.buffer = in.imm[0];
    p.byte_offset = int64_t{index[t]} * buf.elem_bytes;
    p.bytes.resize(static_cast<size_t>(copy.bytes()));
    ir::tma_copy(
        copy,
        [&](uint64_t address, std::byte* out, size_t n) {
          if (auto bad = check_access(m.memory, "load", address, static_cast<int>(n), 1))
            m.fault(*in.op, static_cast<int>(t), bad->what, bad->detail);
          std::memcpy(out, reinterpret_cast<const std::byte*>(address), n);
        },
        p.bytes.data());
    const uint32_t ranks = targets ? static_cast<uint32_t>(targets[t]) : 1u << m.rank;
    if (targets && (ranks == 0 || ranks >> 16))
      m.fault(*in.op, static_cast<int>(t), "a multicast mask outside 1..0xffff",
              ": " + std::to_string(targets[t]));
    for (uint32_t r = 0; r < 16; ++r) {
      if (!(ranks >> r & 1u)) continue;
      Machine& target = targets ? cluster_member(m, *in.op, t, r) : m;
      initialized(target, in, t, key);
      will_write(m, target, in, t, p);
      target.tma.pending.push_back(p);
      ++target.tma.changes;
    }
  }
}

/// tma_store %index, %c... {buffer = imm[0], map}: the store joins the thread's open group; its
/// source must be fenced for the async proxy, and is marked as read until the store retires.
void tma_store(Machine& m, const Instr& in, const Mask& mask) {
  const ir::TmaStoreOp op(in.op);
  ir::TmaCopy copy = map_copy(m, op.map());
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(in.imm[0])];
  const int32_t* index = in.in[0].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    check_box(m, in, t, buf, in.imm[0], index[t], copy);
    copy.coords.clear();
    for (size_t d = 1; d < in.in.size(); ++d) copy.coords.push_back(*(in.in[d].as<int32_t>() + t));
    PendingStore p{in.op, copy, in.imm[0], int64_t{index[t]} * buf.elem_bytes, {}};
    if (!buf.access.empty()) {
      const int64_t first = index[t], count = copy.bytes() / buf.elem_bytes;
      for (int64_t e = first; e < first + count; ++e) {
        SharedAccess& a = buf.access[static_cast<size_t>(e)];
        if (a.unfenced >= 0)
          m.fault(*in.op, static_cast<int>(t), "tma_store reads shared memory not fenced for it",
                  ": " + ir::shared_buffer_attr(in.imm[0]) + "[" + std::to_string(e) +
                      "] was written by thread " + std::to_string(a.unfenced) + " at " +
                      a.write_op->loc.str() + " with no fence_async_shared after the write");
        on_shared_read(m, *in.op, in.imm[0], t, buf, e);
        ++a.async_readers;
        a.async_op = in.op;
        p.reads.push_back({in.imm[0], e});
      }
    }
    m.tma.open_stores[t].push_back(std::move(p));
  }
}

void tma_store_commit(Machine& m, const Instr&, const Mask& mask) {
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    m.tma.store_groups[t].push_back(std::move(m.tma.open_stores[t]));
    m.tma.open_stores[t].clear();
  }
}

/// Drops the read marks of store `p`.
void unmark(SharedMemory& shared, const PendingStore& p) {
  for (const auto& [buffer, elem] : p.reads)
    --shared.buffers[static_cast<size_t>(buffer)].access[static_cast<size_t>(elem)].async_readers;
}

/// tma_store_wait {pending = imm[0]}: the thread's oldest groups beyond `pending` are performed
/// (their boxes read from shared memory now, written to the tensors).
void tma_store_wait(Machine& m, const Instr& in, const Mask& mask) {
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    auto& groups = m.tma.store_groups[t];
    while (static_cast<int64_t>(groups.size()) > in.imm[0]) {
      for (const PendingStore& p : groups.front()) {
        const SharedArray& buf = m.shared.buffers[static_cast<size_t>(p.buffer)];
        unmark(m.shared, p);
        ir::tma_store_copy(
            p.copy, buf.data.data() + p.byte_offset,
            [&](uint64_t address, const std::byte* bytes, size_t n) {
              if (auto bad = check_access(m.memory, "store", address, static_cast<int>(n), 1))
                m.fault(*p.op, static_cast<int>(t), bad->what, bad->detail);
              std::memcpy(reinterpret_cast<std::byte*>(address), bytes, n);
            });
      }
      groups.pop_front();
    }
  }
}

}  // namespace

void TmaState::begin_workgroup(uint32_t threads, SharedMemory& shared) {
  barriers.clear();
  clocks.clear();
  pending.clear();
  for (auto& list : open_stores)
    for (const PendingStore& p : list) unmark(shared, p);
  for (auto& groups : store_groups)
    for (const auto& group : groups)
      for (const PendingStore& p : group) unmark(shared, p);
  open_stores.assign(threads, {});
  store_groups.assign(threads, {});
}

const PendingStore* TmaState::store_in_flight(uint32_t* thread) const {
  for (uint32_t t = 0; t < open_stores.size(); ++t) {
    *thread = t;
    if (!open_stores[t].empty()) return &open_stores[t].front();
    if (!store_groups[t].empty()) return &store_groups[t].front().front();
  }
  return nullptr;
}

Handler select_tma(Instr& in, Machine& m) {
  const SharedMemory& shared = m.shared;
  auto checked = [&](int64_t buffer) {
    TESSERA_CHECK(buffer >= 0 && static_cast<size_t>(buffer) < shared.buffers.size(), "'",
                  in.op->name(), "' of an undeclared buffer");
    return buffer;
  };
  switch (in.op->kind) {
    case ir::OpKind::MbarrierInit:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      return &mbarrier_init;
    case ir::OpKind::MbarrierArriveTx:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      return &mbarrier_arrive_tx;
    case ir::OpKind::MbarrierWait:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      return &mbarrier_wait;
    case ir::OpKind::MbarrierInval:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      return &mbarrier_inval;
    case ir::OpKind::TmaLoad:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      in.imm[1] = checked(in.op->int_attr(attr::kBarrier));
      return &tma_load;
    case ir::OpKind::TmaStore:
      in.imm[0] = checked(in.op->int_attr(attr::kBuffer));
      m.wgmma.used = true;  // the race checks track unfenced writes for its reads too
      return &tma_store;
    case ir::OpKind::TmaStoreCommit:
      return &tma_store_commit;
    case ir::OpKind::TmaStoreWait:
      in.imm[0] = in.op->int_attr(attr::kPending);
      return &tma_store_wait;
    default:
      return select_cluster(in);
  }
}

}  // namespace tessera::interp::simt
