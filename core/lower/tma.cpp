/// \file Can a tensor-descriptor load or store be copied by TMA (tma.h).
#include "core/lower/tma.h"

#include <cstdlib>

#include "core/ir/ops.h"

namespace tessera::lower {
namespace {

using ir::OpKind;
using ir::TensorMapValue;
using ir::Value;

/// TMA's limits (cuTensorMapEncodeTiled's documented requirements).
constexpr int kMaxRank = 5;
constexpr int64_t kMaxBox = 256;
constexpr int64_t kAlign = 16;
constexpr int64_t kSwizzleSpan = 128;  ///< the widest swizzle's row, in bytes

/// The parameter `v` is (through integer casts that keep its value: widening), or -1.
int param_index(const ir::Function& fn, const Value* v) {
  while (v->def && v->def->kind == OpKind::Cast &&
         ir::dtype_bytes(v->type.dtype) >= ir::dtype_bytes(v->def->operand(0)->type.dtype) &&
         ir::is_int(v->def->operand(0)->type.dtype))
    v = v->def->operand(0);
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].value == v) return static_cast<int>(i);
  return -1;
}

/// `v` as the host sees it at launch: a scalar parameter or a constant.
std::optional<TensorMapValue> host_value(const ir::Function& fn, const Value* v) {
  if (v->def && v->def->kind == OpKind::Constant)
    return TensorMapValue{-1, ir::ConstantOp(v->def).int_value()};
  const int p = param_index(fn, v);
  if (p < 0) return std::nullopt;
  return TensorMapValue{p, 0};
}

/// The divisibility the launch proved for parameter `p` (1 when none).
int64_t divisibility(const ir::Function& fn, int p) {
  const ir::AttrValue* d =
      ir::find_attr(fn.params[static_cast<size_t>(p)].attrs, attr::kDivisibility);
  return d && std::holds_alternative<int64_t>(*d) ? std::get<int64_t>(*d) : 1;
}

/// Is `v` elements of `elem` bytes a multiple of 16 bytes?
bool aligned_bytes(const ir::Function& fn, const TensorMapValue& v, int64_t elem) {
  const int64_t unit = v.param >= 0 ? divisibility(fn, v.param) : std::llabs(v.constant);
  return unit != 0 && unit * elem % kAlign == 0;
}

std::optional<ir::TensorMapParam> fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::optional<ir::TensorMapParam> plan_tma(const ir::Function& fn, const ir::Op& access,
                                           const target::Target& target, std::string* why) {
  if (!target.has(target::Cap::Tma)) return fail(why, "the target has no TMA");
  if (access.kind != OpKind::DescLoad && access.kind != OpKind::DescStore)
    return fail(why, "not a descriptor access");
  const bool load = access.kind == OpKind::DescLoad;
  const ir::DescOperands desc =
      load ? ir::DescLoadOp(&access).desc() : ir::DescStoreOp(&access).desc();
  if (desc.rank > kMaxRank)
    return fail(why, "rank " + std::to_string(desc.rank) + " is over TMA's 5");
  const ir::Type& block = load ? access.result()->type : ir::DescStoreOp(&access).value()->type;
  ir::TensorMapParam map;
  map.dtype = block.dtype;
  map.box = block.shape;
  const int64_t elem = ir::dtype_bytes(map.dtype);
  map.base_param = param_index(fn, desc.base());
  if (map.base_param < 0 || divisibility(fn, map.base_param) % kAlign != 0)
    return fail(why, "the base is not a kernel parameter known to be 16-byte aligned");
  for (int d = 0; d < desc.rank; ++d) {
    const std::string name = "[" + std::to_string(d) + "]";
    const std::optional<TensorMapValue> dim = host_value(fn, desc.dim(d));
    const std::optional<TensorMapValue> stride = host_value(fn, desc.stride(d));
    if (!dim) return fail(why, "shape" + name + " is neither a kernel parameter nor a constant");
    if (!stride)
      return fail(why, "strides" + name + " is neither a kernel parameter nor a constant");
    if (d == desc.rank - 1 && *stride != TensorMapValue{-1, 1})
      return fail(why, "the innermost stride is not the constant 1");
    if (d < desc.rank - 1 && !aligned_bytes(fn, *stride, elem))
      return fail(why, "strides" + name + " is not known to be a multiple of 16 bytes");
    if (map.box[static_cast<size_t>(d)] > kMaxBox)
      return fail(why, "block_shape" + name + " is over TMA's 256 elements");
    map.dims.push_back(*dim);
    map.strides.push_back(*stride);
  }
  const int64_t row = map.box.back() * elem;
  if (row % kAlign != 0)
    return fail(why,
                "the innermost block is " + std::to_string(row) + " bytes, not a multiple of 16");
  if (desc.rank == 1) return map;  // one line: nothing to swizzle
  if (row > kSwizzleSpan) {
    // wgmma reads a wider row as column blocks of 128 bytes: one box per block.
    if (row % kSwizzleSpan != 0)
      return fail(why, "the innermost block is " + std::to_string(row) +
                           " bytes, over 128 and not a multiple of 128 (swizzled copies)");
    map.copies = static_cast<int>(row / kSwizzleSpan);
    map.box.back() = kSwizzleSpan / elem;
  }
  const int64_t span = row > kSwizzleSpan ? kSwizzleSpan : row;
  map.swizzle = span == 32 || span == 64 || span == 128 ? static_cast<int>(span) : 0;
  return map;
}

std::optional<ir::TensorMapParam> plan_tma_store(const ir::Function& fn, const ir::Op& store,
                                                 const target::Target& target, std::string* why) {
  if (store.kind != OpKind::DescStore) return fail(why, "not a descriptor store");
  std::optional<ir::TensorMapParam> map = plan_tma(fn, store, target, why);
  if (!map) return map;
  if (map->rank() != 2)
    return fail(
        why, "TMA stores are planned for rank-2 blocks, not rank " + std::to_string(map->rank()));
  if (map->dtype == ir::DType::i1)
    return fail(why, "i1 blocks are stored as masked stores (shared memory holds no i1)");
  // A TMA store writes whole 16-byte chunks: past an innermost extent that is not a multiple
  // of 16 bytes it would overwrite up to the next boundary (seen on the H200: columns 45 to 47
  // of a 45-column tensor; Triton documents the same limit).
  if (!aligned_bytes(fn, map->dims.back(), ir::dtype_bytes(map->dtype)))
    return fail(why, "shape[" + std::to_string(map->rank() - 1) +
                         "] is not known to be a multiple of 16 bytes (TMA stores whole "
                         "16-byte chunks)");
  // Box i of a wide row starts at i x rows x 128 bytes, which must be a multiple of 1024.
  if (map->copies > 1 && map->box[0] % 8 != 0)
    return fail(why, "a block row over 128 bytes needs a multiple of 8 rows, not " +
                         std::to_string(map->box[0]));
  return map;
}

bool feeds_loop_dot(const ir::Op& load) {
  const ir::Region* body = load.parent;
  if (!body || !body->parent || body->parent->kind != OpKind::For) return false;
  for (const ir::Op* op : body->ops) {
    if (op->kind != OpKind::Dot) continue;
    for (int i = 0; i < 2; ++i) {
      const Value* v = op->operand(i);
      if (v->def && v->def->kind == OpKind::Permute) v = v->def->operand(0);
      if (v == load.result()) return true;
    }
  }
  return false;
}

std::string tma_report(const ir::Function& fn, const target::Target& target) {
  if (!target.has(target::Cap::Tma)) return {};
  std::string out;
  ir::walk(fn.body, [&](const ir::Op* op) {
    if (op->kind != OpKind::DescLoad && op->kind != OpKind::DescStore) return;
    const bool load = op->kind == OpKind::DescLoad;
    std::string why;
    const std::optional<ir::TensorMapParam> map =
        load ? plan_tma(fn, *op, target, &why) : plan_tma_store(fn, *op, target, &why);
    out += "// tma: " + std::string(op->name()) + " at " + op->loc.str() + ": ";
    out += map ? map->str() : (load ? "masked loads (" : "masked stores (") + why + ")";
    out += load && feeds_loop_dot(*op) ? " feeding a loop's dot\n" : "\n";
  });
  return out;
}

}  // namespace tessera::lower
