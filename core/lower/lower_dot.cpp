/// \file dot in FMA form (when it cannot run on tensor cores: lower_mma.cpp), and cat. The
/// operands are staged in shared memory (A transposed, each line padded; each thread writes the
/// elements it holds, in vectors where they run along the line), then each thread runs a loop
/// over k that reads the rows of A and the columns of B it needs, in vectors of up to 4, and
/// accumulates its block of C (the dot layout: 4 x 4 blocks repeated at strides, so that the
/// reads of a subgroup are broadcasts or contiguous).
#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// Rounds an f32 to TF32 like `cvt.rna.tf32.f32` (nearest, ties away; NaN and inf unchanged),
/// exactly as the interpreter's round_to_tf32.
ir::Value* round_tf32(Lowerer& lw, ir::Value* x) {
  Type u32 = Type::scalar(DType::u32), i1 = Type::scalar(DType::i1);
  ir::Value* bits = lw.emit(OpKind::Bitcast, {x}, u32);
  ir::Value* exp = lw.and_(bits, lw.const_int(DType::u32, 0x7F800000));
  ir::Value* finite = lw.emit(OpKind::CmpNe, {exp, lw.const_int(DType::u32, 0x7F800000)}, i1);
  ir::Value* rounded =
      lw.and_(lw.add(bits, lw.const_int(DType::u32, 0x1000)), lw.const_int(DType::u32, 0xFFFFE000));
  ir::Value* r = lw.emit(OpKind::Where, {finite, rounded, bits}, u32);
  return lw.emit(OpKind::Bitcast, {r}, Type::scalar(DType::f32));
}

}  // namespace

void Lowerer::lower_dot(const ir::Op& op) {
  const DotPlan& plan = plan_.dot(op);
  switch (plan.kind) {
    case DotKind::Fma:
      return lower_fma_dot(op, plan);
    case DotKind::MmaSync:
      return lower_mma(op, plan);
    case DotKind::Wgmma:
      return lower_wgmma(op, plan);
    case DotKind::CoopMat:
      return lower_coopmat(op, plan);
    case DotKind::CoopMat2:
      return lower_coopmat2(op, plan);
  }
}

void Lowerer::lower_fma_dot(const ir::Op& op, const DotPlan& plan) {
  ir::DotOp dot(&op);
  const ir::Value* a = dot.lhs();
  const ir::Value* bm = dot.rhs();
  const ir::Value* r = op.result();
  int64_t M = a->type.shape[0], K = a->type.shape[1], N = bm->type.shape[1];
  DType in_t = a->type.dtype, acc_t = r->type.dtype;
  const Layout& lc = plan.acc;
  Regs acc = regs(dot.acc(), lc);
  Layout la = homes().layout_for(a), lb = homes().layout_for(bm);
  Regs ra = regs(a, la), rb = regs(bm, lb);
  // A transposed (M contiguous) and B (N contiguous), each line padded by 16 bytes (4 elements at
  // least), so that a thread reads its consecutive rows of A and columns of B at one k in vectors
  // and the lines stay aligned to them.
  const int64_t pad = std::max<int64_t>(4, 16 / ir::dtype_bytes(in_t));
  const PaddedTile ta{0, M + pad, K * (M + pad)}, tb{1, N + pad, K * (N + pad)};
  int buf = scratch(in_t, ta.size + tb.size);
  // TF32 inputs are rounded once, as they are staged, not at each of their many reads.
  bool tf32 = in_t == DType::f32 && dot.precision() == ir::DotPrecision::Tf32;
  if (tf32)
    for (Regs* rr : {&ra, &rb})
      for (ir::Value*& v : *rr) v = round_tf32(*this, v);
  store_padded(ra, la, buf, nullptr, ta);
  store_padded(rb, lb, buf, const_int(DType::i32, ta.size), tb);
  barrier();
  // Rows and columns of C this thread owns (thread part + register part), in runs of `vm` and
  // `vn` consecutive ones (the layout's low register bits): one vector load each.
  ir::Value* t_m = thread_coord(lc, 0);
  ir::Value* t_n = thread_coord(lc, 1);
  std::vector<int64_t> rows, cols;
  for (int i = 0; i < lc.num_regs(); ++i) {
    std::vector<int64_t> c = lc.reg_coords(i);
    if (std::find(rows.begin(), rows.end(), c[0]) == rows.end()) rows.push_back(c[0]);
    if (std::find(cols.begin(), cols.end(), c[1]) == cols.end()) cols.push_back(c[1]);
  }
  std::sort(rows.begin(), rows.end());
  std::sort(cols.begin(), cols.end());
  auto run = [](const std::vector<int64_t>& v) {
    int64_t w = 1;
    while (w < 4 && w < static_cast<int64_t>(v.size()) && v[static_cast<size_t>(w)] == w) ++w;
    return w & -w;  // a power of two
  };
  const int64_t vm = run(rows), vn = run(cols);
  ir::Value* lo = const_int(DType::i32, 0);
  ir::Value* hi = const_int(DType::i32, K);
  // k steps per iteration: fewer loop branches and index updates per multiply-add.
  const int64_t unroll = K % 4 == 0 ? 4 : K % 2 == 0 ? 2 : 1;
  ir::Value* step = const_int(DType::i32, unroll);
  std::vector<ir::Value*> operands = {lo, hi, step};
  operands.insert(operands.end(), acc.begin(), acc.end());
  std::vector<Type> types(acc.size(), Type::scalar(acc_t));
  ir::Op* loop = b().create(OpKind::For, operands, types);
  ir::Region* body = b().add_region(loop);
  ir::Value* k = out_module().add_arg(body, Type::scalar(DType::i32));
  Regs carried;
  for (size_t i = 0; i < acc.size(); ++i)
    carried.push_back(out_module().add_arg(body, Type::scalar(acc_t)));
  InsertPointGuard guard(*this);
  b().set_insertion_end(body);
  // `width` consecutive elements from `idx`, cast for the accumulator.
  auto load = [&](ir::Value* idx, int64_t width, std::vector<ir::Value*>& out) {
    ir::Op* ld = b().create(OpKind::SharedLoad, {idx},
                            std::vector<Type>(static_cast<size_t>(width), Type::scalar(in_t)),
                            {{attr::kBuffer, int64_t{buf}}, {attr::kWidth, width}});
    for (ir::Value* v : ld->results) {
      if (in_t != acc_t) v = emit(OpKind::Cast, {v}, Type::scalar(acc_t));
      out.push_back(v);
    }
  };
  Regs next(carried.begin(), carried.end());
  // Element offsets of k's line in A's transpose and in B (each line `stride` elements).
  ir::Value* a_base = add(mul(k, const_int(DType::i32, ta.stride)), t_m);
  ir::Value* b_base =
      add(add(mul(k, const_int(DType::i32, tb.stride)), t_n), const_int(DType::i32, ta.size));
  for (int64_t u = 0; u < unroll; ++u) {
    std::vector<ir::Value*> av, bv;  // in the order of rows and cols
    for (size_t i = 0; i < rows.size(); i += static_cast<size_t>(vm))
      load(add(a_base, const_int(DType::i32, u * ta.stride + rows[i])), vm, av);
    for (size_t j = 0; j < cols.size(); j += static_cast<size_t>(vn))
      load(add(b_base, const_int(DType::i32, u * tb.stride + cols[j])), vn, bv);
    for (int i = 0; i < lc.num_regs(); ++i) {
      std::vector<int64_t> c = lc.reg_coords(i);
      size_t mi = static_cast<size_t>(std::find(rows.begin(), rows.end(), c[0]) - rows.begin());
      size_t ni = static_cast<size_t>(std::find(cols.begin(), cols.end(), c[1]) - cols.begin());
      ir::Value*& cur = next[static_cast<size_t>(i)];
      if (ir::is_float(acc_t))
        cur = emit(OpKind::Fma, {av[mi], bv[ni], cur}, cur->type);
      else
        cur = add(cur, mul(av[mi], bv[ni]));
    }
  }
  b().create(OpKind::Yield, next, {});
  guard.restore();
  barrier();
  define_tile(r, lc, Regs(loop->results.begin(), loop->results.end()));
}

void Lowerer::lower_cat(const ir::Op& op) {
  const ir::Value* r = op.result();
  const Layout& l = homes().home(r);
  Layout half = homes().layout_for(op.operand(0));
  Regs a = regs(op.operand(0), half), b = regs(op.operand(1), half);
  a.insert(a.end(), b.begin(), b.end());
  define_tile(r, l, a);
}

}  // namespace tessera::lower::detail
