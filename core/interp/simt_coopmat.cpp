/// \file The cooperative-matrix ops in the SIMT interpreter (core/ir/simt.h). A matrix belongs to a
/// group of S lanes (a subgroup, or for a workgroup-scope matrix the whole workgroup); the
/// interpreter's own (opaque) distribution gives element e = r * cols + c to the group's lane
/// e % S, in its slot's element e / S, so a matrix value's slot holds ceil(rows * cols / S)
/// elements per thread. Loads and stores check every element's index and take part in race
/// detection as each element's access by the lane that holds it; mul_add multiplies as `mma` does
/// (exact products, one f32 rounding per addition, k increasing; i8 products and sums wrap).
#include <cstring>
#include <vector>

#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"
#include "core/support/float16.h"

namespace tessera::interp::simt {
namespace {

/// Elements of a matrix of `type` each lane of its group of `group` lanes holds.
int64_t per_lane(const ir::Type& type, uint32_t group) {
  return (type.shape[0] * type.shape[1] + group - 1) / group;
}

/// The lanes that own a matrix of `type` together: a subgroup, or the workgroup.
uint32_t group_of(const Machine& m, const ir::Type& type) {
  return type.workgroup ? m.threads : m.subgroup;
}

std::string group_name(const Machine& m, uint32_t group) {
  return group == m.subgroup ? "subgroup" : "workgroup";
}

/// Does the group of `group` lanes from `base` (its first thread) run the op? Every lane or
/// none: these ops are collective; a uniform index too, for loads and stores.
bool whole_group(const Machine& m, const Instr& in, const Mask& mask, uint32_t base,
                 uint32_t group) {
  uint32_t active = 0;
  for (uint32_t l = 0; l < group; ++l) active += mask.on[base + l];
  if (active == 0) return false;
  if (active == group) return true;
  uint32_t absent = 0;
  while (mask.on[base + absent]) ++absent;
  m.fault(*in.op, -1, std::string(in.op->name()) + " in divergent control flow",
          ": " + std::to_string(active) + " of " + std::to_string(group) + " lanes of " +
              group_name(m, group) + " " + std::to_string(base / group) + " execute it (lane " +
              std::to_string(absent) + " does not)");
}

/// Operand `i` (i32) of the group from `base`: the same in every lane.
int64_t uniform_i32(const Machine& m, const Instr& in, uint32_t base, uint32_t group, size_t i) {
  const int32_t* index = in.in[i].as<int32_t>();
  for (uint32_t l = 1; l < group; ++l)
    if (index[base + l] != index[base])
      m.fault(*in.op, static_cast<int>(base + l),
              std::string(in.op->name()) + " with a non-uniform " +
                  (i == 0 ? std::string("index") : "operand #" + std::to_string(i)),
              ": lane " + std::to_string(l) + " gives " + std::to_string(index[base + l]) +
                  ", lane 0 " + std::to_string(index[base]));
  return index[base];
}

/// coopmat_load / coopmat_store of the matrix of `type`: element e's shared index, checked.
/// imm[0] = buffer, imm[1] = stride (negative: column-major).
struct Access {
  int64_t buffer, stride;
  bool col_major;
  int64_t cols;
  int64_t index_of(int64_t first, int64_t e) const {
    const int64_t r = e / cols, c = e % cols;
    return col_major ? first + c * stride + r : first + r * stride + c;
  }
};

Access access_of(const Instr& in, const ir::Type& type) {
  return {in.imm[0], in.imm[1] < 0 ? -in.imm[1] : in.imm[1], in.imm[1] < 0, type.shape[1]};
}

void check_element(const Machine& m, const Instr& in, const SharedArray& buf, const Access& a,
                   uint32_t t, int64_t first, int64_t i, const char* what) {
  const int64_t align = std::max<int64_t>(1, 16 / buf.elem_bytes);
  if (first % align)
    m.fault(*in.op, static_cast<int>(t), "misaligned " + std::string(in.op->name()),
            ": element " + std::to_string(first) + " of shared buffer " + std::to_string(a.buffer) +
                " is not on a 16-byte boundary");
  if (i < 0 || i >= buf.count)
    m.fault(*in.op, static_cast<int>(t), "out-of-bounds " + std::string(in.op->name()),
            std::string(": ") + what + " element " + std::to_string(i) + " of shared buffer " +
                std::to_string(a.buffer) + " (" + std::to_string(buf.count) + " elements)");
}

/// coopmat_load (kStore false) or coopmat_store: each element of each running subgroup's matrix
/// moves between the lane that holds it and its checked shared index.
template <bool kStore>
void coop_access(Machine& m, const Instr& in, const Mask& mask) {
  const ir::Type& type = kStore ? in.op->operand(1)->type : in.op->result()->type;
  const Slot& share = kStore ? in.in[1] : in.out[0];
  const Access a = access_of(in, type);
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(a.buffer)];
  const int64_t n = type.shape[0] * type.shape[1];
  const int eb = buf.elem_bytes;
  const uint32_t group = group_of(m, type);
  for (uint32_t base = 0; base < m.threads; base += group) {
    if (!whole_group(m, in, mask, base, group)) continue;
    const int64_t first = uniform_i32(m, in, base, group, 0);
    for (int64_t e = 0; e < n; ++e) {
      const uint32_t t = base + static_cast<uint32_t>(e % group);
      const int64_t i = a.index_of(first, e);
      check_element(m, in, buf, a, t, first, i, kStore ? "writes" : "reads");
      std::byte* lane = share.data + size_t{t} * share.bytes + (e / group) * eb;
      std::byte* shared = buf.data.data() + i * eb;
      if constexpr (kStore) {
        if (!buf.access.empty()) on_shared_write(m, *in.op, a.buffer, t, buf, i, shared, lane);
        std::memcpy(shared, lane, static_cast<size_t>(eb));
      } else {
        if (!buf.access.empty()) on_shared_read(m, *in.op, a.buffer, t, buf, i);
        std::memcpy(lane, shared, static_cast<size_t>(eb));
      }
    }
  }
}

/// coopmat_fill: every element of every active thread's share.
void coop_fill(Machine& m, const Instr& in, const Mask& mask) {
  const int eb = in.in[0].bytes;
  const int64_t per = in.out[0].bytes / eb;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    for (int64_t j = 0; j < per; ++j)
      std::memcpy(in.out[0].data + size_t{t} * in.out[0].bytes + j * eb,
                  in.in[0].data + size_t{t} * eb, static_cast<size_t>(eb));
  }
}

/// coopmat_mul_add with A and B of dtype In.
template <class In>
void coop_mul_add(Machine& m, const Instr& in, const Mask& mask) {
  using S = typename In::S;
  const ir::Type &ta = in.op->operand(0)->type, &tc = in.op->operand(2)->type;
  const int64_t M = ta.shape[0], K = ta.shape[1], N = tc.shape[1];
  const uint32_t sg = group_of(m, tc);
  std::vector<double> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
  auto element = [&](const Slot& s, uint32_t base, int64_t e, int eb) {
    return s.data + size_t{base + static_cast<uint32_t>(e % sg)} * s.bytes + (e / sg) * eb;
  };
  auto input = [&](const Slot& s, uint32_t base, int64_t e) -> double {
    S x;
    std::memcpy(&x, element(s, base, e, sizeof(S)), sizeof(S));
    if constexpr (In::kFloat)
      return In::to_double(x);
    else
      return static_cast<double>(x);
  };
  for (uint32_t base = 0; base < m.threads; base += sg) {
    if (!whole_group(m, in, mask, base, sg)) continue;
    for (int64_t e = 0; e < M * K; ++e) a[static_cast<size_t>(e)] = input(in.in[0], base, e);
    for (int64_t e = 0; e < K * N; ++e) b[static_cast<size_t>(e)] = input(in.in[1], base, e);
    for (int64_t e = 0; e < M * N; ++e) {
      const int64_t r = e / N, c = e % N;
      if constexpr (In::kFloat) {
        float cv;
        std::memcpy(&cv, element(in.in[2], base, e, 4), 4);
        double acc = cv;
        for (int64_t k = 0; k < K; ++k)
          acc = static_cast<float>(num::odd_sum(
              acc, a[static_cast<size_t>(r * K + k)] * b[static_cast<size_t>(k * N + c)]));
        const float out = static_cast<float>(acc);
        std::memcpy(element(in.out[0], base, e, 4), &out, 4);
      } else {
        int32_t cv;
        std::memcpy(&cv, element(in.in[2], base, e, 4), 4);
        uint32_t acc = static_cast<uint32_t>(cv);
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<uint32_t>(static_cast<int32_t>(a[static_cast<size_t>(r * K + k)]) *
                                       static_cast<int32_t>(b[static_cast<size_t>(k * N + c)]));
        const int32_t out = static_cast<int32_t>(acc);
        std::memcpy(element(in.out[0], base, e, 4), &out, 4);
      }
    }
  }
}

/// coopmat_load_tensor: the workgroup's matrix read from a 2-D tensor in global memory, each
/// element checked and copied into the lane that holds it; outside the tensor zero (imm[0] = 1)
/// or a fault (imm[0] = 0: the fast path's promise broken).
void coop_load_tensor(Machine& m, const Instr& in, const Mask& mask) {
  const ir::Type& type = in.op->result()->type;
  const int eb = ir::dtype_bytes(type.dtype);
  const int64_t rows = type.shape[0], cols = type.shape[1];
  const uint32_t group = group_of(m, type);
  const Slot& out = in.out[0];
  for (uint32_t base = 0; base < m.threads; base += group) {
    if (!whole_group(m, in, mask, base, group)) continue;
    const uint64_t address = in.in[0].as<uint64_t>()[base];
    for (uint32_t l = 1; l < group; ++l)
      if (in.in[0].as<uint64_t>()[base + l] != address)
        m.fault(*in.op, static_cast<int>(base + l), "coopmat_load_tensor with a non-uniform base",
                ": lane " + std::to_string(l) + " differs from lane 0");
    int64_t v[6];
    for (size_t i = 0; i < 6; ++i) v[i] = uniform_i32(m, in, base, group, i + 1);
    for (int64_t e = 0; e < rows * cols; ++e) {
      const uint32_t t = base + static_cast<uint32_t>(e % group);
      std::byte* lane = out.data + size_t{t} * out.bytes + (e / group) * eb;
      // The coordinates wrap in 32 bits, as the tensor layout's unsigned offsets do.
      const int32_t i = static_cast<int32_t>(static_cast<uint32_t>(v[4]) + e / cols);
      const int32_t j = static_cast<int32_t>(static_cast<uint32_t>(v[5]) + e % cols);
      if (i < 0 || i >= v[0] || j < 0 || j >= v[1]) {
        if (!in.imm[0])
          m.fault(*in.op, static_cast<int>(t), "coopmat_load_tensor outside the tensor",
                  ": element (" + std::to_string(e / cols) + ", " + std::to_string(e % cols) +
                      ") is the tensor's (" + std::to_string(i) + ", " + std::to_string(j) +
                      ") of [" + std::to_string(v[0]) + ", " + std::to_string(v[1]) +
                      "] without clamp_zero");
        std::memset(lane, 0, static_cast<size_t>(eb));
        continue;
      }
      const uint64_t at =
          address + static_cast<uint64_t>((int64_t{i} * v[2] + int64_t{j} * v[3]) * eb);
      if (auto bad = check_access(m.memory, "load", at, eb, eb))
        m.fault(*in.op, static_cast<int>(t), bad->what, bad->detail);
      std::memcpy(lane, reinterpret_cast<const std::byte*>(at), static_cast<size_t>(eb));
    }
  }
}

}  // namespace

int coopmat_slot_bytes(const ir::Type& type, uint32_t subgroup, uint32_t threads) {
  return static_cast<int>(per_lane(type, type.workgroup ? threads : subgroup)) *
         ir::dtype_bytes(type.dtype);
}

Handler select_coopmat(Instr& in) {
  switch (in.op->kind) {
    case ir::OpKind::CoopMatFill:
      return &coop_fill;
    case ir::OpKind::CoopMatLoad: {
      ir::CoopMatLoadOp op(in.op);
      in.imm[0] = op.buffer();
      in.imm[1] = op.col_major() ? -op.stride() : op.stride();
      return &coop_access<false>;
    }
    case ir::OpKind::CoopMatStore: {
      ir::CoopMatStoreOp op(in.op);
      in.imm[0] = op.buffer();
      in.imm[1] = op.col_major() ? -op.stride() : op.stride();
      return &coop_access<true>;
    }
    case ir::OpKind::CoopMatLoadTensor:
      in.imm[0] = ir::CoopMatLoadTensorOp(in.op).clamp_zero() ? 1 : 0;
      return &coop_load_tensor;
    case ir::OpKind::CoopMatMulAdd:
      switch (in.op->operand(0)->type.dtype) {
        case ir::DType::f16:
          return &coop_mul_add<DT<ir::DType::f16>>;
        case ir::DType::bf16:
          return &coop_mul_add<DT<ir::DType::bf16>>;
        case ir::DType::i8:
          return &coop_mul_add<DT<ir::DType::i8>>;
        default:
          return nullptr;
      }
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
