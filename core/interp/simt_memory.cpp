/// \file Global memory in the SIMT interpreter: predicated vector loads and stores and scalar
/// atomics on host memory. Every access is checked first, in thread order, over its whole range
/// (so a fault names the lowest faulting thread whatever the schedule); stores and atomics then
/// land in the machine's seeded thread order, so lowering bugs whose results depend on that order
/// (two threads storing one address, float atomic sums) differ between seeds.
#include <cstring>

#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"

namespace tessera::interp::simt {
namespace {

std::byte* host(uint64_t address) {
  return reinterpret_cast<std::byte*>(address);
}

void require(const Machine& m, const Instr& in, uint32_t thread, std::string_view access,
             uint64_t address, int bytes, int64_t align) {
  if (auto bad = check_access(m.memory, access, address, bytes, static_cast<int>(align)))
    m.fault(*in.op, static_cast<int>(thread), bad->what, bad->detail);
}

/// global_load %ptr, %pred, %other... -> width results of N bytes; imm = {is i1, align}.
template <int N>
void global_load(Machine& m, const Instr& in, const Mask& mask) {
  const uint64_t* ptr = in.in[0].as<uint64_t>();
  const uint8_t* pred = in.in[1].as<uint8_t>();
  const size_t width = in.out.size();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    if (!pred[t]) {
      for (size_t w = 0; w < width; ++w)
        std::memcpy(in.out[w].data + t * N, in.in[2 + w].data + t * N, N);
      continue;
    }
    require(m, in, t, "load", ptr[t], static_cast<int>(width) * N, in.imm[1]);
    const std::byte* src = host(ptr[t]);
    for (size_t w = 0; w < width; ++w) {
      std::byte* dst = in.out[w].data + t * N;
      std::memcpy(dst, src + w * N, N);
      if (in.imm[0]) *dst = static_cast<std::byte>(*dst != std::byte{0});
    }
  }
}

/// global_store %ptr, %pred, %v...; imm[1] = align.
template <int N>
void global_store(Machine& m, const Instr& in, const Mask& mask) {
  const uint64_t* ptr = in.in[0].as<uint64_t>();
  const uint8_t* pred = in.in[1].as<uint8_t>();
  const size_t width = in.in.size() - 2;
  for (uint32_t t = 0; t < m.threads; ++t)
    if (mask.on[t] && pred[t])
      require(m, in, t, "store", ptr[t], static_cast<int>(width) * N, in.imm[1]);
  const uint32_t* order = m.schedule();
  for (uint32_t i = 0; i < m.threads; ++i) {
    const uint32_t t = order[i];
    if (!mask.on[t] || !pred[t]) continue;
    for (size_t w = 0; w < width; ++w)
      std::memcpy(host(ptr[t]) + w * N, in.in[2 + w].data + t * N, N);
  }
}

/// atomic_rmw %ptr, %val [, %mask]; imm[0] = the AtomicOp. Masked-off threads yield zero bits.
template <class T>
void atomic_rmw(Machine& m, const Instr& in, const Mask& mask) {
  using S = typename T::S;
  const uint64_t* ptr = in.in[0].as<uint64_t>();
  const S* val = in.in[1].as<S>();
  const uint8_t* lane_mask = in.in.size() > 2 ? in.in[2].as<uint8_t>() : nullptr;
  S* old = in.out[0].as<S>();
  auto on = [&](uint32_t t) { return mask.on[t] && (!lane_mask || lane_mask[t]); };
  for (uint32_t t = 0; t < m.threads; ++t) {
    old[t] = S{};
    if (on(t)) require(m, in, t, "atomic", ptr[t], sizeof(S), sizeof(S));
  }
  const auto kind = static_cast<ir::AtomicOp>(in.imm[0]);
  const uint32_t* order = m.schedule();
  for (uint32_t i = 0; i < m.threads; ++i) {
    const uint32_t t = order[i];
    if (!on(t)) continue;
    std::memcpy(&old[t], host(ptr[t]), sizeof(S));
    const S next = num::atomic_rmw<T>(kind, old[t], val[t]);
    std::memcpy(host(ptr[t]), &next, sizeof(S));
  }
}

/// atomic_cas %ptr, %cmp, %val: old == cmp bit for bit stores val; yields old.
template <int N>
void atomic_cas(Machine& m, const Instr& in, const Mask& mask) {
  const uint64_t* ptr = in.in[0].as<uint64_t>();
  const std::byte *cmp = in.in[1].data, *val = in.in[2].data;
  std::byte* old = in.out[0].data;
  for (uint32_t t = 0; t < m.threads; ++t)
    if (mask.on[t]) require(m, in, t, "atomic", ptr[t], N, N);
  const uint32_t* order = m.schedule();
  for (uint32_t i = 0; i < m.threads; ++i) {
    const uint32_t t = order[i];
    if (!mask.on[t]) continue;
    std::memcpy(old + t * N, host(ptr[t]), N);
    if (std::memcmp(old + t * N, cmp + t * N, N) == 0) std::memcpy(host(ptr[t]), val + t * N, N);
  }
}

template <template <int> class H>
Handler by_size(int bytes) {
  Handler h = nullptr;
  with_elem_size(bytes, [&](auto size) { h = &H<decltype(size)::value>::run; });
  return h;
}
template <int N>
struct LoadH {
  static void run(Machine& m, const Instr& in, const Mask& k) { global_load<N>(m, in, k); }
};
template <int N>
struct StoreH {
  static void run(Machine& m, const Instr& in, const Mask& k) { global_store<N>(m, in, k); }
};
template <int N>
struct CasH {
  static void run(Machine& m, const Instr& in, const Mask& k) { atomic_cas<N>(m, in, k); }
};

Handler select_rmw(Instr& in) {
  ir::AtomicOp kind = ir::AtomicOp::Add;
  TESSERA_CHECK(ir::parse_atomic_op(in.op->str_attr_or(attr::kOp, "add"), &kind), "bad atomic op");
  in.imm[0] = static_cast<int64_t>(kind);
  const bool bitwise =
      kind == ir::AtomicOp::And || kind == ir::AtomicOp::Or || kind == ir::AtomicOp::Xor;
  const ir::Type& type = in.op->operand(1)->type;
  return dispatch(type.is_ptr ? ir::DType::u64 : type.dtype, [&](auto t) -> Handler {
    using T = decltype(t);
    if (bitwise && T::kFloat) return nullptr;
    return &atomic_rmw<T>;
  });
}

}  // namespace

Handler select_memory(Instr& in) {
  const ir::Op& op = *in.op;
  switch (op.kind) {
    case ir::OpKind::GlobalLoad:
    case ir::OpKind::GlobalStore: {
      const ir::Type& pointee = op.operand(0)->type;
      in.imm[0] = !pointee.is_tile() && pointee.dtype == ir::DType::i1;
      in.imm[1] = op.int_attr(attr::kAlign);
      TESSERA_CHECK(in.imm[1] > 0, "'", op.name(), "' with align ", in.imm[1]);
      const int bytes = ir::dtype_bytes(pointee.dtype);
      return op.kind == ir::OpKind::GlobalLoad ? by_size<LoadH>(bytes) : by_size<StoreH>(bytes);
    }
    case ir::OpKind::AtomicRmw:
      return select_rmw(in);
    case ir::OpKind::AtomicCas:
      return by_size<CasH>(in.out[0].bytes);
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
