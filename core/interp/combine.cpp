/// \file reduce_generic and scan_generic: reductions and scans whose combine is a region.
///
/// Order: reduce_generic combines adjacent pairs level by level (an order-preserving pairwise
/// tree, the left operand always the lower-index range); scan_generic folds in index order, and
/// with reverse = 1 from the end with the carry as the left operand (Triton's flip-scan-flip).
///
/// Speed: a combine region made only of elementwise ops and constants runs once per tree level
/// (or scan step) on all lanes at once: its scalar arguments are bound to [lanes] tiles and the
/// elementwise ops broadcast its scalar constants. Any other region runs once per lane.
#include <cstring>

#include "core/interp/exec.h"
#include "core/interp/reduce.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;
using Values = std::vector<RuntimeValue>;
using Lanes = std::vector<int64_t>;  ///< element indices of a tile, one per lane

/// True if the region can run on many lanes at once: only elementwise ops and constants.
bool lane_parallel(const ir::Region& region) {
  for (const Op* op : region.ops) {
    if (op->has(ir::kElementwise) || op->kind == OpKind::Constant || op->kind == OpKind::Yield)
      continue;
    return false;
  }
  return true;
}

/// The elements of `tile` at `lanes`, as a [lanes] tile.
RuntimeValue gather(const RuntimeValue& tile, const Lanes& lanes) {
  RuntimeValue out =
      RuntimeValue::make(tile.dtype, tile.is_ptr, {static_cast<int64_t>(lanes.size())});
  const int n = tile.elem_bytes();
  for (size_t l = 0; l < lanes.size(); ++l)
    std::memcpy(out.raw() + l * n, tile.raw() + lanes[l] * n, n);
  return out;
}

/// tile[lanes[l]] = values[l] (a scalar `values` fills every lane).
void scatter(RuntimeValue& tile, const Lanes& lanes, const RuntimeValue& values) {
  const int n = tile.elem_bytes();
  TESSERA_CHECK(values.elem_bytes() == n, "combine yields ", values.type().str(), " for ",
                tile.type().str());
  const int64_t step = values.numel() == 1 ? 0 : 1;
  for (size_t l = 0; l < lanes.size(); ++l)
    std::memcpy(tile.raw() + lanes[l] * n, values.raw() + l * step * n, n);
}

/// One element of a [lanes] tile as a scalar.
RuntimeValue lane(const RuntimeValue& tile, int64_t l) {
  RuntimeValue out = RuntimeValue::make(tile.dtype, tile.is_ptr, {});
  std::memcpy(out.raw(), tile.raw() + l * tile.elem_bytes(), tile.elem_bytes());
  return out;
}

/// Runs the combine on every lane: results[k][l] = combine(left[..][l], right[..][l])[k].
Values combine(Exec& ex, const ir::Region& region, const Values& left, const Values& right) {
  Values args = left;
  args.insert(args.end(), right.begin(), right.end());
  if (lane_parallel(region)) return ex.run_region(region, std::move(args));
  const int64_t lanes = left.front().numel();
  Values results;
  for (const RuntimeValue& l : left)
    results.push_back(RuntimeValue::make(l.dtype, l.is_ptr, {lanes}));
  for (int64_t l = 0; l < lanes; ++l) {
    Values scalars;
    for (const RuntimeValue& a : args) scalars.push_back(lane(a, l));
    Values out = ex.run_region(region, std::move(scalars));
    TESSERA_CHECK(out.size() == results.size(), "combine yields ", out.size(), " values");
    for (size_t k = 0; k < out.size(); ++k) scatter(results[k], {l}, out[k]);
  }
  return results;
}

Values gather_all(const Values& tiles, const Lanes& lanes) {
  Values out;
  for (const RuntimeValue& t : tiles) out.push_back(gather(t, lanes));
  return out;
}

void scatter_all(Values& tiles, const Lanes& lanes, const Values& values) {
  TESSERA_CHECK(values.size() == tiles.size(), "combine yields ", values.size(), " values for ",
                tiles.size(), " operands");
  for (size_t k = 0; k < tiles.size(); ++k) scatter(tiles[k], lanes, values[k]);
}

/// Indices (o, k(j), i) for every o, i and j in [0, count).
template <class K>
Lanes lanes_of(const AxisSplit& s, int64_t count, K&& k) {
  Lanes lanes;
  lanes.reserve(static_cast<size_t>(s.outer * count * s.inner));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      for (int64_t i = 0; i < s.inner; ++i) lanes.push_back((o * s.n + k(j)) * s.inner + i);
  return lanes;
}

Values reduce_generic(Exec& ex, const Op& op, Values tiles, const AxisSplit& s) {
  const ir::Region& region = *op.region(0);
  for (int64_t w = s.n; w > 1; w = (w + 1) / 2) {
    const int64_t half = w / 2;
    const Lanes dst = lanes_of(s, half, [](int64_t j) { return j; });
    const Values left = gather_all(tiles, lanes_of(s, half, [](int64_t j) { return 2 * j; }));
    const Values right = gather_all(tiles, lanes_of(s, half, [](int64_t j) { return 2 * j + 1; }));
    scatter_all(tiles, dst, combine(ex, region, left, right));
    if (w % 2 == 0) continue;
    const Values odd = gather_all(tiles, lanes_of(s, 1, [w](int64_t) { return w - 1; }));
    scatter_all(tiles, lanes_of(s, 1, [half](int64_t) { return half; }), odd);
  }
  Values results;
  const Lanes firsts = lanes_of(s, 1, [](int64_t) { return int64_t{0}; });
  for (size_t k = 0; k < tiles.size(); ++k) {
    RuntimeValue r = gather(tiles[k], firsts);
    r.shape = op.result(k)->type.shape;
    results.push_back(std::move(r));
  }
  return results;
}

Values scan_generic(Exec& ex, const Op& op, const Values& inputs, const AxisSplit& s) {
  const ir::Region& region = *op.region(0);
  const bool reverse = op.int_attr_or(attr::kReverse, 0) != 0;
  Values out = inputs;  // the first position of every line is its input
  for (int64_t step = 1; step < s.n; ++step) {
    const int64_t k = reverse ? s.n - 1 - step : step;
    const int64_t prev = reverse ? k + 1 : k - 1;
    const Lanes at = lanes_of(s, 1, [k](int64_t) { return k; });
    const Values carry = gather_all(out, lanes_of(s, 1, [prev](int64_t) { return prev; }));
    scatter_all(out, at, combine(ex, region, carry, gather_all(inputs, at)));
  }
  return out;
}

}  // namespace

void exec_combine(Exec& ex, const Op& op) {
  Values inputs;
  for (const ir::Value* v : op.operands) inputs.push_back(ex.get(v));
  TESSERA_CHECK(!inputs.empty() && op.results.size() == inputs.size(), "'", op.name(), "' with ",
                inputs.size(), " operands and ", op.results.size(), " results");
  for (const RuntimeValue& t : inputs)
    TESSERA_CHECK(t.shape == inputs.front().shape, "'", op.name(), "' of tiles of shapes ",
                  ir::shape_str(t.shape), " and ", ir::shape_str(inputs.front().shape));
  const AxisSplit s = split_axis(inputs.front().shape, static_cast<int>(op.int_attr(attr::kAxis)));
  Values results = op.kind == OpKind::ReduceGeneric ? reduce_generic(ex, op, std::move(inputs), s)
                                                    : scan_generic(ex, op, inputs, s);
  for (size_t k = 0; k < results.size(); ++k) ex.set(op.result(k), std::move(results[k]));
}

}  // namespace tessera::interp
