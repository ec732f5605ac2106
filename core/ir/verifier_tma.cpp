/// \file Verifier rules of the SIMT IR's TMA family (core/ir/simt.h): the tensor-map attributes,
/// mbarrier_init / mbarrier_arrive_tx / mbarrier_wait, tma_load and the tma_store family, and
/// the cluster ops (cluster_rank, cluster_barrier).
#include "core/ir/printer.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kI32 = Type::scalar(DType::i32);

/// The parameter a map number comes from is an integer scalar of `fn`.
bool integer_param(const Function& fn, const TensorMapValue& v) {
  if (v.param < 0) return true;
  if (static_cast<size_t>(v.param) >= fn.params.size()) return false;
  const Type& t = fn.params[static_cast<size_t>(v.param)].value->type;
  return !t.is_ptr && !t.is_tile() && is_int(t.dtype);
}

/// What is wrong with `m` as a map of `fn`, or empty.
std::string map_problem(const Function& fn, const TensorMapParam& m) {
  if (m.rank() < 1 || m.rank() > 5) return "a rank of 1 to 5";
  if (m.base_param >= static_cast<int>(fn.params.size())) return "its base to be a parameter";
  const Type& base = fn.params[static_cast<size_t>(m.base_param)].value->type;
  if (!base.is_ptr || base.is_tile() || base.dtype != m.dtype)
    return "its base to be a pointer parameter to " + std::string(dtype_name(m.dtype));
  for (int d = 0; d < m.rank(); ++d) {
    const size_t i = static_cast<size_t>(d);
    if (!integer_param(fn, m.dims[i]) || !integer_param(fn, m.strides[i]))
      return "its dimensions and strides to be integer parameters or constants";
    if (m.box[i] < 1 || m.box[i] > 256) return "box dimensions of 1 to 256";
  }
  return {};
}

/// Attribute `buffer` names a buffer of i64 (mbarriers).
void check_barrier_buffer(OpChecker& c) {
  const SharedBuffer* b = buffer_attr(c);
  if (b && b->dtype != DType::i64)
    c.fail("expects attribute 'buffer' to name a buffer of i64 (mbarriers), got one of ",
           dtype_name(b->dtype));
}

/// An op that reaches the cluster's other programs needs the function's `cluster` attribute.
void require_cluster(OpChecker& c, std::string_view what) {
  if (!c.simt->cluster)
    c.fail("(", what, ") needs the function attribute 'cluster' (programs per cluster)");
}

/// The mbarrier at %index (i32) of an i64 buffer; the second operand (but for mbarrier_inval's)
/// an i32; only mbarrier_arrive_tx takes a third, the rank of the cluster's program (i32).
void check_mbarrier(OpChecker& c) {
  c.expect_type("operand #0 (the mbarrier's index)", c.in(0), kI32);
  if (c.op.kind == OpKind::MbarrierInval) return check_barrier_buffer(c);
  const char* what = c.op.kind == OpKind::MbarrierInit       ? "operand #1 (the arrival count)"
                     : c.op.kind == OpKind::MbarrierArriveTx ? "operand #1 (the bytes)"
                                                             : "operand #1 (the parity)";
  c.expect_type(what, c.in(1), kI32);
  if (c.num_in() > 2) {
    if (c.op.kind != OpKind::MbarrierArriveTx)
      c.fail("expects 2 operands, got ", c.num_in());
    else {
      c.expect_type("operand #2 (the cluster rank)", c.in(2), kI32);
      require_cluster(c, "an arrival on another program's mbarrier");
    }
  }
  check_barrier_buffer(c);
}

/// cluster_rank (an i32) and cluster_barrier (outside warp_specialize), in a clustered function.
void check_cluster_op(OpChecker& c) {
  if (c.op.kind == OpKind::ClusterRank)
    c.expect_type("the result", c.out(), kI32);
  else
    for (const Op* p = c.op.parent ? c.op.parent->parent : nullptr; p;
         p = p->parent ? p->parent->parent : nullptr)
      if (p->kind == OpKind::WarpSpecialize) {
        c.fail("inside warp_specialize (every thread of the workgroup reaches it)");
        break;
      }
  require_cluster(c, c.op.kind == OpKind::ClusterRank ? "the program's rank in its cluster"
                                                      : "a barrier of the cluster");
}

/// tma_load (%index, %bar, coordinates) and tma_store (%index, coordinates): i32 operands, a
/// tensor map of the function with one coordinate per dimension, and a shared buffer of the
/// map's dtype that holds a box.
void check_tma_copy(OpChecker& c) {
  const bool load = c.op.kind == OpKind::TmaLoad;
  const size_t first = load ? 2 : 1;  // the first coordinate
  c.expect_type(load ? "operand #0 (the destination's index)" : "operand #0 (the source's index)",
                c.in(0), kI32);
  if (load) c.expect_type("operand #1 (the mbarrier's index)", c.in(1), kI32);
  const bool multicast = load && c.op.int_attr_or(attr::kMulticast, 0) != 0;
  const size_t coords_end = c.num_in() - (multicast ? 1 : 0);
  for (size_t i = first; i < coords_end; ++i)
    c.expect_type("operand #" + std::to_string(i) + " (a coordinate)", c.in(i), kI32);
  if (multicast) {
    c.expect_type("the last operand (the multicast mask)", c.in(coords_end), kI32);
    require_cluster(c, "a copy to the cluster's programs");
  }
  const SharedBuffer* smem = buffer_attr(c);
  if (load) {
    const SharedBuffer* bar = buffer_attr(c, attr::kBarrier);
    if (bar && bar->dtype != DType::i64)
      c.fail("expects attribute 'barrier' to name a buffer of i64 (mbarriers), got one of ",
             dtype_name(bar->dtype));
  }
  std::optional<int64_t> map = c.int_attr(attr::kMap);
  if (!map) return;
  auto it = c.simt->maps.find(*map);
  if (it == c.simt->maps.end()) {
    c.fail("expects attribute 'map' to name a tensor map of the function, got ", *map,
           " (no attribute '", tensor_map_attr(*map), "')");
    return;
  }
  if (!it->second) return;  // reported with the function
  const TensorMapParam& m = *it->second;
  if (coords_end != static_cast<size_t>(m.rank()) + first)
    c.fail("expects ", m.rank() + static_cast<int>(first) + (multicast ? 1 : 0),
           " operands (the index, ", load ? "the mbarrier's index and " : "", m.rank(),
           " coordinates of map ", *map, multicast ? " and the multicast mask" : "", "), got ",
           c.num_in());
  if (smem && smem->dtype != m.dtype)
    c.fail("expects attribute 'buffer' to name a buffer of the map's dtype ", dtype_name(m.dtype),
           ", got one of ", dtype_name(smem->dtype));
  if (smem && m.box_bytes() > smem->bytes())
    c.fail(load ? "copies a box of " : "stores a box of ", m.box_bytes(), " bytes ",
           load ? "into" : "from", " a buffer of ", smem->bytes());
}

}  // namespace

std::map<int64_t, std::optional<TensorMapParam>> check_tensor_maps(
    const Function& fn, const std::function<void(const std::string&)>& fail) {
  std::map<int64_t, std::optional<TensorMapParam>> out;
  for (const Attribute& a : fn.attrs) {
    if (!a.name.starts_with("tensor_map")) continue;
    std::optional<int64_t> index = parse_tensor_map_attr(a.name);
    if (!index) {
      fail("(SIMT) has attribute '" + a.name +
           "'; tensor maps are named tensor_map_<i> (i = 0, 1, ...)");
      continue;
    }
    const std::string* text = std::get_if<std::string>(&a.value);
    std::optional<TensorMapParam> map = text ? parse_tensor_map(*text) : std::nullopt;
    std::string problem = map ? map_problem(fn, *map) : std::string();
    if (!map || !problem.empty()) {
      fail("(SIMT) expects attribute '" + a.name + "' to be a tensor map" +
           (problem.empty() ? " (\"tensor_map(%0: f16 [%1 x %2] strides [%2, 1] box [64 x 64] "
                              "swizzle 128)\")"
                            : " with " + problem) +
           ", got " + print_attr_value(a.value));
      out[*index] = std::nullopt;
      continue;
    }
    out[*index] = std::move(map);
  }
  int64_t expected = 0;
  for (const auto& [index, map] : out) {
    if (index != expected) {
      fail("(SIMT) expects tensor maps numbered densely from 0, but '" + tensor_map_attr(expected) +
           "' is missing");
      break;
    }
    ++expected;
  }
  return out;
}

void check_tma_family(OpChecker& c) {
  TESSERA_CHECK(c.simt, "SIMT op '", c.op.name(), "' checked outside a SIMT function");
  switch (c.op.kind) {
    case OpKind::TmaLoad:
    case OpKind::TmaStore:
      return check_tma_copy(c);
    case OpKind::TmaStoreCommit:
      return;
    case OpKind::ClusterRank:
    case OpKind::ClusterBarrier:
      return check_cluster_op(c);
    case OpKind::TmaStoreWait:
      c.int_attr_in(attr::kPending, 0, 16);  // as cp_async_wait's
      return;
    default:
      return check_mbarrier(c);
  }
}

}  // namespace tessera::ir::verifier_detail
