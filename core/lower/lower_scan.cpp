/// \file Inclusive scans (builtin kinds and generic combines), forward or reverse: a running fold
/// in each thread's registers, a Hillis-Steele scan of thread totals across lanes with shuffles,
/// and the totals of earlier subgroups through shared memory. The home layout of a scan (homes.cpp)
/// puts the axis' low bits in registers, then lanes, then subgroups.
#include <algorithm>
#include <functional>
#include <map>

#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;
using Values = std::vector<ir::Value*>;
using Combine = std::function<Values(const Values& left, const Values& right)>;

/// Thread bits naming the axis, in increasing axis-bit order.
std::vector<int> axis_thread_bits(const Layout& l, int axis, int lo, int hi) {
  std::vector<std::pair<int, int>> found;  // (axis bit, thread bit)
  for (int i = lo; i < hi && i < static_cast<int>(l.threads.size()); ++i)
    if (l.threads[static_cast<size_t>(i)].dim == axis)
      found.push_back({l.threads[static_cast<size_t>(i)].bit, i});
  std::sort(found.begin(), found.end());
  std::vector<int> out;
  for (auto [b, i] : found) out.push_back(i);
  return out;
}

/// Packs the thread-id bits `bits` of `t` into a dense index (bit j of the result = bit bits[j]).
ir::Value* gather_bits(Lowerer& lw, ir::Value* t, const std::vector<int>& bits) {
  Type i32 = Type::scalar(DType::i32);
  ir::Value* out = lw.const_int(DType::i32, 0);
  for (size_t j = 0; j < bits.size(); ++j) {
    ir::Value* b = lw.and_(lw.emit(OpKind::Shr, {t, lw.const_int(DType::i32, bits[j])}, i32),
                           lw.const_int(DType::i32, 1));
    out = lw.emit(
        OpKind::Or,
        {out, lw.emit(OpKind::Shl, {b, lw.const_int(DType::i32, static_cast<int64_t>(j))}, i32)},
        i32);
  }
  return out;
}

/// The inverse of gather_bits: spreads bit j of `k` to bit bits[j].
ir::Value* scatter_bits(Lowerer& lw, ir::Value* k, const std::vector<int>& bits) {
  Type i32 = Type::scalar(DType::i32);
  ir::Value* out = lw.const_int(DType::i32, 0);
  for (size_t j = 0; j < bits.size(); ++j) {
    ir::Value* b =
        lw.and_(lw.emit(OpKind::Shr, {k, lw.const_int(DType::i32, static_cast<int64_t>(j))}, i32),
                lw.const_int(DType::i32, 1));
    out = lw.emit(OpKind::Or,
                  {out, lw.emit(OpKind::Shl, {b, lw.const_int(DType::i32, bits[j])}, i32)}, i32);
  }
  return out;
}

Values select(Lowerer& lw, ir::Value* cond, const Values& a, const Values& b) {
  Values out;
  for (size_t k = 0; k < a.size(); ++k)
    out.push_back(lw.emit(OpKind::Where, {cond, a[k], b[k]}, a[k]->type));
  return out;
}

Values shuffle_idx(Lowerer& lw, const Values& v, ir::Value* lane) {
  Values out;
  for (ir::Value* x : v)
    out.push_back(
        lw.emit(OpKind::Shuffle, {x, lane}, x->type, {{attr::kMode, std::string("idx")}}));
  return out;
}

std::vector<Regs> scan_core(Lowerer& lw, const std::vector<Regs>& in,
                            const std::vector<DType>& dtypes, const Layout& l, int axis,
                            bool reverse, const Combine& combine) {
  size_t n = in.size();
  Type i1 = Type::scalar(DType::i1), i32 = Type::scalar(DType::i32);
  int lane_bits = log2_exact(lw.subgroup());
  // 1. Registers: a running fold over each group of registers along the axis.
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int>>> groups;
  for (int i = 0; i < l.num_regs(); ++i) {
    std::vector<int64_t> c = l.reg_coords(i);
    int64_t along = c[static_cast<size_t>(axis)];
    c[static_cast<size_t>(axis)] = 0;
    groups[c].push_back({reverse ? -along : along, i});
  }
  std::vector<Values> s(static_cast<size_t>(l.num_regs()));
  std::vector<std::vector<int>> order;  // register indices of each group in scan order
  std::vector<Values> total;            // each group's running total
  for (auto& [key, regs] : groups) {
    std::sort(regs.begin(), regs.end());
    std::vector<int> ids;
    Values acc;
    for (auto [along, i] : regs) {
      Values v;
      for (size_t k = 0; k < n; ++k) v.push_back(in[k][static_cast<size_t>(i)]);
      acc = acc.empty() ? v : combine(acc, v);
      s[static_cast<size_t>(i)] = acc;
      ids.push_back(i);
    }
    order.push_back(ids);
    total.push_back(acc);
  }
  // 2. Lanes: scan the group totals across the lanes along the axis.
  std::vector<int> lane_axis = axis_thread_bits(l, axis, 0, lane_bits);
  if (!lane_axis.empty()) {
    int64_t nl = int64_t{1} << lane_axis.size();
    ir::Value* k = gather_bits(lw, lw.lane(), lane_axis);
    if (reverse) k = lw.emit(OpKind::Sub, {lw.const_int(DType::i32, nl - 1), k}, i32);
    int64_t axis_mask = 0;
    for (int b : lane_axis) axis_mask |= int64_t{1} << b;
    ir::Value* others =
        lw.and_(lw.lane(), lw.const_int(DType::i32, ~axis_mask & (lw.subgroup() - 1)));
    auto lane_at = [&](ir::Value* kk) {  // the lane at scan position kk, same other bits
      if (reverse) kk = lw.emit(OpKind::Sub, {lw.const_int(DType::i32, nl - 1), kk}, i32);
      return lw.emit(OpKind::Or, {others, scatter_bits(lw, kk, lane_axis)}, i32);
    };
    for (int64_t step = 1; step < nl; step *= 2) {
      ir::Value* valid = lw.emit(OpKind::CmpGe, {k, lw.const_int(DType::i32, step)}, i1);
      ir::Value* src = lw.emit(OpKind::Max,
                               {lw.emit(OpKind::Sub, {k, lw.const_int(DType::i32, step)}, i32),
                                lw.const_int(DType::i32, 0)},
                               i32);
      ir::Value* src_lane = lane_at(src);
      for (Values& t : total) t = select(lw, valid, combine(shuffle_idx(lw, t, src_lane), t), t);
    }
    ir::Value* has_prev = lw.emit(OpKind::CmpGt, {k, lw.const_int(DType::i32, 0)}, i1);
    ir::Value* prev = lw.emit(
        OpKind::Max,
        {lw.emit(OpKind::Sub, {k, lw.const_int(DType::i32, 1)}, i32), lw.const_int(DType::i32, 0)},
        i32);
    ir::Value* prev_lane = lane_at(prev);
    for (size_t g = 0; g < order.size(); ++g) {
      Values excl = shuffle_idx(lw, total[g], prev_lane);
      for (int i : order[g])
        s[static_cast<size_t>(i)] = select(lw, has_prev, combine(excl, s[static_cast<size_t>(i)]),
                                           s[static_cast<size_t>(i)]);
    }
  }
  // 3. Subgroups: every subgroup adds the totals of the subgroups before it along the axis.
  std::vector<int> warp_axis =
      axis_thread_bits(l, axis, lane_bits, static_cast<int>(l.threads.size()));
  if (!warp_axis.empty()) {
    int64_t nw = int64_t{1} << warp_axis.size();
    ir::Value* w = gather_bits(lw, lw.tid(), warp_axis);
    if (reverse) w = lw.emit(OpKind::Sub, {lw.const_int(DType::i32, nw - 1), w}, i32);
    // Positions across the axis: the groups' coordinates with the axis zeroed, row-major over
    // the shape with the axis removed.
    Layout pos_l = slice(l, axis);
    int64_t npos = ir::num_elements(pos_l.shape);
    std::map<DType, int64_t> used;
    std::vector<int64_t> base(n);
    for (size_t k = 0; k < n; ++k) {
      base[k] = used[dtypes[k]];
      used[dtypes[k]] += nw * npos;
    }
    std::vector<int> buf(n);
    for (size_t k = 0; k < n; ++k) buf[k] = lw.scratch(dtypes[k], used[dtypes[k]]);
    ir::Value* last_lane = lw.const_bool(true);
    if (!lane_axis.empty()) {
      int64_t nl = int64_t{1} << lane_axis.size();
      ir::Value* k = gather_bits(lw, lw.lane(), lane_axis);
      ir::Value* target = lw.const_int(DType::i32, reverse ? 0 : nl - 1);
      last_lane = lw.emit(OpKind::CmpEq, {k, target}, i1);
    }
    ir::Value* writer = lw.and_(last_lane, lw.owner(l));
    std::vector<ir::Value*> pos;
    for (size_t g = 0; g < order.size(); ++g) {
      std::vector<int64_t> c = l.reg_coords(order[g][0]);
      c.erase(c.begin() + axis);
      int r = pos_l.reg_of(c);
      std::vector<ir::Value*> idx = lw.element_index(pos_l, r);
      ir::Value* p = lw.const_int(DType::i32, 0);
      for (int d = 0; d < pos_l.rank(); ++d) {
        int64_t stride = 1;
        for (int e = d + 1; e < pos_l.rank(); ++e) stride *= pos_l.shape[static_cast<size_t>(e)];
        p = lw.add(p, lw.mul(idx[static_cast<size_t>(d)], lw.const_int(DType::i32, stride)));
      }
      pos.push_back(p);
    }
    ir::Value* row = lw.mul(w, lw.const_int(DType::i32, npos));
    lw.guarded(writer, [&] {
      for (size_t g = 0; g < order.size(); ++g)
        for (size_t k = 0; k < n; ++k)
          lw.b().create(
              OpKind::SharedStore,
              {lw.add(lw.add(row, pos[g]), lw.const_int(DType::i32, base[k])), total[g][k]}, {},
              {{attr::kBuffer, int64_t{buf[k]}}, {attr::kWidth, int64_t{1}}});
    });
    lw.barrier();
    for (size_t g = 0; g < order.size(); ++g) {
      // prefix[j] = totals of subgroups 0..j-1 combined in order; pick prefix[w].
      Values prefix, chosen;
      for (int64_t j = 0; j + 1 < nw; ++j) {
        Values part;
        for (size_t k = 0; k < n; ++k)
          part.push_back(lw.b()
                             .create(OpKind::SharedLoad,
                                     {lw.add(pos[g], lw.const_int(DType::i32, base[k] + j * npos))},
                                     {Type::scalar(dtypes[k])},
                                     {{attr::kBuffer, int64_t{buf[k]}}, {attr::kWidth, int64_t{1}}})
                             ->result());
        prefix = prefix.empty() ? part : combine(prefix, part);
        ir::Value* is_next = lw.emit(OpKind::CmpEq, {w, lw.const_int(DType::i32, j + 1)}, i1);
        chosen = chosen.empty() ? prefix : select(lw, is_next, prefix, chosen);
      }
      ir::Value* has_prev = lw.emit(OpKind::CmpGt, {w, lw.const_int(DType::i32, 0)}, i1);
      for (int i : order[g])
        s[static_cast<size_t>(i)] = select(lw, has_prev, combine(chosen, s[static_cast<size_t>(i)]),
                                           s[static_cast<size_t>(i)]);
    }
    lw.barrier();
  }
  std::vector<Regs> out(n, Regs(static_cast<size_t>(l.num_regs())));
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t k = 0; k < n; ++k) out[k][i] = s[i][k];
  return out;
}

}  // namespace

void Lowerer::lower_scan(const ir::Op& op) {
  int axis = static_cast<int>(op.int_attr(attr::kAxis));
  bool reverse = op.int_attr_or(attr::kReverse, 0) != 0;
  const Layout& l = homes().home(op.result());
  std::vector<Regs> in;
  std::vector<DType> dtypes;
  for (const ir::Value* v : op.operands) {
    in.push_back(regs(v, l));
    dtypes.push_back(v->type.dtype);
  }
  Combine combine;
  DType wide = dtypes[0];
  if (op.kind == OpKind::Scan) {
    ir::ScanOp sc(&op);
    OpKind k = OpKind::Add;
    switch (sc.scan_kind()) {
      case ir::ReduceKind::Prod:
        k = OpKind::Mul;
        break;
      case ir::ReduceKind::Max:
        k = OpKind::Max;
        break;
      case ir::ReduceKind::Min:
        k = OpKind::Min;
        break;
      default:
        k = OpKind::Add;
        break;
    }
    Type elem = op.result()->type.element();
    if (sc.scan_kind() == ir::ReduceKind::Sum) {  // f16/bf16 sums add in f32 (ops.h)
      wide = ir::sum_accumulator(elem.dtype);
      if (wide != elem.dtype) {
        elem = Type::scalar(wide);
        for (ir::Value*& v : in[0]) v = emit(OpKind::Cast, {v}, elem);
        dtypes[0] = wide;
      }
    }
    std::vector<ir::Attribute> attrs;  // float max/min keep the scan's NaN rule
    if (!ir::propagates_nan(&op) && (k == OpKind::Max || k == OpKind::Min) &&
        ir::is_float(elem.dtype))
      attrs.push_back({attr::kNan, std::string("ignore")});
    combine = [this, k, elem, attrs](const Values& a, const Values& b) {
      return Values{emit(k, {a[0], b[0]}, elem, attrs)};
    };
  } else {
    const ir::Region* region = op.region(0);
    combine = [this, region](const Values& a, const Values& b) {
      return apply_combine(*region, a, b);
    };
  }
  std::vector<Regs> out = scan_core(*this, in, dtypes, l, axis, reverse, combine);
  if (op.kind == OpKind::Scan && wide != op.result()->type.dtype)
    for (ir::Value*& v : out[0]) v = emit(OpKind::Cast, {v}, op.result()->type.element());
  for (size_t k = 0; k < op.results.size(); ++k) define_tile(op.results[k], l, out[k]);
}

}  // namespace tessera::lower::detail
