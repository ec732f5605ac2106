/// \file Shared memory in the SIMT interpreter: the workgroup's buffers (poisoned at the start of
/// every workgroup, as GPUs do not clear them), shared_load/shared_store with bounds and width
/// checks, and the race detector.
///
/// Lock-step execution runs every thread's store before any thread's later load, so a missing
/// barrier never shows up as a wrong value here; the detector reports it instead. Each element
/// remembers, for the current barrier interval (epoch), its last writer and up to two readers:
/// a read of another thread's write, a write over another thread's read, or a write of a
/// different value over another thread's write, all without a barrier between, is a race on a GPU
/// (the threads may run in either order) and a DeviceFault here. An mbarrier phase orders too:
/// what its arriving threads did before they arrived comes before what a thread that waited on it
/// does after (SyncClocks), which is how the roles of a warp_specialize hand stages over.
#include <algorithm>
#include <cstring>

#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

std::string element_name(int64_t buffer, int64_t elem) {
  return ir::shared_buffer_attr(buffer) + "[" + std::to_string(elem) + "]";
}

[[noreturn]] void race(const Machine& m, const ir::Op& op, uint32_t thread, std::string_view verb,
                       int64_t buffer, int64_t elem, std::string_view past, int other,
                       const ir::Op* other_op) {
  fail(ErrorKind::DeviceFault, "shared-memory race in kernel '", m.fn.name, "' at ", op.loc.str(),
       ": thread ", thread, " ", verb, " ", element_name(buffer, elem), " ", past, " by thread ",
       other, " at ", other_op->loc.str(), " with no barrier between (program (", m.pid[0], ", ",
       m.pid[1], ", ", m.pid[2], "))");
}

}  // namespace

void on_shared_read(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                    SharedArray& buf, int64_t elem) {
  SharedAccess& a = buf.access[static_cast<size_t>(elem)];
  const uint32_t epoch = m.shared.epoch;
  const auto thread = static_cast<int32_t>(t);
  if (a.write_epoch == epoch && a.writer != thread && !m.sync.ordered(t, a.writer, a.write_clock))
    race(m, op, t, "reads", buffer, elem, "written", a.writer, a.write_op);
  const uint32_t now = m.sync.now(t);
  if (a.read_epoch != epoch) {
    a.read_epoch = epoch;
    a.reader = thread;
    a.reader2 = -1;
    a.read_op = a.read_op2 = &op;
    a.read_clock = now;
  } else if (a.reader == thread) {
    a.read_clock = now;
  } else if (a.reader2 < 0 || a.reader2 == thread) {
    a.reader2 = thread;
    a.read_op2 = &op;
    a.read_clock2 = now;
  }
}

void on_async_write(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                    const SharedArray& buf, int64_t elem) {
  const SharedAccess& a = buf.access[static_cast<size_t>(elem)];
  const auto thread = static_cast<int32_t>(t);
  if (a.async_readers > 0)
    fail(ErrorKind::DeviceFault, "shared-memory race in kernel '", m.fn.name, "' at ", op.loc.str(),
         ": thread ", t, " writes ", element_name(buffer, elem), " while the ", a.async_op->name(),
         " at ", a.async_op->loc.str(), " that reads it is in flight (no ",
         a.async_op->kind == ir::OpKind::Wgmma ? "wgmma_wait" : "tma_store_wait",
         " retired it; program (", m.pid[0], ", ", m.pid[1], ", ", m.pid[2], "))");
  if (a.read_epoch == m.shared.epoch) {
    if (a.reader != thread && !m.sync.ordered(t, a.reader, a.read_clock))
      race(m, op, t, "writes", buffer, elem, "read", a.reader, a.read_op);
    if (a.reader2 >= 0 && a.reader2 != thread && !m.sync.ordered(t, a.reader2, a.read_clock2))
      race(m, op, t, "writes", buffer, elem, "read", a.reader2, a.read_op2);
  }
}

void on_shared_write(Machine& m, const ir::Op& op, int64_t buffer, uint32_t t, SharedArray& buf,
                     int64_t elem, const std::byte* old, const std::byte* bytes) {
  SharedAccess& a = buf.access[static_cast<size_t>(elem)];
  const uint32_t epoch = m.shared.epoch;
  const auto thread = static_cast<int32_t>(t);
  on_async_write(m, op, buffer, t, buf, elem);
  if (a.write_epoch == epoch && a.writer != thread &&
      std::memcmp(old, bytes, buf.elem_bytes) != 0 && !m.sync.ordered(t, a.writer, a.write_clock))
    race(m, op, t, "writes", buffer, elem, "written", a.writer, a.write_op);
  a.write_epoch = epoch;
  a.writer = thread;
  a.write_op = &op;
  a.write_clock = m.sync.now(t);
  if (!m.wgmma.unfenced.empty()) {  // a generic-proxy write wgmma may not see before a fence
    a.unfenced = thread;
    m.wgmma.unfenced[t].push_back({buffer, elem});
  }
}

namespace {

[[noreturn]] void bad_index(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                            std::string_view access, const SharedArray& buf, int64_t i, int width) {
  const std::string name = ir::shared_buffer_attr(buffer);
  if (i < 0 || i + width > buf.count) {
    const std::string range =
        width == 1 ? std::to_string(i) : std::to_string(i) + ".." + std::to_string(i + width - 1);
    m.fault(
        op, static_cast<int>(t), "out-of-bounds shared " + std::string(access),
        ": " + name + "[" + range + "] is outside its " + std::to_string(buf.count) + " elements");
  }
  m.fault(op, static_cast<int>(t), "misaligned shared " + std::string(access),
          ": index " + std::to_string(i) + " of " + name + " is not a multiple of width " +
              std::to_string(width));
}

int64_t checked_index(const Machine& m, const Instr& in, uint32_t t, std::string_view access,
                      const SharedArray& buf, int32_t index, int width) {
  return checked_shared_index(m, *in.op, in.imm[0], t, access, buf, index, width);
}

}  // namespace

int64_t checked_shared_index(const Machine& m, const ir::Op& op, int64_t buffer, uint32_t t,
                             std::string_view access, const SharedArray& buf, int32_t index,
                             int width) {
  const int64_t i = index;
  if (i < 0 || i + width > buf.count || i % width != 0)
    bad_index(m, op, buffer, t, access, buf, i, width);
  return i;
}

namespace {

/// shared_load %index {buffer = imm[0]}: width results of N bytes.
template <int N>
void shared_load(Machine& m, const Instr& in, const Mask& mask) {
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(in.imm[0])];
  const int32_t* index = in.in[0].as<int32_t>();
  const int width = static_cast<int>(in.out.size());
  const bool is_bool = buf.dtype == ir::DType::i1;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const int64_t i = checked_index(m, in, t, "load", buf, index[t], width);
    for (int w = 0; w < width; ++w) {
      if (!buf.access.empty()) on_shared_read(m, *in.op, in.imm[0], t, buf, i + w);
      std::byte* dst = in.out[static_cast<size_t>(w)].data + t * N;
      std::memcpy(dst, buf.data.data() + (i + w) * N, N);
      if (is_bool) *dst = static_cast<std::byte>(*dst != std::byte{0});
    }
  }
}

/// shared_store %index, %v... {buffer = imm[0]}.
template <int N>
void shared_store(Machine& m, const Instr& in, const Mask& mask) {
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(in.imm[0])];
  const int32_t* index = in.in[0].as<int32_t>();
  const int width = static_cast<int>(in.in.size()) - 1;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const int64_t i = checked_index(m, in, t, "store", buf, index[t], width);
    for (int w = 0; w < width; ++w) {
      std::byte* dst = buf.data.data() + (i + w) * N;
      const std::byte* src = in.in[static_cast<size_t>(1 + w)].data + t * N;
      if (!buf.access.empty()) on_shared_write(m, *in.op, in.imm[0], t, buf, i + w, dst, src);
      std::memcpy(dst, src, N);
    }
  }
}

}  // namespace

void SharedMemory::init(const ir::Function& fn, bool check_races) {
  for (const ir::SharedBuffer& b : ir::shared_buffers(fn)) {
    SharedArray a;
    a.dtype = b.dtype;
    a.count = b.count;
    a.elem_bytes = ir::dtype_bytes(b.dtype);
    a.data.resize(static_cast<size_t>(b.bytes()));
    if (check_races) a.access.resize(static_cast<size_t>(b.count));
    buffers.push_back(std::move(a));
  }
}

void SyncClocks::init(const ir::Function& fn, uint32_t n, bool check_races) {
  threads = n;
  on = false;
  if (!check_races) return;
  ir::walk(fn.body, [&](const ir::Op* op) { on = on || op->kind == ir::OpKind::MbarrierArriveTx; });
}

void SyncClocks::begin_workgroup() {
  if (!on) return;
  own.assign(threads, 1);
  seen.assign(size_t{threads} * threads, 0);
}

void SyncClocks::meet(const uint8_t* on) {
  std::vector<uint32_t> joined(threads, 0);
  for (uint32_t u = 0; u < threads; ++u) {
    if (!on[u]) continue;
    const uint32_t* row = seen.data() + size_t{u} * threads;
    for (uint32_t v = 0; v < threads; ++v) joined[v] = std::max(joined[v], row[v]);
    joined[u] = std::max(joined[u], own[u]++);
  }
  for (uint32_t t = 0; t < threads; ++t)
    if (on[t]) std::copy(joined.begin(), joined.end(), seen.begin() + size_t{t} * threads);
}

void SharedMemory::begin_workgroup() {
  for (SharedArray& b : buffers) std::memset(b.data.data(), 0xCD, b.data.size());
  barrier();  // accesses of the previous workgroup belong to an older epoch
}

void SharedMemory::barrier() {
  if (epoch == UINT32_MAX) {  // wrapped: forget every access, so old epochs cannot match
    for (SharedArray& b : buffers) std::fill(b.access.begin(), b.access.end(), SharedAccess{});
    epoch = 0;
  }
  ++epoch;
}

Handler select_shared(Instr& in, const SharedMemory& shared) {
  const ir::Op& op = *in.op;
  in.imm[0] = op.int_attr(attr::kBuffer);
  const bool load = op.kind == ir::OpKind::SharedLoad;
  const int bytes = load ? in.out.at(0).bytes : in.in.at(1).bytes;
  TESSERA_CHECK(in.imm[0] >= 0 && static_cast<size_t>(in.imm[0]) < shared.buffers.size() &&
                    shared.buffers[static_cast<size_t>(in.imm[0])].elem_bytes == bytes,
                "'", op.name(), "' of an undeclared buffer or another dtype");
  Handler h = nullptr;
  with_elem_size(bytes, [&](auto size) {
    constexpr int N = decltype(size)::value;
    h = load ? &shared_load<N> : &shared_store<N>;
  });
  return h;
}

}  // namespace tessera::interp::simt
