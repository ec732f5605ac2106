/// \file dot on cooperative matrices (DotKind::CoopMat), and the conversions between the opaque
/// layout its accumulator lives in and linear layouts. A and B go from their home layouts into
/// shared memory (each along its home's contiguous dimension, rows padded by 16 bytes so that the
/// matrix loads of one subgroup spread over the banks), each subgroup loads the matrices of its
/// block of rows of A and columns of B per k step and multiplies them into its accumulator
/// matrices. Which lane holds which element of a matrix is the target's secret, so an accumulator
/// reaches a linear layout only through shared memory: its twin (mat_twin) one matrix per
/// subgroup at a time, through one scratch matrix per subgroup.
#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// Consecutive register bits from bit 0 that name bits 0, 1, ... of `dim`: 2^that elements of
/// one register run are consecutive along dim.
int run_along(const Layout& l, int dim) {
  int run = 0;
  while (run < static_cast<int>(l.regs.size()) && l.regs[static_cast<size_t>(run)] == DimBit{dim, run}) ++run;
  return run;
}

/// The widest vector (at most 16 bytes and 8 elements) of a register run along `dim`.
int64_t vector_width(const Layout& l, int dim, int elem_bytes) {
  const int64_t run = int64_t{1} << run_along(l, dim);
  return std::min<int64_t>({run, std::max(1, 16 / elem_bytes), 8});
}

/// i32 `x` ^ or * a power of two, etc.: the subgroup's block origin along one dimension.
ir::Value* block_origin(Lowerer& lw, bool rows, const MatTiling& t, int64_t extent) {
  const std::string key = std::string("coopmat-origin:") + (rows ? "m" : "n") + std::to_string(t.wm) +
                          "x" + std::to_string(t.wn) + ":" + std::to_string(extent);
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

}  // namespace

Type Lowerer::register_type(const ir::Type& tile, const Layout& l) const {
  if (!l.mats) return tile.element();
  return Type::coopmat(tile.dtype, l.mats->m, l.mats->n, ir::MatUse::Acc);
}

void Lowerer::store_strided(const Regs& r, const Layout& l, int buf, int64_t base, int fast,
                            int64_t stride) {
  const DType dt = r.front()->type.dtype;
  const int64_t w = vector_width(l, fast, ir::dtype_bytes(dt));
  auto index_of = [&](int64_t c0, int64_t c1) {
    return fast == 1 ? c0 * stride + c1 : c1 * stride + c0;
  };
  ir::Value* t_base = add(mul(thread_coord(l, fast == 1 ? 0 : 1), const_int(DType::i32, stride)),
                          thread_coord(l, fast));
  guarded(owner(l), [&] {
    for (int i = 0; i < l.num_regs(); i += static_cast<int>(w)) {
      std::vector<int64_t> c = l.reg_coords(i);
      std::vector<ir::Value*> operands = {plus(*this, t_base, base + index_of(c[0], c[1]))};
      operands.insert(operands.end(), r.begin() + i, r.begin() + i + w);
      b().create(OpKind::SharedStore, operands, {}, {{"buffer", int64_t{buf}}, {"width", w}});
    }
  });
}

void Lowerer::lower_coopmat(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(const_cast<ir::Op*>(&op));
  const ir::Value* av = dot.lhs();
  const ir::Value* bv = dot.rhs();
  const MatTiling& t = *plan.acc.mats;
  const int64_t M = av->type.shape[0], K = av->type.shape[1], N = bv->type.shape[1];
  const DType in_t = av->type.dtype;
  const int eb = ir::dtype_bytes(in_t);
  Regs acc = regs(dot.acc(), plan.acc);
  const Layout la = homes().layout_for(av), lb = homes().layout_for(bv);
  const Regs ra = regs(av, la), rb = regs(bv, lb);
  // Each operand lies along its home's contiguous dimension (K when there is none), rows padded.
  const int fa = fast_dim(la) == 0 ? 0 : 1, fb = fast_dim(lb) == 1 ? 1 : 0;
  const int64_t pad = 16 / eb;
  const int64_t sa = av->type.shape[static_cast<size_t>(fa)] + pad;
  const int64_t sb = bv->type.shape[static_cast<size_t>(fb)] + pad;
  const int64_t size_a = av->type.shape[static_cast<size_t>(1 - fa)] * sa;
  const int64_t size_b = bv->type.shape[static_cast<size_t>(1 - fb)] * sb;
  const int buf = scratch(in_t, size_a + size_b);
  store_strided(ra, la, buf, 0, fa, sa);
  store_strided(rb, lb, buf, size_a, fb, sb);
  barrier();
  const int64_t rows = M / t.wm, cols = N / t.wn;  // one subgroup's block
  ir::Value* row0 = block_origin(*this, true, t, rows);
  ir::Value* col0 = block_origin(*this, false, t, cols);
  // A (r, k) at r * sa + k (K contiguous) or k * sa + r; B (k, n) at k * sb + n or n * sb + k.
  ir::Value* a_base = fa == 1 ? at_entry("coopmat-a:" + std::to_string(sa) + ":" + std::to_string(rows) + "x" + std::to_string(t.wm),
                                        [&] { return mul(row0, const_int(DType::i32, sa)); })
                              : row0;
  ir::Value* b_base = fb == 0 ? at_entry("coopmat-b:" + std::to_string(sb) + ":" + std::to_string(cols) + "x" + std::to_string(t.wn),
                                        [&] { return mul(col0, const_int(DType::i32, sb)); })
                              : col0;
  auto load = [&](ir::Value* base, int64_t off, int64_t stride, bool col_major, Type type) {
    std::vector<ir::Attribute> attrs = {{"buffer", int64_t{buf}}, {"stride", stride}};
    if (col_major) attrs.push_back({"col_major", int64_t{1}});
    return b().create(OpKind::CoopMatLoad, {plus(*this, base, off)}, {type}, attrs)->result();
  };
  const int64_t reps_m = plan.acc.reps_m(), reps_n = plan.acc.reps_n(), mk = plan.mat_k;
  for (int64_t k0 = 0; k0 < K; k0 += mk) {
    std::vector<ir::Value*> as, bs;
    for (int64_t i = 0; i < reps_m; ++i) {
      const int64_t r = i * t.m;
      as.push_back(load(a_base, fa == 1 ? r * sa + k0 : k0 * sa + r, sa, fa == 0,
                        Type::coopmat(in_t, t.m, mk, ir::MatUse::A)));
    }
    for (int64_t j = 0; j < reps_n; ++j) {
      const int64_t c = j * t.n;
      bs.push_back(load(b_base, size_a + (fb == 1 ? k0 * sb + c : c * sb + k0), sb, fb == 0,
                        Type::coopmat(in_t, mk, t.n, ir::MatUse::B)));
    }
    for (int64_t i = 0; i < reps_m; ++i)
      for (int64_t j = 0; j < reps_n; ++j) {
        ir::Value*& q = acc[static_cast<size_t>(i * reps_n + j)];
        q = emit(OpKind::CoopMatMulAdd, {as[static_cast<size_t>(i)], bs[static_cast<size_t>(j)], q}, q->type);
      }
  }
  barrier();  // the staged operands may be overwritten once every subgroup has loaded them
  define_tile(op.result(), plan.acc, acc);
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
  s.region = lw.at_entry("coopmat-scratch:" + std::to_string(size), [&] {
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
               {{"buffer", int64_t{s.buf}}, {"stride", t.n}});
    barrier();
    ir::Value* base = add(region, s.lane_base);
    for (int64_t g = 0; g < s.per_lane; g += s.width) {
      std::vector<int64_t> c = twin.reg_coords(static_cast<int>(g));
      ir::Op* ld = b().create(OpKind::SharedLoad, {plus(*this, base, c[0] * t.n + c[1])},
                              std::vector<Type>(static_cast<size_t>(s.width), Type::scalar(mt.dtype)),
                              {{"buffer", int64_t{s.buf}}, {"width", s.width}});
      for (int64_t v = 0; v < s.width; ++v)
        out[q * static_cast<size_t>(s.per_lane) + static_cast<size_t>(g + v)] = ld->result(static_cast<size_t>(v));
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
        b().create(OpKind::SharedStore, operands, {}, {{"buffer", int64_t{s.buf}}, {"width", s.width}});
      }
    });
    barrier();
    out.push_back(b().create(OpKind::CoopMatLoad, {region},
                             {Type::coopmat(dt, t.m, t.n, ir::MatUse::Acc)},
                             {{"buffer", int64_t{s.buf}}, {"stride", t.n}})->result());
  }
  barrier();
  return out;
}

Regs Lowerer::fill_mats(const Regs& lin, const Layout& to) {
  const MatTiling& t = *to.mats;
  for (ir::Value* v : lin)
    if (v != lin.front()) return linear_to_mats(lin, to);
  ir::Value* m = emit(OpKind::CoopMatFill, {lin.front()}, Type::coopmat(lin.front()->type.dtype, t.m, t.n, ir::MatUse::Acc));
  return Regs(static_cast<size_t>(to.num_regs()), m);
}

}  // namespace tessera::lower::detail
