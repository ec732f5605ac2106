/// \file Reductions and scans across registers (in-thread), lanes (shuffles) and subgroups (shared
/// memory), for the builtin kinds and for generic combine regions. Generic combines must see the
/// lower-index operand first, so they run over axis bits in increasing significance.
#include <algorithm>
#include <cmath>
#include <functional>

#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;
using Values = std::vector<ir::Value*>;
using Combine = std::function<Values(const Values& left, const Values& right)>;
/// Folds the registers of one output position (given in axis order) into one value set.
using Fold = std::function<Values(const std::vector<Values>& members)>;

/// Axis bits of layout `l`, in increasing significance, as (slot kind, slot index): kind 0 is a
/// register bit, 1 a thread bit.
struct AxisSlots {
  std::vector<int> regs;   // register bit indices naming the axis, by axis bit
  std::vector<int> lanes;  // thread bit indices < log2(S) naming the axis, by axis bit
  std::vector<int> warps;  // thread bit indices >= log2(S) naming the axis, by axis bit
  bool monotone = true;    // registers < lanes < warps in axis-bit order
};

AxisSlots axis_slots(const Layout& l, int axis, int subgroup) {
  AxisSlots s;
  int lane_bits = log2_exact(subgroup);
  int bits = log2_exact(l.shape[static_cast<size_t>(axis)]);
  int last = 0;
  for (int b = 0; b < bits; ++b) {
    for (size_t i = 0; i < l.regs.size(); ++i)
      if (l.regs[i] == DimBit{axis, b}) {
        s.regs.push_back(static_cast<int>(i));
        s.monotone = s.monotone && last <= 0;
        last = 0;
      }
    for (size_t i = 0; i < l.threads.size(); ++i)
      if (l.threads[i] == DimBit{axis, b}) {
        int kind = static_cast<int>(i) < lane_bits ? 1 : 2;
        (kind == 1 ? s.lanes : s.warps).push_back(static_cast<int>(i));
        s.monotone = s.monotone && last <= kind;
        last = kind;
      }
  }
  return s;
}

/// Combines `vs` (given in axis order) pairwise, neighbours first, level by level: a tree of depth
/// ceil(log2 n) in place of a chain of n - 1 dependent combines, so the combines of one level
/// issue back to back (H200 layer norm fp16 at BLOCK 8192: three chains of 31 dependent f32 adds
/// per thread became trees of depth 5). The left operand always precedes the right one along the
/// axis, so an associative combine, commutative or not, gives the chain's value up to rounding.
Values tree_combine(std::vector<Values> vs, const Combine& combine) {
  TESSERA_CHECK(!vs.empty(), "tree_combine of no values");
  while (vs.size() > 1) {
    std::vector<Values> next;
    next.reserve((vs.size() + 1) / 2);
    for (size_t i = 0; i + 1 < vs.size(); i += 2) next.push_back(combine(vs[i], vs[i + 1]));
    if (vs.size() % 2) next.push_back(std::move(vs.back()));
    vs = std::move(next);
  }
  return std::move(vs[0]);
}

}  // namespace

/// The core of every reduction: `in[k]` are the registers of value k (one per tile reduced
/// together) in layout `l`; returns the reduced registers in slice(l, axis). `fold`, when given,
/// folds each output position's registers in place of `combine` applied left to right.
std::vector<Regs> reduce_core(Lowerer& lw, const std::vector<Regs>& in,
                              const std::vector<DType>& dtypes, const Layout& l, int axis,
                              bool commutative, const Combine& combine, const Fold& fold = {}) {
  Layout out_l = slice(l, axis);
  AxisSlots slots = axis_slots(l, axis, lw.subgroup());
  TESSERA_CHECK(commutative || slots.monotone, "ordered reduction over a non-monotone layout");
  size_t n = in.size();
  // 1. Registers: combine the registers of each output position as a tree, in axis order.
  std::vector<Values> acc(static_cast<size_t>(out_l.num_regs()));
  std::vector<std::vector<std::pair<int64_t, int>>> members(acc.size());
  for (int i = 0; i < l.num_regs(); ++i) {
    std::vector<int64_t> c = l.reg_coords(i);
    int64_t along = c[static_cast<size_t>(axis)];
    c.erase(c.begin() + axis);
    int o = out_l.reg_of(c);
    TESSERA_CHECK(o >= 0, "reduction register mapping failed");
    members[static_cast<size_t>(o)].push_back({along, i});
  }
  for (size_t o = 0; o < acc.size(); ++o) {
    std::sort(members[o].begin(), members[o].end());
    std::vector<Values> vs;
    for (auto [along, i] : members[o]) {
      Values v;
      for (size_t k = 0; k < n; ++k) v.push_back(in[k][static_cast<size_t>(i)]);
      vs.push_back(v);
    }
    if (fold) {
      acc[o] = fold(vs);
      continue;
    }
    acc[o] = tree_combine(std::move(vs), combine);
  }
  // 2. Lanes: butterfly over each lane bit of the axis, lower lane on the left.
  ir::Type i32 = Type::scalar(DType::i32), i1 = Type::scalar(DType::i1);
  for (int bit : slots.lanes) {
    ir::Value* mask = lw.const_int(DType::i32, int64_t{1} << bit);
    ir::Value* upper = nullptr;
    if (!commutative) {
      ir::Value* b = lw.and_(lw.lane(), mask);
      upper = lw.emit(OpKind::CmpNe, {b, lw.const_int(DType::i32, 0)}, i1);
    }
    for (Values& a : acc) {
      Values other;
      for (ir::Value* v : a)
        other.push_back(
            lw.emit(OpKind::Shuffle, {v, mask}, v->type, {{attr::kMode, std::string("xor")}}));
      if (commutative) {
        a = combine(a, other);
        continue;
      }
      Values lo, hi;
      for (size_t k = 0; k < n; ++k) {
        lo.push_back(lw.emit(OpKind::Where, {upper, other[k], a[k]}, a[k]->type));
        hi.push_back(lw.emit(OpKind::Where, {upper, a[k], other[k]}, a[k]->type));
      }
      a = combine(lo, hi);
    }
  }
  (void)i32;
  // 3. Subgroups: one partial per subgroup position along the axis, through shared memory.
  if (!slots.warps.empty()) {
    int64_t nw = int64_t{1} << slots.warps.size();
    int64_t out_numel = ir::num_elements(out_l.shape);
    int64_t lane_axis_mask = 0;
    for (int bit : slots.lanes) lane_axis_mask |= int64_t{1} << bit;
    ir::Value* writer = lw.owner(l);
    if (lane_axis_mask) {
      ir::Value* lb = lw.and_(lw.tid(), lw.const_int(DType::i32, lane_axis_mask));
      ir::Value* first = lw.emit(OpKind::CmpEq, {lb, lw.const_int(DType::i32, 0)}, i1);
      writer = lw.and_(writer, first);
    }
    ir::Value* widx = lw.const_int(DType::i32, 0);
    for (size_t j = 0; j < slots.warps.size(); ++j) {
      ir::Value* b =
          lw.emit(OpKind::Shr, {lw.tid(), lw.const_int(DType::i32, slots.warps[j])}, i32);
      b = lw.and_(b, lw.const_int(DType::i32, 1));
      widx = lw.add(
          widx, lw.emit(OpKind::Shl, {b, lw.const_int(DType::i32, static_cast<int64_t>(j))}, i32));
    }
    // Each value k gets its own slice of its dtype's scratch buffer.
    std::vector<int> buf(n);
    std::vector<int64_t> base(n);
    std::map<DType, int64_t> used;
    for (size_t k = 0; k < n; ++k) {
      base[k] = used[dtypes[k]];
      used[dtypes[k]] += nw * out_numel;
    }
    for (size_t k = 0; k < n; ++k) buf[k] = lw.scratch(dtypes[k], used[dtypes[k]]);
    std::vector<ir::Value*> pos(acc.size());
    for (size_t o = 0; o < acc.size(); ++o) {
      std::vector<ir::Value*> idx = lw.element_index(out_l, static_cast<int>(o));
      ir::Value* p = lw.const_int(DType::i32, 0);
      for (int d = 0; d < out_l.rank(); ++d) {
        int64_t stride = 1;
        for (int e = d + 1; e < out_l.rank(); ++e) stride *= out_l.shape[static_cast<size_t>(e)];
        p = lw.add(p, lw.mul(idx[static_cast<size_t>(d)], lw.const_int(DType::i32, stride)));
      }
      pos[o] = p;
    }
    ir::Value* row = lw.mul(widx, lw.const_int(DType::i32, out_numel));
    lw.guarded(writer, [&] {
      for (size_t o = 0; o < acc.size(); ++o)
        for (size_t k = 0; k < n; ++k) {
          ir::Value* at = lw.add(lw.add(row, pos[o]), lw.const_int(DType::i32, base[k]));
          lw.b().create(OpKind::SharedStore, {at, acc[o][k]}, {},
                        {{attr::kBuffer, int64_t{buf[k]}}, {attr::kWidth, int64_t{1}}});
        }
    });
    lw.barrier();
    for (size_t o = 0; o < acc.size(); ++o) {
      std::vector<Values> parts;  // one per subgroup position, in axis order
      for (int64_t w = 0; w < nw; ++w) {
        Values part;
        for (size_t k = 0; k < n; ++k) {
          ir::Value* at = lw.add(pos[o], lw.const_int(DType::i32, base[k] + w * out_numel));
          part.push_back(lw.b()
                             .create(OpKind::SharedLoad, {at}, {Type::scalar(dtypes[k])},
                                     {{attr::kBuffer, int64_t{buf[k]}}, {attr::kWidth, int64_t{1}}})
                             ->result());
        }
        parts.push_back(std::move(part));
      }
      acc[o] = tree_combine(std::move(parts), combine);
    }
    lw.barrier();
  }
  std::vector<Regs> out(n, Regs(acc.size()));
  for (size_t o = 0; o < acc.size(); ++o)
    for (size_t k = 0; k < n; ++k) out[k][o] = acc[o][k];
  return out;
}

namespace {

/// x > y in argmax's total order: NaN above everything, +0 above -0.
ir::Value* arg_greater(Lowerer& lw, ir::Value* x, ir::Value* y, bool is_max) {
  Type i1 = Type::scalar(DType::i1);
  DType t = x->type.dtype;
  OpKind strict = is_max ? OpKind::CmpGt : OpKind::CmpLt;
  if (!ir::is_float(t)) return lw.emit(strict, {x, y}, i1);
  ir::Value* xn = lw.emit(OpKind::CmpNe, {x, x}, i1);
  ir::Value* yn = lw.emit(OpKind::CmpNe, {y, y}, i1);
  ir::Value* not_yn = lw.emit(OpKind::Not, {yn}, i1);
  ir::Value* nan_case = lw.and_(xn, not_yn);
  ir::Value* any_nan = lw.emit(OpKind::Or, {xn, yn}, i1);
  // Signed zeros: equal values with different sign bits.
  DType bits =
      ir::dtype_bits(t) == 64 ? DType::i64 : (ir::dtype_bits(t) == 32 ? DType::i32 : DType::i16);
  ir::Value* xs =
      lw.emit(OpKind::CmpLt,
              {lw.emit(OpKind::Bitcast, {x}, Type::scalar(bits)), lw.const_int(bits, 0)}, i1);
  ir::Value* ys =
      lw.emit(OpKind::CmpLt,
              {lw.emit(OpKind::Bitcast, {y}, Type::scalar(bits)), lw.const_int(bits, 0)}, i1);
  ir::Value* eq = lw.emit(OpKind::CmpEq, {x, y}, i1);
  ir::Value* zero_order = is_max ? lw.and_(lw.emit(OpKind::Not, {xs}, i1), ys)
                                 : lw.and_(xs, lw.emit(OpKind::Not, {ys}, i1));
  ir::Value* ordered = lw.emit(OpKind::Where, {eq, zero_order, lw.emit(strict, {x, y}, i1)}, i1);
  return lw.emit(OpKind::Where, {any_nan, nan_case, ordered}, i1);
}

/// The pairwise combine of a builtin reduce kind; float max/min carry the reduce's NaN rule
/// (`propagate` false: nan = "ignore", Triton's tl.max/tl.min).
Combine builtin_combine(Lowerer& lw, ir::ReduceKind kind, Type elem, bool propagate) {
  using K = ir::ReduceKind;
  if (kind == K::ArgMax || kind == K::ArgMin) {
    bool is_max = kind == K::ArgMax;
    return [&lw, is_max](const Values& a, const Values& b) {
      Type i1 = Type::scalar(DType::i1);
      ir::Value* b_more = arg_greater(lw, b[0], a[0], is_max);
      ir::Value* a_more = arg_greater(lw, a[0], b[0], is_max);
      ir::Value* tie = lw.emit(OpKind::Not, {lw.emit(OpKind::Or, {b_more, a_more}, i1)}, i1);
      ir::Value* lower = lw.emit(OpKind::CmpLt, {b[1], a[1]}, i1);
      ir::Value* take_b = lw.emit(OpKind::Or, {b_more, lw.and_(tie, lower)}, i1);
      return Values{lw.emit(OpKind::Where, {take_b, b[0], a[0]}, a[0]->type),
                    lw.emit(OpKind::Where, {take_b, b[1], a[1]}, a[1]->type)};
    };
  }
  OpKind op = OpKind::Add;
  switch (kind) {
    case K::Sum:
      op = OpKind::Add;
      break;
    case K::Prod:
      op = OpKind::Mul;
      break;
    case K::Max:
      op = OpKind::Max;
      break;
    case K::Min:
      op = OpKind::Min;
      break;
    case K::XorSum:
      op = OpKind::Xor;
      break;
    case K::And:
      op = OpKind::And;
      break;
    case K::Or:
      op = OpKind::Or;
      break;
    default:
      break;
  }
  std::vector<ir::Attribute> attrs;
  if (!propagate && (op == OpKind::Max || op == OpKind::Min) && ir::is_float(elem.dtype))
    attrs.push_back({attr::kNan, std::string("ignore")});
  return [&lw, op, elem, attrs](const Values& a, const Values& b) {
    return Values{lw.emit(op, {a[0], b[0]}, elem, attrs)};
  };
}

/// The in-register fold of a float max/min (NaN-propagating) on a target whose propagating
/// min/max is not one instruction (SPIR-V: FMax, two NaN tests and two selects): the registers
/// fold with the NaN-ignoring op (-0 < +0 kept), each is tested for NaN (x != x; the tests OR
/// into one predicate), and the result is NaN if any was: the same value in about 2 instead of 5
/// instructions per register (H200, Vulkan softmax 4096x16384: 187 -> ~143 us with no NaN test
/// at all). Lanes and subgroups still combine with the propagating op.
Fold nan_test_fold(Lowerer& lw, OpKind op, Type elem) {
  return [&lw, op, elem](const std::vector<Values>& vs) {
    if (vs.size() == 1) return vs[0];
    Type i1 = Type::scalar(DType::i1);
    std::vector<Values> nans;
    for (const Values& v : vs) nans.push_back({lw.emit(OpKind::CmpNe, {v[0], v[0]}, i1)});
    ir::Value* any_nan = tree_combine(std::move(nans), [&lw, i1](const Values& a, const Values& b) {
      return Values{lw.emit(OpKind::Or, {a[0], b[0]}, i1)};
    })[0];
    ir::Value* acc = tree_combine(vs, [&lw, op, elem](const Values& a, const Values& b) {
      return Values{lw.emit(op, {a[0], b[0]}, elem, {{attr::kNan, std::string("ignore")}})};
    })[0];
    return Values{lw.emit(OpKind::Where, {any_nan, lw.const_float(elem.dtype, NAN), acc}, elem)};
  };
}

/// The axis coordinate of each register of this thread (for argmax/argmin indices).
Regs axis_coords(Lowerer& lw, const Layout& l, int axis) {
  ir::Value* t = lw.thread_coord(l, axis);
  Regs out;
  for (int i = 0; i < l.num_regs(); ++i) {
    int64_t c = l.reg_coords(i)[static_cast<size_t>(axis)];
    out.push_back(c ? lw.add(t, lw.const_int(DType::i32, c)) : t);
  }
  return out;
}

}  // namespace

void Lowerer::lower_reduce(const ir::Op& op) {
  ir::ReduceOp red(&op);
  const ir::Value* x = red.input();
  Layout l = homes().layout_for(x);
  int axis = red.axis();
  ir::ReduceKind kind = red.reduce_kind();
  Type elem = x->type.element();
  std::vector<Regs> in = {regs(x, l)};
  const DType wide = kind == ir::ReduceKind::Sum ? ir::sum_accumulator(elem.dtype) : elem.dtype;
  if (wide != elem.dtype) {  // f16/bf16 sums add in f32 and round each result once (ops.h)
    elem = Type::scalar(wide);
    for (ir::Value*& v : in[0]) v = emit(OpKind::Cast, {v}, elem);
  }
  std::vector<DType> dtypes = {elem.dtype};
  if (kind == ir::ReduceKind::ArgMax || kind == ir::ReduceKind::ArgMin) {
    in.push_back(axis_coords(*this, l, axis));
    dtypes.push_back(DType::i32);
  }
  Fold fold;
  const bool propagate = ir::propagates_nan(&op);
  if ((kind == ir::ReduceKind::Max || kind == ir::ReduceKind::Min) && ir::is_float(elem.dtype) &&
      propagate && !target().has(target::Cap::NanMinMax))
    fold = nan_test_fold(*this, kind == ir::ReduceKind::Max ? OpKind::Max : OpKind::Min, elem);
  std::vector<Regs> out = reduce_core(*this, in, dtypes, l, axis, true,
                                      builtin_combine(*this, kind, elem, propagate), fold);
  Regs result = out.back();
  const ir::Value* r = op.result();
  if (wide != x->type.dtype)
    for (ir::Value*& v : result) v = emit(OpKind::Cast, {v}, r->type.element());
  if (!r->type.is_tile()) return define_scalar(r, result[0]);
  define_tile(r, slice(l, axis), result);
}

void Lowerer::lower_reduce_generic(const ir::Op& op) {
  ir::ReduceGenericOp red(&op);
  int axis = red.axis();
  Layout home_in = homes().layout_for(op.operand(0));
  Layout l = home_in;
  AxisSlots slots = axis_slots(l, axis, subgroup());
  if (!slots.monotone) {
    std::vector<int> order = {axis};
    for (int d = l.rank() - 1; d >= 0; --d)
      if (d != axis) order.push_back(d);
    int64_t n = l.shape[static_cast<size_t>(axis)];
    l = blocked(l.shape, order, static_cast<int>(std::max<int64_t>(1, n / threads())), threads());
  }
  std::vector<Regs> in;
  std::vector<DType> dtypes;
  for (const ir::Value* v : op.operands) {
    in.push_back(regs(v, l));
    dtypes.push_back(v->type.dtype);
  }
  Combine combine = [this, &red](const Values& a, const Values& b) {
    return apply_combine(*red.combine(), a, b);
  };
  std::vector<Regs> out = reduce_core(*this, in, dtypes, l, axis, false, combine);
  for (size_t k = 0; k < op.results.size(); ++k) {
    const ir::Value* r = op.results[k];
    if (!r->type.is_tile()) {
      define_scalar(r, out[k][0]);
      continue;
    }
    define_tile(r, homes().home(r),
                convert(out[k], r->type.element(), slice(l, axis), homes().home(r)));
  }
}

}  // namespace tessera::lower::detail
