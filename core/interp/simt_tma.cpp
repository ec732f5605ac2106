/// \file The SIMT interpreter's TMA family: mbarriers with ir::MBarrier's phases, and tensor
/// copies with ir::tma_copy's zero fill and swizzle (core/ir/tma.h). A copy reads global memory
/// when issued and lands when its mbarrier is next used (arrive or wait), so that lock-step
/// threads see it exactly where a wait allows them to; a wait that cannot complete then is a
/// fault, where a GPU would hang.
#include <algorithm>
#include <cstring>
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
  }
  queue.resize(kept);
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
  }
}

/// mbarrier_arrive_tx %index, %bytes {buffer = imm[0]}: the copies in flight land first.
void mbarrier_arrive_tx(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* bytes = in.in[1].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    ir::MBarrier& b = initialized(m, in, t, key);
    land(m, key);
    if (bytes[t] < 0)
      m.fault(*in.op, static_cast<int>(t), "mbarrier_arrive_tx with negative bytes",
              ": " + std::to_string(bytes[t]));
    b.expect_tx(bytes[t]);
    if (!b.arrive())
      m.fault(*in.op, static_cast<int>(t), "an arrival the mbarrier does not expect",
              " (" + b.pending() + ")");
  }
}

/// mbarrier_wait %index, %parity {buffer = imm[0]}: every copy in flight to the mbarrier lands;
/// if the phase has still not completed, nothing else can complete it (the other threads are at
/// this op too): a GPU would hang.
void mbarrier_wait(Machine& m, const Instr& in, const Mask& mask) {
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* parity = in.in[1].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[0], index[t]);
    ir::MBarrier& b = initialized(m, in, t, key);
    land(m, key);
    if (parity[t] != 0 && parity[t] != 1)
      m.fault(*in.op, static_cast<int>(t), "mbarrier_wait with a parity other than 0 or 1",
              ": " + std::to_string(parity[t]));
    if (!b.test_wait(parity[t]))
      m.fault(*in.op, static_cast<int>(t), "mbarrier_wait that can never complete (a GPU hangs)",
              ": it waits for the phase of parity " + std::to_string(parity[t]) +
                  " of the mbarrier at element " + std::to_string(key.second) +
                  " of shared buffer " + std::to_string(key.first) + ", which has " + b.pending() +
                  " and no copy in flight");
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

/// tma_load %index, %bar, %c... {buffer = imm[0], barrier = imm[1], map}.
void tma_load(Machine& m, const Instr& in, const Mask& mask) {
  const ir::TmaLoadOp op(in.op);
  const ir::TensorMapParam map = ir::tensor_maps(m.fn).at(static_cast<size_t>(op.map()));
  ir::TmaCopy copy;
  copy.base = static_cast<uint64_t>(param_value(m, map.base_param));
  copy.elem_bytes = ir::dtype_bytes(map.dtype);
  copy.swizzle = map.swizzle;
  copy.box = map.box;
  for (int d = 0; d < map.rank(); ++d) {
    copy.dims.push_back(map_value(m, map.dims[static_cast<size_t>(d)]));
    copy.strides.push_back(map_value(m, map.strides[static_cast<size_t>(d)]) * copy.elem_bytes);
  }
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(in.imm[0])];
  const int64_t align = std::max<int64_t>(128, 8 * int64_t{copy.swizzle});
  const int32_t* index = in.in[0].as<int32_t>();
  const int32_t* bar = in.in[1].as<int32_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const Key key = barrier_key(m, in, t, in.imm[1], bar[t]);
    initialized(m, in, t, key);
    const int64_t first = int64_t{index[t]} * buf.elem_bytes;
    if (index[t] < 0 || first % align != 0 || first + copy.bytes() > buf.count * buf.elem_bytes)
      m.fault(*in.op, static_cast<int>(t), "bad TMA destination",
              ": element " + std::to_string(index[t]) + " of shared buffer " +
                  std::to_string(in.imm[0]) + " (" + std::to_string(buf.count) +
                  " elements) for a box of " + std::to_string(copy.bytes()) + " bytes at a " +
                  std::to_string(align) + "-byte boundary");
    copy.coords.clear();
    for (size_t d = 2; d < in.in.size(); ++d) copy.coords.push_back(*(in.in[d].as<int32_t>() + t));
    PendingTma p;
    p.barrier = key;
    p.buffer = in.imm[0];
    p.byte_offset = first;
    p.bytes.resize(static_cast<size_t>(copy.bytes()));
    ir::tma_copy(
        copy,
        [&](uint64_t address, std::byte* out, size_t n) {
          if (auto bad = check_access(m.memory, "load", address, static_cast<int>(n), 1))
            m.fault(*in.op, static_cast<int>(t), bad->what, bad->detail);
          std::memcpy(out, reinterpret_cast<const std::byte*>(address), n);
        },
        p.bytes.data());
    m.tma.pending.push_back(std::move(p));
  }
}

}  // namespace

Handler select_tma(Instr& in, const SharedMemory& shared) {
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
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
