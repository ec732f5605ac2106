/// \file dot on cooperative matrices (DotKind::CoopMat), and the conversions between the opaque
/// layout its accumulator lives in and linear layouts. A and B go from their home layouts into
/// shared memory (each along its home's contiguous dimension, rows padded by 16 bytes so that the
/// matrix loads of one subgroup spread over the banks), each subgroup loads the matrices of its
/// block of rows of A and columns of B per k step and multiplies them into its accumulator
/// matrices. Which lane holds which element of a matrix is the target's secret, so an accumulator
/// reaches a linear layout only through shared memory: its twin (mat_twin) one matrix per
/// subgroup at a time, through one scratch matrix per subgroup.
///
/// Operands whose whole padded tiles do not fit the target's shared memory beside the
/// accumulator's conversion scratch are staged K-chunk by K-chunk: the largest power-of-two chunk
/// of K (a multiple of the matrix K) that fits, each chunk stored, multiplied and released before
/// the next (NVIDIA's Vulkan driver allows 48 KiB: 128x128 tiles at K = 128 need 69632 bytes whole,
/// 36864 in chunks of 64).
#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// The first row (`rows`) or column of this subgroup's block of the accumulator, `extent` its
/// size along that dimension: subgroup s takes block (s % wm, s / wm).
ir::Value* block_origin(Lowerer& lw, bool rows, const MatTiling& t, int64_t extent) {
  const std::string key = std::string("coopmat-origin:") + (rows ? "m" : "n") +
                          std::to_string(t.wm) + "x" + std::to_string(t.wn) + ":" +
                          std::to_string(extent);
  return lw.at_entry(key, [&] {
    ir::Value* sg = lw.subgroup_id();
    ir::Value* part = rows ? lw.and_(sg, lw.const_int(DType::i32, t.wm - 1))
                           : lw.emit(OpKind::Shr, {sg, lw.const_int(DType::i32, log2_exact(t.wm))},
                                     Type::scalar(DType::i32));
    return lw.mul(part, lw.const_int(DType::i32, extent));
  });
}

ir::Value* plus(Lowerer& lw, ir::Value* base, int64_t off) {
  return off ? lw.add(base, lw.const_int(DType::i32, off)) : base;
}

/// The part of operand tile `shape` between k and k + kc (k_dim: 1 for A, 0 for B).
ir::Shape chunk_shape(ir::Shape shape, int k_dim, int64_t kc) {
  shape[static_cast<size_t>(k_dim)] = kc;
  return shape;
}

}  // namespace

Type Lowerer::register_type(const ir::Type& tile, const Layout& l) const {
  if (!l.mats) return tile.element();
  return Type::coopmat(tile.dtype, l.mats->m, l.mats->n, ir::MatUse::Acc, l.mats->workgroup);
}

void Lowerer::lower_coopmat(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(&op);
  const ir::Value* av = dot.lhs();
  const ir::Value* bv = dot.rhs();
  const MatTiling& t = *plan.acc.mats;
  const int64_t K = av->type.shape[1];
  const DType in_t = av->type.dtype;
  const int eb = ir::dtype_bytes(in_t);
  Regs acc = regs(dot.acc(), plan.acc);
  CoopStage sa, sb;
  Layout la, lb;
  Regs ra, rb;
  int64_t kc = K;  // elements of K staged at a time (K: all of it)
  if (plan.ring) {
    // The ring has put this iteration's operands in its stage buffers already.
    const StagedDot* staged = staged_operands(*plan.ring, op);
    TESSERA_CHECK(staged, "a cooperative-matrix dot planned on a ring that feeds it nothing");
    sa = staged->ca;
    sb = staged->cb;
  } else {
    la = homes().layout_for(av), lb = homes().layout_for(bv);
    ra = regs(av, la), rb = regs(bv, lb);
    kc = coopmat_chunk(op, plan, fast_dim(la), fast_dim(lb));
    sa.tile = padded_tile(chunk_shape(av->type.shape, 1, kc), fast_dim(la), eb);
    sb.tile = padded_tile(chunk_shape(bv->type.shape, 0, kc), fast_dim(lb), eb);
    sa.buffer = sb.buffer = scratch(in_t, sa.tile.size + sb.tile.size);
    sb.base = const_int(DType::i32, sa.tile.size);
    if (kc == K) {
      store_padded(ra, la, sa.buffer, nullptr, sa.tile);
      store_padded(rb, lb, sb.buffer, sb.base, sb.tile);
    } else {
      store_chunk(ra, la, 1, kc, 0, sa.buffer, nullptr, sa.tile);
      store_chunk(rb, lb, 0, kc, 0, sb.buffer, sb.base, sb.tile);
    }
    barrier();
  }
  const int64_t rows = av->type.shape[0] / t.wm, cols = bv->type.shape[1] / t.wn;  // a block
  ir::Value* row0 = block_origin(*this, true, t, rows);
  ir::Value* col0 = block_origin(*this, false, t, cols);
  // The subgroup's first element of A (its rows, k = 0) and of B (k = 0, its columns).
  auto origin = [&](const CoopStage& s, ir::Value* outer, bool outer_is_row) {
    const bool outer_contiguous = (s.tile.fast == 0) == outer_is_row;
    ir::Value* o =
        outer_contiguous
            ? outer
            : at_entry("coopmat-scaled:" + std::to_string(reinterpret_cast<uintptr_t>(outer)) +
                           ":" + std::to_string(s.tile.stride),
                       [&] { return mul(outer, const_int(DType::i32, s.tile.stride)); });
    return s.base ? add(o, s.base) : o;
  };
  ir::Value* a0 = origin(sa, row0, true);
  ir::Value* b0 = origin(sb, col0, false);
  auto load = [&](const CoopStage& s, ir::Value* base, int64_t off, Type type) {
    std::vector<ir::Attribute> attrs = {{attr::kBuffer, int64_t{s.buffer}},
                                        {attr::kStride, s.tile.stride}};
    if (s.tile.fast == 0) attrs.push_back({attr::kColMajor, int64_t{1}});
    return b().create(OpKind::CoopMatLoad, {plus(*this, base, off)}, {type}, attrs)->result();
  };
  // Element (r, c) of a staged tile relative to its origin.
  auto at = [](const CoopStage& s, int64_t r, int64_t c) {
    return s.tile.fast == 1 ? r * s.tile.stride + c : c * s.tile.stride + r;
  };
  const int64_t reps_m = plan.acc.reps_m(), reps_n = plan.acc.reps_n(), mk = plan.mat_k;
  for (int64_t k0 = 0; k0 < K; k0 += mk) {
    const int64_t kl = k0 % kc;  // k0 within its chunk
    if (k0 && !kl) {
      // The previous chunk is read: store this one over it.
      barrier();
      store_chunk(ra, la, 1, kc, k0 / kc, sa.buffer, nullptr, sa.tile);
      store_chunk(rb, lb, 0, kc, k0 / kc, sb.buffer, sb.base, sb.tile);
      barrier();
    }
    std::vector<ir::Value*> as, bs;
    for (int64_t i = 0; i < reps_m; ++i)
      as.push_back(load(sa, a0, at(sa, i * t.m, kl), Type::coopmat(in_t, t.m, mk, ir::MatUse::A)));
    for (int64_t j = 0; j < reps_n; ++j)
      bs.push_back(load(sb, b0, at(sb, kl, j * t.n), Type::coopmat(in_t, mk, t.n, ir::MatUse::B)));
    for (int64_t i = 0; i < reps_m; ++i)
      for (int64_t j = 0; j < reps_n; ++j) {
        ir::Value*& q = acc[static_cast<size_t>(i * reps_n + j)];
        q = emit(OpKind::CoopMatMulAdd, {as[static_cast<size_t>(i)], bs[static_cast<size_t>(j)], q},
                 q->type);
      }
  }
  // The staged operands may be overwritten once every subgroup has loaded them; a ring's next
  // iteration waits at its own barrier instead.
  if (!plan.ring) barrier();
  define_tile(op.result(), plan.acc, acc);
}

int64_t Lowerer::coopmat_chunk(const ir::Op& op, const DotPlan& plan, int fast_a,
                               int fast_b) const {
  ir::DotOp dot(&op);
  const ir::Shape& as = dot.lhs()->type.shape;
  const ir::Shape& bs = dot.rhs()->type.shape;
  const DType in_t = dot.lhs()->type.dtype, acc_t = op.result()->type.dtype;
  const int eb = ir::dtype_bytes(in_t);
  const MatTiling& t = *plan.acc.mats;
  // The accumulator's conversion to a linear layout takes one matrix per subgroup (scratch of
  // its dtype), unless such a buffer is there already.
  const int64_t conversion = t.m * t.n * (threads() / t.lanes);
  int64_t bytes = 0, in_scratch = 0, acc_scratch = 0;
  for (const Buffer& b : buffers_) {
    bytes += b.count * ir::dtype_bytes(b.dtype);
    if (b.scratch && b.dtype == in_t) in_scratch = std::max(in_scratch, b.count);
    if (b.scratch && b.dtype == acc_t) acc_scratch = std::max(acc_scratch, b.count);
  }
  bytes += std::max<int64_t>(0, conversion - acc_scratch) * ir::dtype_bytes(acc_t);
  auto fits = [&](int64_t kc) {
    const int64_t count = padded_tile(chunk_shape(as, 1, kc), fast_a, eb).size +
                          padded_tile(chunk_shape(bs, 0, kc), fast_b, eb).size;
    return bytes + std::max<int64_t>(0, count - in_scratch) * eb <= target_.max_shared_bytes;
  };
  // All of K where it fits (or where chunks cannot divide it); else the largest power-of-two
  // chunk, a multiple of the matrices' K, that fits (the smallest if none does: the limit's
  // error then names the kernel).
  int64_t kc = as[1];
  if (fits(kc) || (kc & (kc - 1)) != 0 || kc % (2 * plan.mat_k) != 0) return kc;
  do kc /= 2;
  while (kc > plan.mat_k && kc % (2 * plan.mat_k) == 0 && !fits(kc));
  return kc;
}

void Lowerer::store_chunk(const Regs& r, const Layout& l, int k_dim, int64_t kc, int64_t chunk,
                          int buf, ir::Value* base, const PaddedTile& t) {
  // An element's k is its thread part plus its register part (disjoint bits): it lies in `chunk`
  // when the bits of k at and above kc's that the threads name match the chunk's (a per-thread
  // predicate; none when only registers name them) and those the registers name match too (which
  // registers this thread stores). Its place in the chunk's tile: k's bits below kc.
  const DType dt = r.front()->type.dtype;
  const int fast = t.fast;
  const int64_t w = vector_width(l, fast, ir::dtype_bytes(dt));
  const int64_t low = kc - 1, first = chunk * kc;
  int64_t thread_high = 0;  // the bits of k at or above kc's that thread bits name
  for (const DimBit& d : l.threads)
    if (d.dim == k_dim && (int64_t{1} << d.bit) > low) thread_high |= int64_t{1} << d.bit;
  ir::Value* tk = thread_coord(l, k_dim);
  ir::Value* tk_low = thread_high ? at_entry("coopmat-chunk-low:" + l.str() + ":" +
                                                 std::to_string(k_dim) + ":" + std::to_string(kc),
                                             [&] { return and_(tk, const_int(DType::i32, low)); })
                                  : tk;
  ir::Value* outer = thread_coord(l, 1 - k_dim);
  ir::Value* t_base = k_dim == fast ? add(mul(outer, const_int(DType::i32, t.stride)), tk_low)
                                    : add(mul(tk_low, const_int(DType::i32, t.stride)), outer);
  if (base) t_base = add(t_base, base);
  ir::Value* pred = owner(l);
  if (thread_high) {
    ir::Value* high = at_entry(
        "coopmat-chunk-high:" + l.str() + ":" + std::to_string(k_dim) + ":" + std::to_string(kc),
        [&] { return and_(tk, const_int(DType::i32, thread_high)); });
    ir::Value* mine = emit(OpKind::CmpEq, {high, const_int(DType::i32, first & thread_high)},
                           Type::scalar(DType::i1));
    pred = pred->def && pred->def->kind == OpKind::Constant ? mine : and_(pred, mine);
  }
  guarded(pred, [&] {
    for (int i = 0; i < l.num_regs(); i += static_cast<int>(w)) {
      std::vector<int64_t> c = l.reg_coords(i);
      int64_t& k = c[static_cast<size_t>(k_dim)];
      if ((k & ~low) != (first & ~low & ~thread_high)) continue;  // another chunk's
      k &= low;
      const int64_t off =
          c[static_cast<size_t>(1 - fast)] * t.stride + c[static_cast<size_t>(fast)];
      std::vector<ir::Value*> operands = {off ? add(t_base, const_int(DType::i32, off)) : t_base};
      operands.insert(operands.end(), r.begin() + i, r.begin() + i + w);
      b().create(OpKind::SharedStore, operands, {},
                 {{attr::kBuffer, int64_t{buf}}, {attr::kWidth, w}});
    }
  });
}

// --- opaque <-> linear ---------------------------------------------------------------------------

namespace {

/// Where one subgroup's scratch matrix starts, and this lane's part of the twin's offsets.
struct MatScratch {
  int buf = 0;
  ir::Value* region = nullptr;
  ir::Value* lane_base = nullptr;  ///< region-relative index of the lane's first element
  int64_t per_lane = 0, width = 1;
};

MatScratch mat_scratch(Lowerer& lw, const Layout& opaque, const Layout& twin, DType dt) {
  const MatTiling& t = *opaque.mats;
  const int64_t size = t.m * t.n;
  MatScratch s;
  s.buf = lw.scratch(dt, size * (lw.threads() / t.lanes));
  // One region per subgroup; a workgroup's matrix has the one region.
  s.region = t.workgroup ? lw.const_int(DType::i32, 0)
                         : lw.at_entry("coopmat-scratch:" + std::to_string(size), [&] {
                             return lw.mul(lw.subgroup_id(), lw.const_int(DType::i32, size));
                           });
  s.lane_base = lw.at_entry("coopmat-lane:" + twin.str(), [&] {
    ir::Value* r = lw.and_(lw.thread_coord(twin, 0), lw.const_int(DType::i32, t.m - 1));
    ir::Value* c = lw.and_(lw.thread_coord(twin, 1), lw.const_int(DType::i32, t.n - 1));
    return lw.add(lw.mul(r, lw.const_int(DType::i32, t.n)), c);
  });
  s.per_lane = std::max<int64_t>(1, size / t.lanes);
  s.width = std::min(s.per_lane, vector_width(twin, 1, ir::dtype_bytes(dt)));
  return s;
}

}  // namespace

Regs Lowerer::mats_to_linear(const Regs& mats, const Layout& from) {
  const Layout twin = mat_twin(from, threads());
  const MatTiling& t = *from.mats;
  const Type mt = mats.front()->type;
  const MatScratch s = mat_scratch(*this, from, twin, mt.dtype);
  Regs out(static_cast<size_t>(twin.num_regs()));
  for (size_t q = 0; q < mats.size(); ++q) {
    if (q) barrier();  // the lanes have read the previous matrix
    ir::Value* region = s.region;
    b().create(OpKind::CoopMatStore, {region, mats[q]}, {},
               {{attr::kBuffer, int64_t{s.buf}}, {attr::kStride, t.n}});
    barrier();
    ir::Value* base = add(region, s.lane_base);
    for (int64_t g = 0; g < s.per_lane; g += s.width) {
      std::vector<int64_t> c = twin.reg_coords(static_cast<int>(g));
      ir::Op* ld =
          b().create(OpKind::SharedLoad, {plus(*this, base, c[0] * t.n + c[1])},
                     std::vector<Type>(static_cast<size_t>(s.width), Type::scalar(mt.dtype)),
                     {{attr::kBuffer, int64_t{s.buf}}, {attr::kWidth, s.width}});
      for (int64_t v = 0; v < s.width; ++v)
        out[q * static_cast<size_t>(s.per_lane) + static_cast<size_t>(g + v)] =
            ld->result(static_cast<size_t>(v));
    }
  }
  barrier();
  return out;
}

Regs Lowerer::linear_to_mats(const Regs& lin, const Layout& to) {
  const Layout twin = mat_twin(to, threads());
  const MatTiling& t = *to.mats;
  const DType dt = lin.front()->type.dtype;
  const MatScratch s = mat_scratch(*this, to, twin, dt);
  Regs out;
  for (int q = 0; q < to.num_regs(); ++q) {
    if (q) barrier();  // the subgroups have loaded the previous matrix
    ir::Value* region = s.region;
    ir::Value* base = add(region, s.lane_base);
    guarded(owner(twin), [&] {
      for (int64_t g = 0; g < s.per_lane; g += s.width) {
        std::vector<int64_t> c = twin.reg_coords(static_cast<int>(g));
        std::vector<ir::Value*> operands = {plus(*this, base, c[0] * t.n + c[1])};
        for (int64_t v = 0; v < s.width; ++v)
          operands.push_back(lin[static_cast<size_t>(q * s.per_lane + g + v)]);
        b().create(OpKind::SharedStore, operands, {},
                   {{attr::kBuffer, int64_t{s.buf}}, {attr::kWidth, s.width}});
      }
    });
    barrier();
    out.push_back(b().create(OpKind::CoopMatLoad, {region},
                             {Type::coopmat(dt, t.m, t.n, ir::MatUse::Acc, t.workgroup)},
                             {{attr::kBuffer, int64_t{s.buf}}, {attr::kStride, t.n}})
                      ->result());
  }
  barrier();
  return out;
}

Regs Lowerer::fill_mats(const Regs& lin, const Layout& to) {
  const MatTiling& t = *to.mats;
  for (ir::Value* v : lin)
    if (v != lin.front()) return linear_to_mats(lin, to);
  ir::Value* m =
      emit(OpKind::CoopMatFill, {lin.front()},
           Type::coopmat(lin.front()->type.dtype, t.m, t.n, ir::MatUse::Acc, t.workgroup));
  return Regs(static_cast<size_t>(to.num_regs()), m);
}

}  // namespace tessera::lower::detail
