/// \file The built-in reductions and scans along any axis of a 1-3-D (or wider) tile.
///
/// Order, which matters only for float sum and prod: a reduction combines adjacent pairs level
/// by level (an order-preserving pairwise tree: (x0+x1)+(x2+x3), ...), like reduce_generic; a
/// scan folds in index order (from the end when reversed, the carry being the left operand).
/// f16/bf16 sums add in f32 (ir::sum_accumulator) and round each result once.
#include "core/interp/reduce.h"

#include <cstring>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"

namespace tessera::interp {

AxisSplit split_axis(const ir::Shape& shape, int axis) {
  TESSERA_CHECK(axis >= 0 && axis < static_cast<int>(shape.size()), "axis ", axis,
                " of a tile of shape ", ir::shape_str(shape));
  AxisSplit s;
  for (int d = 0; d < axis; ++d) s.outer *= shape[d];
  s.n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

namespace {

using ir::Op;
using ir::ReduceKind;

/// Folds each [o, :, i] line of `buf` (laid out [outer, n, inner]) into buf[o, 0, i] by
/// combining adjacent pairs level by level; `pick(dst, left, right)` writes the combination.
template <class Pick>
void tree_fold(const AxisSplit& s, Pick&& pick) {
  for (int64_t w = s.n; w > 1; w = (w + 1) / 2) {
    const int64_t half = w / 2;
    for (int64_t o = 0; o < s.outer; ++o) {
      const int64_t base = o * s.n * s.inner;
      for (int64_t j = 0; j < half; ++j)
        for (int64_t i = 0; i < s.inner; ++i)
          pick(base + j * s.inner + i, base + 2 * j * s.inner + i,
               base + (2 * j + 1) * s.inner + i);
      if (w % 2 == 0) continue;
      for (int64_t i = 0; i < s.inner; ++i)  // an odd one out moves down unchanged
        pick(base + half * s.inner + i, base + (w - 1) * s.inner + i, -1);
    }
  }
}

/// The pairwise combine of a value-producing reduce/scan kind.
template <class T>
auto combiner(ReduceKind kind, bool propagate) {
  using S = typename T::S;
  return [kind, propagate](S a, S b) -> S {
    switch (kind) {
      case ReduceKind::Sum:
        return num::add<T>(a, b);
      case ReduceKind::Prod:
        return num::mul<T>(a, b);
      case ReduceKind::Max:
        return num::max<T>(a, b, propagate);
      case ReduceKind::Min:
        return num::min<T>(a, b, propagate);
      default:
        break;
    }
    if constexpr (T::kFloat) {
      return a;  // unreachable: bitwise kinds on floats are rejected first
    } else {
      const uint64_t x = num::widen<T>(a), y = num::widen<T>(b);
      if (kind == ReduceKind::And) return num::wrap<T>(x & y);
      if (kind == ReduceKind::Or) return num::wrap<T>(x | y);
      return num::wrap<T>(x ^ y);
    }
  };
}

bool is_bitwise(ReduceKind k) {
  return k == ReduceKind::XorSum || k == ReduceKind::And || k == ReduceKind::Or;
}

template <class T>
void reduce_values(const RuntimeValue& in, RuntimeValue& out, const AxisSplit& s, ReduceKind kind,
                   bool propagate) {
  using S = typename T::S;
  const S* src = in.data<S>();
  std::vector<S> buf(src, src + in.numel());
  auto combine = combiner<T>(kind, propagate);
  tree_fold(s, [&](int64_t dst, int64_t l, int64_t r) {
    buf[dst] = r < 0 ? buf[l] : combine(buf[l], buf[r]);
  });
  S* dst = out.data<S>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) dst[o * s.inner + i] = buf[o * s.n * s.inner + i];
}

/// argmax/argmin: the first extreme element's index; the right element wins only when strictly
/// more extreme, so ties go to the lower index.
template <class T>
void reduce_index(const RuntimeValue& in, RuntimeValue& out, const AxisSplit& s, ReduceKind kind) {
  using S = typename T::S;
  const S* src = in.data<S>();
  std::vector<S> val(src, src + in.numel());
  std::vector<int64_t> idx(val.size());
  for (size_t e = 0; e < idx.size(); ++e) idx[e] = static_cast<int64_t>(e) / s.inner % s.n;
  const bool is_max = kind == ReduceKind::ArgMax;
  tree_fold(s, [&](int64_t dst, int64_t l, int64_t r) {
    const bool right =
        r >= 0 && (is_max ? num::arg_greater<T>(val[r], val[l]) : num::arg_less<T>(val[r], val[l]));
    const int64_t from = right ? r : l;
    val[dst] = val[from];
    idx[dst] = idx[from];
  });
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const RuntimeValue index = int_scalar(out.dtype, idx[o * s.n * s.inner + i]);
      std::memcpy(out.raw() + (o * s.inner + i) * out.elem_bytes(), index.raw(), out.elem_bytes());
    }
}

template <class T>
void scan_values(const RuntimeValue& in, RuntimeValue& out, const AxisSplit& s, ReduceKind kind,
                 bool reverse, bool propagate) {
  using S = typename T::S;
  const S* src = in.data<S>();
  S* dst = out.data<S>();
  auto combine = combiner<T>(kind, propagate);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t step = 0; step < s.n; ++step) {
      const int64_t k = reverse ? s.n - 1 - step : step;
      const int64_t at = (o * s.n + k) * s.inner;
      const int64_t prev = at + (reverse ? s.inner : -s.inner);
      for (int64_t i = 0; i < s.inner; ++i)
        dst[at + i] = step == 0 ? src[at + i] : combine(dst[prev + i], src[at + i]);
    }
  }
}

ReduceKind kind_attr(const Op& op) {
  ReduceKind kind = ReduceKind::Sum;
  TESSERA_CHECK(ir::parse_reduce_kind(op.str_attr_or(attr::kKind, "sum"), &kind), "bad kind on '",
                op.name(), "'");
  return kind;
}

}  // namespace

void exec_reduce(Exec& ex, const Op& op) {
  const RuntimeValue& in = ex.get(op.operand(0));
  const ReduceKind kind = kind_attr(op);
  const AxisSplit s = split_axis(in.shape, static_cast<int>(op.int_attr(attr::kAxis)));
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  const bool arg = kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin;
  TESSERA_CHECK(!is_bitwise(kind) || !ir::is_float(in.dtype), "'", ir::to_string(kind), "' of ",
                in.type().str());
  TESSERA_CHECK(arg ? ir::is_int(out.dtype) : out.dtype == in.dtype, "'", op.name(), "' of ",
                in.type().str(), " to ", out.type().str());
  const bool scan = op.kind == ir::OpKind::Scan;
  const bool propagate = ir::propagates_nan(&op);  // float max/min: nan = "propagate" or "ignore"
  TESSERA_CHECK(!scan || !arg, "scan of kind ", ir::to_string(kind));
  // f16/bf16 sums add in f32 and round each result once (ops.h, ir::sum_accumulator).
  const ir::DType acc = kind == ReduceKind::Sum ? ir::sum_accumulator(in.dtype) : in.dtype;
  const RuntimeValue wide = acc != in.dtype ? convert(in, acc, false) : RuntimeValue{};
  const RuntimeValue& src = acc != in.dtype ? wide : in;
  RuntimeValue res = acc != in.dtype ? RuntimeValue::of_type(out.type().with_dtype(acc)) : out;
  dispatch(acc, [&](auto t) {
    using T = decltype(t);
    if (scan)
      return scan_values<T>(src, res, s, kind, op.int_attr_or(attr::kReverse, 0) != 0, propagate);
    if (arg) return reduce_index<T>(src, res, s, kind);
    reduce_values<T>(src, res, s, kind, propagate);
  });
  ex.set(op.result(), acc != in.dtype ? convert(res, out.dtype, false) : std::move(res));
}

}  // namespace tessera::interp
