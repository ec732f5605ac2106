/// \file The wgmma family in the SIMT interpreter (core/ir/wgmma.h). A wgmma computes its
/// warpgroup's D at issue from shared memory read through the operand layouts (each element's
/// byte from WgmmaSmem::byte_of). With race checks on, the elements it reads count it as a reader
/// until a wgmma_wait retires its group: a write to one of them before that (a store, or a
/// cp_async whose copy may land at once) is a race, as is a wgmma reading an element whose writer
/// has not executed fence_async_shared since.
#include <cmath>
#include <cstring>

#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"
#include "core/ir/wgmma.h"
#include "core/support/float16.h"

namespace tessera::interp::simt {
namespace {

constexpr uint32_t kGroup = 128;

/// Every warpgroup with an active thread is entirely active; returns whether warpgroup g runs.
bool whole_warpgroup(const Machine& m, const Instr& in, const Mask& mask, uint32_t g) {
  uint32_t active = 0;
  for (uint32_t t = 0; t < kGroup; ++t) active += mask.on[g * kGroup + t];
  if (active == 0) return false;
  if (active == kGroup) return true;
  m.fault(*in.op, -1, std::string(in.op->name()) + " in divergent control flow",
          ": " + std::to_string(active) + " of the 128 threads of warpgroup " + std::to_string(g) +
              " execute it");
}

/// An operand element as a double: f16/bf16 exactly, tf32 with its low 13 mantissa bits
/// dropped (NaN kept), fp8 exactly, i8 as an integer.
double element(ir::DType in, bool tf32, const std::byte* p) {
  switch (in) {
    case ir::DType::f16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return f16_to_double(h);
    }
    case ir::DType::bf16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_double(h);
    }
    case ir::DType::f32: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      float f;
      if (tf32 && (u & 0x7F800000u) != 0x7F800000u) u &= 0xFFFFE000u;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case ir::DType::f8e4m3:
      return f8e4m3_to_double(static_cast<uint8_t>(*p));
    case ir::DType::f8e5m2:
      return f8e5m2_to_double(static_cast<uint8_t>(*p));
    default:
      return static_cast<double>(static_cast<int8_t>(*p));
  }
}

/// Reads one operand (rows x K) for warpgroup g into `out` (row-major), recording every byte.
void read_operand(Machine& m, const Instr& in, uint32_t g, const ir::WgmmaSmem& s, int32_t index,
                  int rows, const ir::WgmmaShape& shape, std::vector<double>& out,
                  PendingWgmma& record) {
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(s.buffer)];
  const int e = buf.elem_bytes;
  const uint32_t t0 = g * kGroup;
  if (index < 0 || index >= buf.count)
    m.fault(*in.op, static_cast<int>(t0), "out-of-bounds wgmma operand",
            ": start " + std::to_string(index) + " of " + ir::shared_buffer_attr(s.buffer) +
                " is outside its " + std::to_string(buf.count) + " elements");
  out.assign(static_cast<size_t>(rows) * shape.k, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < shape.k; ++k) {
      const int64_t byte = s.byte_of(int64_t{index} * e, r, k, e);
      if (byte < 0 || byte + e > buf.count * e)
        m.fault(*in.op, static_cast<int>(t0), "out-of-bounds wgmma operand",
                ": element (" + std::to_string(r) + ", " + std::to_string(k) + ") at byte " +
                    std::to_string(byte) + " leaves " + ir::shared_buffer_attr(s.buffer));
      const int64_t elem = byte / e;
      if (!buf.access.empty()) {
        const SharedAccess& a = buf.access[static_cast<size_t>(elem)];
        if (a.unfenced >= 0)
          m.fault(*in.op, static_cast<int>(t0), "wgmma reads shared memory not fenced for it",
                  ": " + ir::shared_buffer_attr(s.buffer) + "[" + std::to_string(elem) +
                      "] was written by thread " + std::to_string(a.unfenced) + " at " +
                      a.write_op->loc.str() + " with no fence_async_shared after the write");
        on_shared_read(m, *in.op, s.buffer, t0, buf, elem);
        SharedAccess& held = buf.access[static_cast<size_t>(elem)];
        ++held.async_readers;
        held.async_op = in.op;
        record.reads.push_back({s.buffer, elem});
      }
      const std::byte* p = buf.data.data() + byte;
      out[static_cast<size_t>(r) * shape.k + k] = element(shape.in, shape.a == "tf32", p);
    }
}

/// Gathers A (64 x K, row-major) of warpgroup g from its threads' registers (core/ir/wgmma.h).
void registers_operand(const Instr& in, uint32_t g, const ir::WgmmaShape& shape,
                       std::vector<double>& out) {
  out.assign(static_cast<size_t>(64) * shape.k, 0.0);
  const int e = ir::dtype_bytes(shape.in);
  for (uint32_t t = 0; t < kGroup; ++t)
    for (int j = 0; j < shape.k / 2; ++j) {
      const ir::WgmmaCoord c = ir::wgmma_a_coord(static_cast<int>(t), j, e);
      const Slot& slot = in.in[static_cast<size_t>(j)];
      const std::byte* v = slot.data + size_t{g * kGroup + t} * static_cast<size_t>(slot.bytes);
      out[static_cast<size_t>(c.row) * shape.k + c.col] = element(shape.in, shape.a == "tf32", v);
    }
}

/// wgmma: per warpgroup, D = A x B + C, A from shared memory or registers, B from shared
/// memory (imm unused).
void wgmma(Machine& m, const Instr& in, const Mask& mask) {
  ir::WgmmaOp w(in.op);
  const ir::WgmmaShape shape = w.shape();
  const bool a_regs = w.a_in_registers();
  const ir::WgmmaSmem sb = w.b_smem();
  const size_t b_slot = w.b_slot();
  const int32_t* b_index = in.in[b_slot].as<int32_t>();
  // With A in shared memory, its start index (else B's again: the checks below then agree).
  const int32_t* a_index = a_regs ? b_index : in.in[0].as<int32_t>();
  std::vector<double> a, b;
  for (uint32_t g = 0; g * kGroup < m.threads; ++g) {
    if (!whole_warpgroup(m, in, mask, g)) continue;
    const uint32_t t0 = g * kGroup;
    for (uint32_t t = t0; t < t0 + kGroup; ++t)
      if (a_index[t] != a_index[t0] || b_index[t] != b_index[t0])
        m.fault(*in.op, static_cast<int>(t), "wgmma with operands that differ across its warpgroup",
                ": thread " + std::to_string(t) + " starts A at " + std::to_string(a_index[t]) +
                    " and B at " + std::to_string(b_index[t]) + ", thread " + std::to_string(t0) +
                    " at " + std::to_string(a_index[t0]) + " and " + std::to_string(b_index[t0]));
    PendingWgmma record{m.wgmma.committed[g], in.op, {}};
    if (a_regs)
      registers_operand(in, g, shape, a);
    else
      read_operand(m, in, g, w.a_smem(), a_index[t0], 64, shape, a, record);
    read_operand(m, in, g, sb, b_index[t0], shape.n, shape, b, record);
    for (uint32_t t = t0; t < t0 + kGroup; ++t)
      for (int i = 0; i < shape.acc_count(); ++i) {
        const ir::WgmmaCoord c = ir::wgmma_acc_coord(static_cast<int>(t - t0), i);
        const double* ar = &a[static_cast<size_t>(c.row) * shape.k];
        const double* bc = &b[static_cast<size_t>(c.col) * shape.k];
        const size_t slot = b_slot + 1 + static_cast<size_t>(i);
        if (shape.acc == ir::DType::f32) {
          double acc = in.in[slot].as<float>()[t];
          for (int k = 0; k < shape.k; ++k)
            acc = static_cast<float>(num::odd_sum(acc, ar[k] * bc[k]));
          in.out[static_cast<size_t>(i)].as<float>()[t] = static_cast<float>(acc);
        } else {
          uint32_t acc = static_cast<uint32_t>(in.in[slot].as<int32_t>()[t]);
          for (int k = 0; k < shape.k; ++k)
            acc += static_cast<uint32_t>(static_cast<int32_t>(ar[k]) * static_cast<int32_t>(bc[k]));
          in.out[static_cast<size_t>(i)].as<int32_t>()[t] = static_cast<int32_t>(acc);
        }
      }
    m.wgmma.pending[g].push_back(std::move(record));
  }
}

void wgmma_fence(Machine& m, const Instr& in, const Mask& mask) {
  for (uint32_t g = 0; g * kGroup < m.threads; ++g) whole_warpgroup(m, in, mask, g);
}

void wgmma_commit(Machine& m, const Instr& in, const Mask& mask) {
  for (uint32_t g = 0; g * kGroup < m.threads; ++g)
    if (whole_warpgroup(m, in, mask, g)) ++m.wgmma.committed[g];
}

/// wgmma_wait {pending = imm[0]}: retires the warpgroup's groups but the newest `pending` (their
/// elements are free to be written again, after a barrier by other threads: the reads are
/// recorded as the warpgroup's, now); passes the accumulators through.
void wgmma_wait(Machine& m, const Instr& in, const Mask& mask) {
  const uint64_t keep = static_cast<uint64_t>(in.imm[0]);
  for (uint32_t g = 0; g * kGroup < m.threads; ++g) {
    if (!whole_warpgroup(m, in, mask, g)) continue;
    const uint64_t committed = m.wgmma.committed[g];
    const uint64_t done = committed > keep ? committed - keep : 0;
    std::vector<PendingWgmma>& queue = m.wgmma.pending[g];
    size_t kept = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      PendingWgmma& p = queue[i];
      if (p.group >= done) {
        if (kept != i) queue[kept] = std::move(p);  // (never a self-move: it would empty p)
        ++kept;
        continue;
      }
      // The reads complete here, by the warpgroup: a write by another thread before the next
      // barrier races with them (a barrier must order the retiring wait before the writes).
      for (const auto& [buffer, elem] : p.reads) {
        SharedArray& buf = m.shared.buffers[static_cast<size_t>(buffer)];
        --buf.access[static_cast<size_t>(elem)].async_readers;
        on_shared_read(m, *p.op, buffer, g * kGroup, buf, elem);
      }
    }
    queue.resize(kept);
  }
  for (size_t i = 0; i < in.out.size(); ++i)
    copy_slot_masked(in.out[i], in.in[i], mask.on, m.threads);
}

/// setmaxnreg: each warpgroup that executes it (converged) moves its registers to or from the
/// workgroup's pool; a raise the pool cannot meet waits for another role to lower its limit, and
/// is a fault when none can (a GPU waits forever).
void setmaxnreg(Machine& m, const Instr& in, const Mask& mask) {
  const int64_t want = in.op->int_attr(attr::kRegisters);
  const bool inc = in.op->int_attr(attr::kIncrease) != 0;
  for (uint32_t g = 0; g * kGroup < m.threads; ++g) {
    if (!whole_warpgroup(m, in, mask, g)) continue;
    int64_t& have = m.wgmma.registers[g];
    const int thread = static_cast<int>(g * kGroup);
    if (inc ? want < have : want > have)
      m.fault(*in.op, thread,
              std::string("setmaxnreg.") + (inc ? "inc below" : "dec above") +
                  " the warpgroup's register limit",
              ": warpgroup " + std::to_string(g) + " holds " + std::to_string(have) +
                  " per thread, the op asks for " + std::to_string(want));
    const int64_t delta = (want - have) * kGroup;  // > 0: taken from the pool
    while (delta > m.wgmma.register_pool) {
      const std::string what = std::to_string(delta) + " registers in the pool (warpgroup " +
                               std::to_string(g) + " raising " + std::to_string(have) + " to " +
                               std::to_string(want) + " per thread), which holds " +
                               std::to_string(m.wgmma.register_pool);
      if (!wait_for_other_roles(m, *in.op, what))
        m.fault(*in.op, thread, "setmaxnreg.inc that can never complete (a GPU hangs)",
                ": it waits for " + what);
    }
    m.wgmma.register_pool -= delta;
    have = want;
    if (delta < 0) ++m.tma.changes;  // a raise elsewhere may now go on
  }
}

/// fence_async_shared: the thread's earlier shared writes become visible to wgmma.
void fence_async_shared(Machine& m, const Instr&, const Mask& mask) {
  if (m.wgmma.unfenced.empty()) return;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    for (const auto& [buffer, elem] : m.wgmma.unfenced[t]) {
      SharedAccess& a =
          m.shared.buffers[static_cast<size_t>(buffer)].access[static_cast<size_t>(elem)];
      if (a.unfenced == static_cast<int32_t>(t)) a.unfenced = -1;
    }
    m.wgmma.unfenced[t].clear();
  }
}

}  // namespace

void WgmmaState::begin_workgroup(uint32_t threads, SharedMemory& shared, int64_t maxnreg) {
  // A workgroup that ended with wgmma in flight leaves no readers behind.
  for (const auto& queue : pending)
    for (const PendingWgmma& p : queue)
      for (const auto& [buffer, elem] : p.reads)
        --shared.buffers[static_cast<size_t>(buffer)]
              .access[static_cast<size_t>(elem)]
              .async_readers;
  for (const auto& list : unfenced)
    for (const auto& [buffer, elem] : list)
      shared.buffers[static_cast<size_t>(buffer)].access[static_cast<size_t>(elem)].unfenced = -1;
  committed.assign(threads / kGroup + 1, 0);
  pending.assign(threads / kGroup + 1, {});
  const bool track = used && !shared.buffers.empty() && !shared.buffers[0].access.empty();
  unfenced.assign(track ? threads : 0, {});
  registers.assign(threads / kGroup + 1, maxnreg);
  register_pool = 0;
}

Handler select_wgmma(Instr& in, Machine& m) {
  TESSERA_CHECK(m.threads % kGroup == 0, "'", in.op->name(), "' in a workgroup of ", m.threads,
                " threads");
  switch (in.op->kind) {
    case ir::OpKind::Wgmma:
      m.wgmma.used = true;
      return &wgmma;
    case ir::OpKind::WgmmaFence:
      return &wgmma_fence;
    case ir::OpKind::WgmmaCommit:
      return &wgmma_commit;
    case ir::OpKind::WgmmaWait:
      in.imm[0] = in.op->int_attr(attr::kPending);
      return &wgmma_wait;
    case ir::OpKind::FenceAsyncShared:
      return &fence_async_shared;
    case ir::OpKind::SetMaxNReg:
      return &setmaxnreg;
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
