/// \file Axis-info transfer functions for each op kind, and the fixed point over loops.
#include "core/lower/axis_info.h"

#include <algorithm>
#include <numeric>

#include "core/ir/ops.h"

namespace tessera::lower {
namespace {

using ir::OpKind;
constexpr int64_t kMaxDivisor = int64_t{1} << 30;

int64_t gcd(int64_t a, int64_t b) {
  return std::gcd(a, b);
}

int dims(const ir::Value* v) {
  return std::max(1, v->type.rank());
}

int64_t extent(const ir::Value* v, size_t d) {
  return v->type.is_tile() ? v->type.shape[d] : 1;
}

/// What divides x's elements at the starts of runs of `c` elements along d (c a power of two):
/// x's own divisibility where its runs are no longer than c (each such start is a start of one of
/// x's runs), else its run's first element plus a multiple of c (`unit` bytes per element for
/// pointers, 1 for integers).
int64_t at_run_starts(const AxisInfo& x, size_t d, int64_t c, int64_t unit = 1) {
  if (x.contiguity[d] <= c) return x.divisibility[d];
  return std::min(x.divisibility[d], c * unit);
}

class Analyzer {
 public:
  explicit Analyzer(std::unordered_map<const ir::Value*, AxisInfo>& info) : info_(info) {}

  void function(const ir::Function& fn) {
    for (const ir::Param& p : fn.params) info_[p.value] = param_info(p);
    region(*fn.body);
  }

 private:
  AxisInfo get(const ir::Value* v) const {
    auto it = info_.find(v);
    return it != info_.end() ? it->second : AxisInfo::unknown(v->type.rank());
  }

  static AxisInfo param_info(const ir::Param& p) {
    AxisInfo a = AxisInfo::unknown(0);
    const ir::AttrValue* d = ir::find_attr(p.attrs, attr::kDivisibility);
    if (d && std::holds_alternative<int64_t>(*d)) a.divisibility[0] = std::get<int64_t>(*d);
    return a;
  }

  void region(const ir::Region& r) {
    for (const ir::Op* op : r.ops) visit(*op);
  }

  void visit(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::For:
        return for_loop(op);
      case OpKind::While:
        return while_loop(op);
      case OpKind::If:
        return if_op(op);
      default:
        break;
    }
    for (const ir::Region* r : op.regions) region(*r);
    if (op.results.size() == 1) info_[op.result()] = transfer(op);
  }

  AxisInfo transfer(const ir::Op& op) const {
    const ir::Value* r = op.result();
    int n = dims(r);
    AxisInfo out = AxisInfo::unknown(r->type.rank());
    auto operand = [&](size_t i) { return get(op.operand(i)); };
    switch (op.kind) {
      case OpKind::Constant: {
        ir::ConstantOp c(&op);
        int64_t div = c.is_float() ? 1 : pow2_divisor(c.int_value());
        for (int d = 0; d < n; ++d) {
          out.divisibility[d] = div;
          out.constancy[d] = extent(r, static_cast<size_t>(d));
        }
        return out;
      }
      case OpKind::Arange: {
        ir::ArangeOp a(&op);
        out.contiguity[0] = extent(r, 0);
        out.divisibility[0] = pow2_divisor(a.start());
        return out;
      }
      case OpKind::Splat: {
        AxisInfo s = operand(0);
        for (int d = 0; d < n; ++d) {
          out.divisibility[d] = s.divisibility[0];
          out.constancy[d] = extent(r, static_cast<size_t>(d));
        }
        return out;
      }
      case OpKind::Broadcast: {
        AxisInfo s = operand(0);
        for (int d = 0; d < n; ++d) {
          bool bcast = op.operand(0)->type.shape[d] == 1 && r->type.shape[d] != 1;
          out.divisibility[d] = s.divisibility[d];
          out.contiguity[d] = bcast ? 1 : s.contiguity[d];
          out.constancy[d] = bcast ? r->type.shape[d] : s.constancy[d];
        }
        return out;
      }
      case OpKind::ExpandDims:
        return expand_dims(op, operand(0));
      case OpKind::Permute:
        return permute(op, operand(0), out);
      case OpKind::MultipleOf:
      case OpKind::MaxContiguous:
        return hinted(op, operand(0));
      case OpKind::Add:
      case OpKind::Sub:
      case OpKind::PtrAdd:
        return add_like(op, out);
      case OpKind::Mul:
        return mul(op, out);
      case OpKind::Rem:
      case OpKind::Div:
        return r->type.is_int() ? rem_div(op, out) : out;
      case OpKind::CmpEq:
      case OpKind::CmpNe:
      case OpKind::CmpLt:
      case OpKind::CmpLe:
      case OpKind::CmpGt:
      case OpKind::CmpGe:
        return compare(op, out);
      case OpKind::And:
      case OpKind::Or:
      case OpKind::Xor:
      case OpKind::Where:
      case OpKind::Not:
      case OpKind::Cast:
      case OpKind::Min:
      case OpKind::Max:
        return elementwise(op, out);
      default:
        return out;
    }
  }

  /// A new dimension at the op's axis: no runs along it.
  AxisInfo expand_dims(const ir::Op& op, AxisInfo s) const {
    int axis = static_cast<int>(op.int_attr(attr::kAxis));
    // Along the new dimension every element starts a run: a divisor of all of them. Where
    // no dimension holds runs of consecutive values, each element starts a run in every
    // dimension, so any dimension's divisor divides it; else consecutive values share only 1.
    const bool runs =
        std::any_of(s.contiguity.begin(), s.contiguity.end(), [](int64_t c) { return c > 1; });
    int64_t div = runs ? 1 : *std::max_element(s.divisibility.begin(), s.divisibility.end());
    s.contiguity.insert(s.contiguity.begin() + axis, 1);
    s.divisibility.insert(s.divisibility.begin() + axis, div);
    s.constancy.insert(s.constancy.begin() + axis, 1);
    return s;
  }

  /// The operand's facts in the op's order of dimensions.
  AxisInfo permute(const ir::Op& op, const AxisInfo& s, AxisInfo out) const {
    const auto& order = op.ints_attr(attr::kOrder);
    for (size_t i = 0; i < order.size(); ++i) {
      out.contiguity[i] = s.contiguity[static_cast<size_t>(order[i])];
      out.divisibility[i] = s.divisibility[static_cast<size_t>(order[i])];
      out.constancy[i] = s.constancy[static_cast<size_t>(order[i])];
    }
    return out;
  }

  /// multiple_of and max_contiguous: the user's facts, where larger than the operand's.
  AxisInfo hinted(const ir::Op& op, AxisInfo out) const {
    const int n = dims(op.result());
    const auto& vals = op.ints_attr(attr::kValues);
    for (int d = 0; d < n && d < static_cast<int>(vals.size()); ++d) {
      int64_t v = pow2_divisor(vals[static_cast<size_t>(d)]);
      if (op.kind == OpKind::MultipleOf)
        out.divisibility[d] = std::max(out.divisibility[d], v);
      else
        out.contiguity[d] = std::max(out.contiguity[d], v);
    }
    return out;
  }

  /// Bitwise ops, selects, casts, min and max: constancy survives any elementwise function of
  /// equally constant operands; a widening integer cast keeps runs and divisors too.
  AxisInfo elementwise(const ir::Op& op, AxisInfo out) const {
    const ir::Value* r = op.result();
    const int n = dims(r);
    for (int d = 0; d < n; ++d) {
      int64_t c = extent(r, static_cast<size_t>(d));
      for (const ir::Value* v : op.operands)
        c = gcd(c, get(v).constancy[std::min<size_t>(d, dims(v) - 1)]);
      out.constancy[d] = c;
    }
    if (op.kind == OpKind::Cast && ir::is_int(op.operand(0)->type.dtype) && r->type.is_int() &&
        ir::dtype_bits(r->type.dtype) >= ir::dtype_bits(op.operand(0)->type.dtype)) {
      AxisInfo s = get(op.operand(0));
      out.contiguity = s.contiguity;
      out.divisibility = s.divisibility;
    }
    return out;
  }

  AxisInfo add_like(const ir::Op& op, AxisInfo out) const {
    AxisInfo a = get(op.operand(0)), b = get(op.operand(1));
    const ir::Value* r = op.result();
    int64_t scale = op.kind == OpKind::PtrAdd ? ir::dtype_bytes(r->type.dtype) : 1;
    const int64_t a_unit = op.kind == OpKind::PtrAdd ? scale : 1;
    for (size_t d = 0; d < out.contiguity.size(); ++d) {
      int64_t contig = gcd(a.contiguity[d], b.constancy[d]);
      if (op.kind != OpKind::Sub) contig = std::max(contig, gcd(a.constancy[d], b.contiguity[d]));
      out.contiguity[d] = contig;
      // The result's runs start where a's and b's values are their run starts' plus multiples
      // of contig (at_run_starts).
      out.divisibility[d] = std::min(kMaxDivisor, gcd(at_run_starts(a, d, contig, a_unit),
                                                      at_run_starts(b, d, contig) * scale));
      out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
    }
    return out;
  }

  AxisInfo mul(const ir::Op& op, AxisInfo out) const {
    AxisInfo a = get(op.operand(0)), b = get(op.operand(1));
    for (size_t d = 0; d < out.contiguity.size(); ++d) {
      out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
      // x * 1 keeps x's runs; any other product has runs of one element.
      if (is_one(op.operand(1))) out.contiguity[d] = a.contiguity[d];
      if (is_one(op.operand(0))) out.contiguity[d] = b.contiguity[d];
      const int64_t c = out.contiguity[d];
      out.divisibility[d] = std::min(kMaxDivisor, at_run_starts(a, d, c) * at_run_starts(b, d, c));
    }
    return out;
  }

  /// `a % b` and `a / b` (C's truncating forms). Every element is a - q * b, so the remainder's
  /// divisibility is gcd(a's, b's) whatever the signs. Where a >= 0 (provably_nonneg or the
  /// `nonneg` fact) and b is constant over runs of c consecutive values of a that start at
  /// multiples of c, with c dividing b: a run v0 .. v0 + c - 1 lies inside one block
  /// [q|b|, (q+1)|b|), so its remainders are consecutive (contiguity c) and its quotients equal
  /// (constancy c). With a negative a no run is claimed.
  AxisInfo rem_div(const ir::Op& op, AxisInfo out) const {
    AxisInfo a = get(op.operand(0)), b = get(op.operand(1));
    const bool fact = op.int_attr_or(kNonnegAttr, 0) != 0 || provably_nonneg(op.operand(0));
    for (size_t d = 0; d < out.contiguity.size(); ++d) {
      out.constancy[d] = gcd(a.constancy[d], b.constancy[d]);
      int64_t c = 1;
      if (fact) {
        c = std::min({a.contiguity[d], b.divisibility[d], b.constancy[d]});
        c = std::min(c, at_run_starts(a, d, c));  // the runs' first values are multiples of c
      }
      if (op.kind == OpKind::Rem) {
        out.contiguity[d] = c;
        out.divisibility[d] =
            std::min(kMaxDivisor, gcd(at_run_starts(a, d, c), at_run_starts(b, d, c)));
      } else {
        out.constancy[d] = std::max(out.constancy[d], c);
      }
    }
    return out;
  }

  static bool is_one(const ir::Value* v) {
    const ir::Op* def = v->def;
    while (def && def->kind == OpKind::Splat) def = def->operand(0)->def;
    return def && def->kind == OpKind::Constant && !ir::ConstantOp(def).is_float() &&
           ir::ConstantOp(def).int_value() == 1;
  }

  AxisInfo compare(const ir::Op& op, AxisInfo out) const {
    AxisInfo a = get(op.operand(0)), b = get(op.operand(1));
    for (size_t d = 0; d < out.constancy.size(); ++d) {
      int64_t c = gcd(a.constancy[d], b.constancy[d]);
      // A contiguous run compared with a constant changes value at most once, at a multiple of
      // both divisibilities: runs of their gcd are constant.
      if (b.constancy[d] > 1 && a.contiguity[d] > 1)
        c = std::max(c, gcd(a.contiguity[d], gcd(a.divisibility[d], b.divisibility[d])));
      if (a.constancy[d] > 1 && b.contiguity[d] > 1)
        c = std::max(c, gcd(b.contiguity[d], gcd(a.divisibility[d], b.divisibility[d])));
      out.constancy[d] = c;
    }
    return out;
  }

  /// What holds of both x and y (a value that is one or the other).
  static AxisInfo join(const AxisInfo& x, const AxisInfo& y) {
    AxisInfo out = x;
    for (size_t d = 0; d < out.contiguity.size(); ++d) {
      const int64_t c = gcd(x.contiguity[d], y.contiguity[d]);
      out.contiguity[d] = c;
      out.divisibility[d] = gcd(at_run_starts(x, d, c), at_run_starts(y, d, c));
      out.constancy[d] = gcd(x.constancy[d], y.constancy[d]);
    }
    return out;
  }

  void for_loop(const ir::Op& op) {
    ir::ForOp f(&op);
    AxisInfo iv = AxisInfo::unknown(0);
    iv.divisibility[0] = gcd(get(f.lower()).divisibility[0], get(f.step()).divisibility[0]);
    info_[f.iv()] = iv;
    loop_fixpoint(op, f.body(), f.inits(), f.iter_args());
  }

  void while_loop(const ir::Op& op) {
    ir::WhileOp w(&op);
    for (size_t i = 0; i < w.before()->args.size(); ++i)
      info_[w.before()->args[i]] = AxisInfo::unknown(w.before()->args[i]->type.rank());
    for (size_t i = 0; i < w.after()->args.size(); ++i)
      info_[w.after()->args[i]] = AxisInfo::unknown(w.after()->args[i]->type.rank());
    region(*w.before());
    region(*w.after());
    for (const ir::Value* r : op.results) info_[r] = AxisInfo::unknown(r->type.rank());
  }

  void loop_fixpoint(const ir::Op& op, const ir::Region* body, std::span<ir::Value* const> inits,
                     std::span<ir::Value* const> args) {
    for (size_t i = 0; i < args.size(); ++i) info_[args[i]] = get(inits[i]);
    // Joins only shrink the facts (powers of two), so this settles; should it not within the
    // bound, every argument is made unknown (what holds of any value) and the body analyzed once
    // more.
    constexpr int kMaxIterations = 64;
    bool settled = false;
    for (int iter = 0; iter < kMaxIterations && !settled; ++iter) {
      region(*body);
      const ir::Op* y = body->terminator();
      settled = true;
      for (size_t i = 0; i < args.size(); ++i) {
        AxisInfo joined = join(get(args[i]), get(y->operand(i)));
        if (joined == get(args[i])) continue;
        info_[args[i]] = joined;
        settled = false;
      }
    }
    if (!settled) {
      for (const ir::Value* a : args) info_[a] = AxisInfo::unknown(a->type.rank());
      region(*body);
    }
    for (size_t i = 0; i < op.results.size(); ++i) info_[op.results[i]] = get(args[i]);
  }

  void if_op(const ir::Op& op) {
    ir::IfOp f(&op);
    region(*f.then_region());
    region(*f.else_region());
    for (size_t i = 0; i < op.results.size(); ++i)
      info_[op.results[i]] = join(get(f.then_region()->terminator()->operand(i)),
                                  get(f.else_region()->terminator()->operand(i)));
  }

  std::unordered_map<const ir::Value*, AxisInfo>& info_;
};

constexpr int kMaxSignDepth = 32;

bool nonneg_constant(const ir::Value* v) {
  const ir::Op* def = v->def;
  if (!def || def->kind != OpKind::Constant) return false;
  const ir::ConstantOp c(def);
  return !c.is_float() && c.int_value() >= 0;
}

bool nonneg(const ir::Value* v, int depth) {
  if (depth > kMaxSignDepth || !v->type.is_int()) return false;
  if (!ir::is_signed_int(v->type.dtype)) return false;  // i1 and unsigned: not analysed
  if (v->is_arg()) {
    // A for loop's counter runs from its lower bound up by its step.
    const ir::Op* loop = v->owner ? v->owner->parent : nullptr;
    if (!loop || loop->kind != OpKind::For || ir::ForOp(loop).iv() != v) return false;
    const ir::ForOp f(loop);
    return nonneg(f.lower(), depth + 1) && nonneg(f.step(), depth + 1);
  }
  const ir::Op& op = *v->def;
  auto operand = [&](size_t i) { return nonneg(op.operand(i), depth + 1); };
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      return true;
    case OpKind::Constant:
      return nonneg_constant(v);
    case OpKind::Arange:
      return ir::ArangeOp(&op).start() >= 0;
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::MultipleOf:
    case OpKind::MaxContiguous:
      return operand(0);
    case OpKind::Cast:  // a signed integer widened keeps its value
      return ir::is_signed_int(op.operand(0)->type.dtype) &&
             ir::dtype_bits(v->type.dtype) >= ir::dtype_bits(op.operand(0)->type.dtype) &&
             operand(0);
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Min:
    case OpKind::Cat:
      return operand(0) && operand(1);
    case OpKind::Max:
    case OpKind::And:
      return operand(0) || operand(1);
    case OpKind::Rem:  // the remainder takes the sign of the left side
      return op.int_attr_or(kNonnegAttr, 0) != 0 || operand(0);
    case OpKind::Shr:
      return operand(0);
    case OpKind::Where:
      return operand(1) && operand(2);
    default:
      return false;
  }
}

}  // namespace

bool provably_nonneg(const ir::Value* v) {
  return nonneg(v, 0);
}

int64_t pow2_divisor(int64_t v) {
  if (v == 0) return kMaxDivisor;
  return std::min(kMaxDivisor, int64_t{1} << std::countr_zero(static_cast<uint64_t>(v)));
}

AxisInfo AxisInfo::unknown(int rank) {
  size_t n = static_cast<size_t>(std::max(1, rank));
  return AxisInfo{std::vector<int64_t>(n, 1), std::vector<int64_t>(n, 1),
                  std::vector<int64_t>(n, 1)};
}

AxisInfoMap::AxisInfoMap(const ir::Function& fn) {
  Analyzer(info_).function(fn);
}

const AxisInfo& AxisInfoMap::get(const ir::Value* v) const {
  auto it = info_.find(v);
  if (it != info_.end()) return it->second;
  return unknown_scalar_;
}

}  // namespace tessera::lower
