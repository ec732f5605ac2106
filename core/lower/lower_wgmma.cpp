/// \file dot on Hopper's warpgroup tensor cores (DotKind::Wgmma): A and B lie in swizzled shared
/// memory in wgmma's layout (stored there from registers here, or put there by a ring, copied or
/// through registers: lower_pipeline.cpp); each k step issues one wgmma per instruction tile of
/// each warpgroup, reading the operands through their layouts; the accumulator stays in registers
/// in the wgmma layout. Outside a ring the dot waits for its wgmma before returning; in an async
/// ring the last group stays in flight into the next iteration.
#include <algorithm>
#include <map>

#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

SmemTile wgmma_tile(const DotPlan& plan, bool is_a, const ir::Shape& shape, int buffer,
                    int64_t base, int* row_dim) {
  if (plan.swapped && !is_a) {
    // B^T, wgmma's A from registers: N-major as copied, swizzled for scalar reads (4 k rows x 8
    // columns of a fragment load on distinct banks), like mma.sync's B read as scalars.
    *row_dim = 0;
    return SmemTile(buffer, base, shape[0], shape[1], ir::dtype_bytes(plan.wgmma->in), 2);
  }
  const WgmmaOperand& o = is_a ? plan.wa : plan.wb;
  const int k_dim = is_a ? 1 : 0;
  // The tile's rows run along K when the operand is MN-major, else along M (A) or N (B).
  *row_dim = o.mn_major ? k_dim : 1 - k_dim;
  const int64_t rows = shape[static_cast<size_t>(*row_dim)];
  const int64_t cols = shape[static_cast<size_t>(1 - *row_dim)];
  return SmemTile::wgmma(buffer, base, rows, cols, ir::dtype_bytes(plan.wgmma->in), o.swizzle);
}

int64_t wgmma_stage_elements(const SmemTile& t, int elem_bytes) {
  const int64_t per_kib = 1024 / elem_bytes;
  return (t.size() + per_kib - 1) / per_kib * per_kib;
}

namespace {

/// One operand as the wgmma ops read it: its tile, where its rows run, and the i32 element
/// offset of the stage it is in (null: 0).
struct WgmmaSource {
  SmemTile tile;
  int row_dim = 0;
  ir::Value* stage = nullptr;
};

/// The operand's layout attribute: [buffer, swizzle, lbo, sbo, trans].
std::vector<int64_t> smem_attr(const WgmmaSource& s, const WgmmaOperand& o, int elem_bytes) {
  const int64_t row_bytes = s.tile.block * elem_bytes;
  return {s.tile.buffer, o.swizzle, s.tile.rows * row_bytes, 8 * row_bytes, o.mn_major ? 1 : 0};
}

/// The element index where an instruction's operand starts: row r0 (along M or N, a thread part
/// `r_thread` plus a constant) and k0, in the tile's coordinates; the descriptor's start is the
/// unswizzled address, which offset() gives for rows at a multiple of 8.
ir::Value* start(Lowerer& lw, const WgmmaSource& s, bool is_a, ir::Value* r_thread, int64_t r0,
                 int64_t k0) {
  const int k_dim = is_a ? 1 : 0;
  const bool rows_are_k = s.row_dim == k_dim;
  ir::Value* c = lw.const_int(DType::i32, 0);
  // The thread part only moves the M/N coordinate by multiples of 64: whole rows (K-major) or
  // whole blocks of columns and within-block columns (MN-major) in disjoint bits.
  // Being disjoint, thread part ^ offset = thread part + offset: the index is a per-thread base
  // plus a constant (the PTX emitter derives one descriptor from another by that constant).
  ir::Value* thread_part =
      rows_are_k ? s.tile.index(lw, c, r_thread) : s.tile.index(lw, r_thread, c);
  ir::Value* base = s.stage ? lw.add(thread_part, s.stage) : thread_part;
  const int64_t off = rows_are_k ? s.tile.offset(k0, r0) : s.tile.offset(r0, k0);
  return off ? lw.add(base, lw.const_int(DType::i32, off)) : base;
}

/// The A values of a swapped dot's instructions (B^T: `b` is B's tile, rows along K): per k
/// step in [first, last) and repetition along N (wgmma's M), k / 2 scalar shared loads in
/// wgmma's A arrangement (wgmma_a_regs_layout over [N, K], read in B's coordinates).
std::vector<Regs> read_swapped_a(Lowerer& lw, const DotPlan& plan, const ir::DotOp& dot,
                                 const WgmmaSource& b, int64_t first, int64_t last) {
  const ir::WgmmaShape& shape = *plan.wgmma;
  const int64_t K = dot.rhs()->type.shape[0], N = dot.rhs()->type.shape[1];
  const Layout l = permute(
      wgmma_a_regs_layout(N, K, plan.tiling, ir::dtype_bytes(shape.in), lw.threads()), {1, 0});
  ir::Value* base = lw.at_entry("wgmma-at:" + b.tile.key() + "|" + l.str(), [&] {
    return b.tile.index(lw, lw.thread_coord(l, 0), lw.thread_coord(l, 1));
  });
  // The stage offset is a multiple of a power of two above the tile: it adds to the XOR.
  ir::Value* read = b.stage ? lw.add(base, b.stage) : base;
  std::vector<Regs> out;
  const int values = shape.k / 2;
  for (int64_t step = first; step < last; ++step)
    for (int rm = 0; rm < plan.tiling.reps_m; ++rm) {
      Regs v;
      for (int j = 0; j < values; ++j) {
        const std::vector<int64_t> c =
            l.reg_coords(static_cast<int>(j + values * (rm + plan.tiling.reps_m * step)));
        const int64_t off = b.tile.offset(c[0], c[1]);
        ir::Value* idx =
            off ? lw.emit(OpKind::Xor, {read, lw.const_int(DType::i32, off)}, read->type) : read;
        v.push_back(
            lw.b()
                .create(OpKind::SharedLoad, {idx}, {Type::scalar(shape.in)},
                        {{attr::kBuffer, int64_t{b.tile.buffer}}, {attr::kWidth, int64_t{1}}})
                ->result());
      }
      out.push_back(std::move(v));
    }
  return out;
}

}  // namespace

Operand store_wgmma_operand(Lowerer& lw, const DotPlan& plan, bool is_a, const ir::Value* v) {
  Operand o;
  const int elem = ir::dtype_bytes(plan.wgmma->in);
  SmemTile probe = wgmma_tile(plan, is_a, v->type.shape, 0, 0, &o.row_dim);
  const int buffer = lw.new_buffer(plan.wgmma->in, wgmma_stage_elements(probe, elem));
  o.tile = wgmma_tile(plan, is_a, v->type.shape, buffer, 0, &o.row_dim);
  const Layout l = lw.homes().layout_for(v);
  store_tile(lw, o.tile, o.row_dim, lw.regs(v, l), l);
  return o;
}

void Lowerer::lower_wgmma(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(&op);
  const ir::WgmmaShape& shape = *plan.wgmma;
  const WgmmaTiling& t = plan.tiling;
  Regs acc = regs(dot.acc(), plan.acc);
  // Each operand from the ring (fed or held), or stored here from registers.
  const StagedDot* staged = plan.ring ? staged_operands(*plan.ring, op) : nullptr;
  const bool fed_a = staged && staged->fed_a, fed_b = staged && staged->fed_b;
  auto source = [&](bool is_a) -> WgmmaSource {
    if (is_a && plan.a_registers) return {};
    const Operand o = (is_a ? fed_a : fed_b)
                          ? (is_a ? staged->a : staged->b)
                          : store_wgmma_operand(*this, plan, is_a, is_a ? dot.lhs() : dot.rhs());
    return {o.tile, o.row_dim, o.read_base};
  };
  const WgmmaSource a = source(true), b = source(false);
  // The operand wgmma reads through a descriptor as its B: B, or A when swapped (A's tile is
  // K-major, rows along M: what a K-major B's descriptor reads with M for N).
  const WgmmaSource& desc = plan.swapped ? a : b;
  if ((!fed_a && !plan.a_registers) || !fed_b) {
    // The stores are the generic proxy's; wgmma reads through the async proxy.
    b_.create(OpKind::FenceAsyncShared, {}, {});
    barrier();
  }
  // This warpgroup's row slab of A and column slab of B. The warpgroup index is read from lane
  // 0: the same in every lane, and visibly so to ptxas, which then builds the descriptors in
  // uniform registers (the operands wgmma reads them from) instead of moving each one there.
  auto warpgroup = [&](int shift) {
    ir::Value* g = emit(OpKind::Shr, {tid(), const_int(DType::i32, shift)}, tid()->type);
    return emit(OpKind::Shuffle, {g, const_int(DType::i32, 0)}, g->type,
                {{attr::kMode, std::string("idx")}});
  };
  ir::Value* m_thread = at_entry("wgmma:m:" + std::to_string(t.wg_m), [&] {
    return mul(and_(warpgroup(7), const_int(DType::i32, t.wg_m - 1)), const_int(DType::i32, 64));
  });
  const int64_t cols = int64_t{t.instr_n} * t.reps_n;
  ir::Value* n_thread =
      at_entry("wgmma:n:" + std::to_string(t.wg_m) + ":" + std::to_string(cols),
               [&] { return mul(warpgroup(7 + log2_exact(t.wg_m)), const_int(DType::i32, cols)); });
  const int elem = ir::dtype_bytes(shape.in);
  std::vector<ir::Attribute> attrs = {{attr::kA, std::string(shape.a)}};
  const bool a_from_regs = plan.a_registers || plan.swapped;
  if (!a_from_regs) attrs.push_back({attr::kASmem, smem_attr(a, plan.wa, elem)});
  attrs.push_back(
      {attr::kBSmem, plan.swapped ? smem_attr(a, plan.wa, elem) : smem_attr(b, plan.wb, elem)});
  attrs.push_back({attr::kShape, shape.shape()});
  // A from registers: register i of its layout at coordinates reg_coords(i) (thread 0's).
  Regs a_regs;
  std::map<std::vector<int64_t>, size_t> a_reg_at;
  if (plan.a_registers) {
    a_regs = regs(dot.lhs(), plan.ra);
    for (int i = 0; i < plan.ra.num_regs(); ++i)
      a_reg_at[plan.ra.reg_coords(i)] = static_cast<size_t>(i);
  }
  // The k / 2 values of A for the instruction at rows r0.., k0..: value j at row 8 (j / 2 % 2),
  // column 8 (j / 4) + j % 2 of thread 0's (core/ir/wgmma.h).
  auto a_values = [&](int64_t r0, int64_t k0) {
    std::vector<ir::Value*> v;
    for (int j = 0; j < shape.k / 2; ++j) {
      auto it = a_reg_at.find({r0 + 8 * (j / 2 % 2), k0 + 8 * (j / 4) + j % 2});
      TESSERA_CHECK(it != a_reg_at.end(),
                    "wgmma's A from registers in a layout that is not wgmma's");
      v.push_back(a_regs[it->second]);
    }
    return v;
  };
  const bool async = plan.ring && plan_.loop(*plan.ring).async_dot;
  // Swapped: B^T's values, read from B's tile before the fence. In a loop the reads land in the
  // registers that the previous iteration's instructions read as their A (PTX names a value of
  // the body by one register in every iteration), and PTX leaves a wgmma's A registers
  // undefined until a wait retires it (the H200 summed wrong values without a wait: 256x128x32
  // tf32 tiles, error 0.008 where truncation alone gives 0.0007). So an async swapped dot
  // issues its k steps in G groups, each read into registers once the previous iteration's
  // group of the same steps has retired (wgmma_wait G - 1: the other groups stay in flight, and
  // the tensor cores have work while the registers load); iteration i - 1's groups have all
  // retired when the dot ends, as the ring's refill needs.
  const int64_t steps = dot.lhs()->type.shape[1] / shape.k;
  // How many groups: 8-bit B^T is read with byte loads (slower to land), which more groups in
  // flight hide: int8 4096^3 on the H200 ran 5 % faster with 4 groups than with 2; tf32 1 %
  // slower (docs/performance.md, thirteenth session).
  const int64_t want = elem == 1 ? 4 : 2;
  const int64_t groups = plan.swapped && async && steps >= 2 ? std::min(want, steps) : 1;
  const int n = shape.acc_count();
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = steps * g / groups, last = steps * (g + 1) / groups;
    std::vector<Regs> bt;
    if (plan.swapped) {
      if (async) b_.create(OpKind::WgmmaWait, {}, {}, {{attr::kPending, int64_t{groups - 1}}});
      bt = read_swapped_a(*this, plan, dot, b, first, last);
    }
    b_.create(OpKind::WgmmaFence, {}, {});
    for (int64_t step = first; step < last; ++step) {
      const int64_t k0 = step * shape.k;
      for (int rm = 0; rm < t.reps_m; ++rm) {
        const int64_t r0 = int64_t{64} * t.wg_m * rm;
        const std::vector<ir::Value*> a_operand =
            plan.swapped       ? bt[static_cast<size_t>((step - first) * t.reps_m + rm)]
            : plan.a_registers ? a_values(r0, k0)
                               : std::vector<ir::Value*>{start(*this, a, true, m_thread, r0, k0)};
        for (int rn = 0; rn < t.reps_n; ++rn) {
          ir::Value* b_start =
              start(*this, desc, plan.swapped, n_thread, int64_t{t.instr_n} * rn, k0);
          // The instruction's accumulators: registers (rm * reps_n + rn) * n ...
          const size_t at = static_cast<size_t>((rm * t.reps_n + rn) * n);
          std::vector<ir::Value*> operands = a_operand;
          operands.push_back(b_start);
          operands.insert(operands.end(), acc.begin() + static_cast<long>(at),
                          acc.begin() + static_cast<long>(at) + n);
          ir::Op* w =
              b_.create(OpKind::Wgmma, operands,
                        std::vector<Type>(static_cast<size_t>(n), Type::scalar(shape.acc)), attrs);
          for (int i = 0; i < n; ++i)
            acc[at + static_cast<size_t>(i)] = w->result(static_cast<size_t>(i));
        }
      }
    }
    b_.create(OpKind::WgmmaCommit, {}, {});
  }
  if (async) {
    // Iteration i - 1's group is done (its stage may be refilled); this one stays in flight.
    // (A swapped dot's waits above retired iteration i - 1's groups already.)
    if (!plan.swapped) b_.create(OpKind::WgmmaWait, {}, {}, {{attr::kPending, int64_t{1}}});
  } else {
    std::vector<Type> types;
    for (ir::Value* v : acc) types.push_back(v->type);
    ir::Op* w = b_.create(OpKind::WgmmaWait, acc, types, {{attr::kPending, int64_t{0}}});
    acc.assign(w->results.begin(), w->results.end());
    // The tiles may be overwritten once every warpgroup is past its wait (in a ring, the
    // next stores follow the barrier that begins the next iteration).
    if (!plan.ring) barrier();
  }
  define_tile(op.result(), plan.acc, acc);
}

}  // namespace tessera::lower::detail
