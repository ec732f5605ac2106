/// \file The matrix ops in the SIMT interpreter: `mma` gathers the 32 lanes' fragments into
/// matrices, multiplies them as the tile interpreter's `dot` does (exact products, one rounding
/// per addition, k increasing) and scatters D back; `ldmatrix` moves 8x16-byte shared rows into
/// the lanes PTX names; cp_async copies land only when their group's cp_async_wait retires them
/// (checked as a write when issued, so overwriting data other threads still read is a race), so a
/// missing wait reads the poisoned shared memory instead of the copied data.
#include <cstring>

#include "core/interp/numeric.h"
#include "core/interp/simt_exec.h"
#include "core/support/float16.h"

namespace tessera::interp::simt {
namespace {

constexpr uint32_t kWarp = 32;

/// Every subgroup of 32 lanes with an active lane must be entirely active: these ops are
/// warp-collective. Returns whether subgroup `base` runs.
bool whole_warp(const Machine& m, const Instr& in, const Mask& mask, uint32_t base) {
  uint32_t active = 0;
  for (uint32_t l = 0; l < kWarp; ++l) active += mask.on[base + l];
  if (active == 0) return false;
  if (active == kWarp) return true;
  uint32_t absent = 0;
  while (mask.on[base + absent]) ++absent;
  m.fault(*in.op, -1, std::string(in.op->name()) + " in divergent control flow",
          ": " + std::to_string(active) + " of 32 lanes of subgroup " +
              std::to_string(base / kWarp) + " execute it (lane " + std::to_string(absent) +
              " does not)");
}

// --- mma ------------------------------------------------------------------------------------

/// mma with A/B values of dtype In (imm[0] = the index of its shape in ir::mma_shapes()).
template <class In>
void mma(Machine& m, const Instr& in, const Mask& mask) {
  using S = typename In::S;
  const ir::MmaShape& shape = ir::mma_shapes()[static_cast<size_t>(in.imm[0])];
  const int na = shape.a_count(), nb = shape.b_count(), k = shape.k;
  const bool tf32 = shape.a == "tf32";
  double a[16][32], b[32][8];
  for (uint32_t base = 0; base < m.threads; base += kWarp) {
    if (!whole_warp(m, in, mask, base)) continue;
    auto value = [&](int operand, uint32_t lane) -> double {
      const S x = in.in[static_cast<size_t>(operand)].as<S>()[base + lane];
      if constexpr (In::kFloat) {
        const double d = In::to_double(x);
        return tf32 ? round_to_tf32(static_cast<float>(d)) : d;
      } else {
        return static_cast<double>(x);
      }
    };
    for (uint32_t lane = 0; lane < kWarp; ++lane) {
      for (int i = 0; i < na; ++i) {
        ir::MatrixCoord c = ir::mma_a_coord(shape, static_cast<int>(lane), i);
        a[c.row][c.col] = value(i, lane);
      }
      for (int i = 0; i < nb; ++i) {
        ir::MatrixCoord c = ir::mma_b_coord(shape, static_cast<int>(lane), i);
        b[c.row][c.col] = value(na + i, lane);
      }
    }
    for (uint32_t lane = 0; lane < kWarp; ++lane) {
      for (int i = 0; i < ir::MmaShape::kCCount; ++i) {
        ir::MatrixCoord c = ir::mma_c_coord(static_cast<int>(lane), i);
        const size_t slot = static_cast<size_t>(na + nb + i);
        const uint32_t t = base + lane;
        if constexpr (In::kFloat) {
          double acc = in.in[slot].as<float>()[t];
          for (int kk = 0; kk < k; ++kk)
            acc = static_cast<float>(num::odd_sum(acc, a[c.row][kk] * b[kk][c.col]));
          in.out[static_cast<size_t>(i)].as<float>()[t] = static_cast<float>(acc);
        } else {
          uint32_t acc = static_cast<uint32_t>(in.in[slot].as<int32_t>()[t]);
          for (int kk = 0; kk < k; ++kk)
            acc += static_cast<uint32_t>(static_cast<int32_t>(a[c.row][kk]) *
                                         static_cast<int32_t>(b[kk][c.col]));
          in.out[static_cast<size_t>(i)].as<int32_t>()[t] = static_cast<int32_t>(acc);
        }
      }
    }
  }
}

Handler select_mma(Instr& in) {
  const ir::MmaShape& shape = ir::MmaOp(in.op).shape();
  in.imm[0] = &shape - ir::mma_shapes().data();
  switch (shape.in) {
    case ir::DType::f16:
      return &mma<DT<ir::DType::f16>>;
    case ir::DType::bf16:
      return &mma<DT<ir::DType::bf16>>;
    case ir::DType::f32:
      return &mma<DT<ir::DType::f32>>;
    case ir::DType::i8:
      return &mma<DT<ir::DType::i8>>;
    default:
      return nullptr;
  }
}

// --- ldmatrix -------------------------------------------------------------------------------

/// ldmatrix %index {buffer = imm[0]}; imm[1] = count, plus 8 when transposed. E-byte elements.
template <int E>
void ldmatrix(Machine& m, const Instr& in, const Mask& mask) {
  const int64_t buffer = in.imm[0];
  const int count = static_cast<int>(in.imm[1] & 7);
  const bool trans = (in.imm[1] & 8) != 0;
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(buffer)];
  const int32_t* index = in.in[0].as<int32_t>();
  constexpr int kRow = 16 / E, kPer = 4 / E;  // elements per row, per lane and matrix
  int64_t rows[4][8];
  for (uint32_t base = 0; base < m.threads; base += kWarp) {
    if (!whole_warp(m, in, mask, base)) continue;
    for (int q = 0; q < count; ++q)
      for (int r = 0; r < 8; ++r) {
        const uint32_t t = base + static_cast<uint32_t>(q * 8 + r);
        rows[q][r] = checked_shared_index(m, *in.op, buffer, t, "load", buf, index[t], kRow);
      }
    for (uint32_t lane = 0; lane < kWarp; ++lane) {
      const uint32_t t = base + lane;
      for (int q = 0; q < count; ++q)
        for (int j = 0; j < kPer; ++j) {
          // Non-transposed: row lane / 4, bytes 4 * (lane % 4)..; transposed (E = 2): column
          // lane / 4 of row 2 * (lane % 4) + j.
          const int64_t elem = trans ? rows[q][2 * (lane % 4) + j] + lane / 4
                                     : rows[q][lane / 4] + (lane % 4) * kPer + j;
          if (!buf.access.empty()) on_shared_read(m, *in.op, buffer, t, buf, elem);
          std::memcpy(in.out[static_cast<size_t>(q * kPer + j)].data + size_t{t} * E,
                      buf.data.data() + elem * E, E);
        }
    }
  }
}

Handler select_ldmatrix(Instr& in, const SharedMemory& shared) {
  ir::LdMatrixOp ld(in.op);
  in.imm[0] = ld.buffer();
  in.imm[1] = ld.count() | (ld.trans() ? 8 : 0);
  TESSERA_CHECK(in.imm[0] >= 0 && static_cast<size_t>(in.imm[0]) < shared.buffers.size(),
                "'ldmatrix' of an undeclared buffer");
  switch (shared.buffers[static_cast<size_t>(in.imm[0])].elem_bytes) {
    case 1:
      return &ldmatrix<1>;
    case 2:
      return &ldmatrix<2>;
    case 4:
      return &ldmatrix<4>;
    default:
      return nullptr;
  }
}

// --- cp_async -------------------------------------------------------------------------------

/// cp_async %index, %ptr, %pred {buffer = imm[0]}: reads global memory now (a faulting address
/// faults here), checks the destination as a write now, and queues the bytes in the thread's
/// open group.
void cp_async(Machine& m, const Instr& in, const Mask& mask) {
  const int64_t buffer = in.imm[0];
  SharedArray& buf = m.shared.buffers[static_cast<size_t>(buffer)];
  const int32_t* index = in.in[0].as<int32_t>();
  const uint64_t* ptr = in.in[1].as<uint64_t>();
  const uint8_t* pred = in.in[2].as<uint8_t>();
  const int width = 16 / buf.elem_bytes;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    AsyncCopy copy;
    copy.group = m.async.committed[t];
    copy.buffer = buffer;
    copy.op = in.op;
    copy.index = checked_shared_index(m, *in.op, buffer, t, "store", buf, index[t], width);
    if (pred[t]) {
      if (auto bad = check_access(m.memory, "load", ptr[t], 16, 16))
        m.fault(*in.op, static_cast<int>(t), bad->what, bad->detail);
      std::memcpy(copy.bytes.data(), reinterpret_cast<const std::byte*>(ptr[t]), 16);
    }
    if (!buf.access.empty())
      for (int w = 0; w < width; ++w) {
        const int64_t e = copy.index + w;
        on_shared_write(m, *in.op, buffer, t, buf, e, buf.data.data() + e * buf.elem_bytes,
                        copy.bytes.data() + w * buf.elem_bytes);
      }
    m.async.pending[t].push_back(copy);
  }
}

void cp_async_commit(Machine& m, const Instr&, const Mask& mask) {
  for (uint32_t t = 0; t < m.threads; ++t)
    if (mask.on[t]) ++m.async.committed[t];
}

/// cp_async_wait {pending = imm[0]}: lands every copy of the thread's committed groups but the
/// newest `pending`, recording each element as written by the thread now.
void cp_async_wait(Machine& m, const Instr& in, const Mask& mask) {
  const uint64_t keep = static_cast<uint64_t>(in.imm[0]);
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    const uint64_t committed = m.async.committed[t];
    const uint64_t done = committed > keep ? committed - keep : 0;  // groups < done complete
    std::vector<AsyncCopy>& queue = m.async.pending[t];
    size_t kept = 0;
    for (AsyncCopy& c : queue) {
      if (c.group >= done) {
        queue[kept++] = c;
        continue;
      }
      SharedArray& buf = m.shared.buffers[static_cast<size_t>(c.buffer)];
      const int width = 16 / buf.elem_bytes;
      for (int w = 0; w < width; ++w) {
        std::byte* dst = buf.data.data() + (c.index + w) * buf.elem_bytes;
        const std::byte* src = c.bytes.data() + w * buf.elem_bytes;
        if (!buf.access.empty()) on_shared_write(m, *c.op, c.buffer, t, buf, c.index + w, dst, src);
        std::memcpy(dst, src, static_cast<size_t>(buf.elem_bytes));
      }
    }
    queue.resize(kept);
  }
}

}  // namespace

Handler select_matrix(Instr& in, const SharedMemory& shared) {
  switch (in.op->kind) {
    case ir::OpKind::Mma:
      return select_mma(in);
    case ir::OpKind::LdMatrix:
      return select_ldmatrix(in, shared);
    case ir::OpKind::CpAsync:
      in.imm[0] = ir::CpAsyncOp(in.op).buffer();
      TESSERA_CHECK(in.imm[0] >= 0 && static_cast<size_t>(in.imm[0]) < shared.buffers.size(),
                    "'cp_async' of an undeclared buffer");
      return &cp_async;
    case ir::OpKind::CpAsyncCommit:
      return &cp_async_commit;
    case ir::OpKind::CpAsyncWait:
      in.imm[0] = in.op->int_attr(attr::kPending);
      return &cp_async_wait;
    default:
      return nullptr;
  }
}

}  // namespace tessera::interp::simt
