/// \file Verifier rules of the SIMT IR (core/ir/simt.h): function attributes, which ops and
/// types each stage admits, and the typing of the SIMT ops and of SIMT `print`/`assert`.
#include <algorithm>
#include <limits>

#include "core/ir/printer.h"
#include "core/ir/simt.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kI32 = Type::scalar(DType::i32);
const Type kBool = Type::scalar(DType::i1);

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

/// Function-level diagnostics of one function.
class FunctionAttrChecker {
 public:
  FunctionAttrChecker(const Function& fn, std::vector<std::string>& diags)
      : fn_(fn), diags_(diags) {}

  std::optional<SimtContext> run() {
    check_sorted();
    if (const AttrValue* stage = find_attr(fn_.attrs, attr::kStage); stage && !is_simt(fn_))
      fail("expects attribute 'stage' to be \"simt\" (a tile function has none), got ",
           print_attr_value(*stage));
    if (!is_simt(fn_)) return std::nullopt;
    std::optional<int64_t> threads = int_attr(attr::kThreads);
    if (threads && (*threads <= 0 || *threads > std::numeric_limits<int32_t>::max())) {
      fail("(SIMT) expects attribute 'threads' to be a positive 32-bit integer, got ", *threads);
      threads.reset();
    }
    std::optional<int64_t> subgroup = int_attr(attr::kSubgroup);
    if (subgroup && (!is_power_of_two(*subgroup) || (threads && *threads % *subgroup != 0))) {
      if (threads)
        fail("(SIMT) expects attribute 'subgroup' to be a power of two dividing threads = ",
             *threads, ", got ", *subgroup);
      else
        fail("(SIMT) expects attribute 'subgroup' to be a power of two, got ", *subgroup);
    }
    bool subgroup_ok =
        subgroup && is_power_of_two(*subgroup) && (!threads || *threads % *subgroup == 0);
    const AttrValue* target = find_attr(fn_.attrs, attr::kTarget);
    if (target && !std::holds_alternative<std::string>(*target))
      fail("(SIMT) expects attribute 'target' to be a string, got ", print_attr_value(*target));
    int64_t maxnreg = 0;
    if (find_attr(fn_.attrs, attr::kMaxnreg)) {
      std::optional<int64_t> n = int_attr(attr::kMaxnreg);
      if (n && (*n < 1 || *n > 255))
        fail("(SIMT) expects attribute 'maxnreg' in 1..255, got ", *n);
      else if (n)
        maxnreg = *n;
    }
    int64_t cluster = 0;
    if (find_attr(fn_.attrs, attr::kCluster)) {
      std::optional<int64_t> n = int_attr(attr::kCluster);
      if (n && (*n < 1 || *n > 8))
        fail("(SIMT) expects attribute 'cluster' in 1..8 (programs per cluster), got ", *n);
      cluster = n.value_or(1);  // (present: its ops are checked as in a cluster)
    }
    return SimtContext{buffers(), subgroup_ok ? subgroup : std::nullopt,
                       threads,   check_tensor_maps(fn_, [&](const std::string& m) { fail(m); }),
                       maxnreg,   cluster};
  }

 private:
  template <class... Args>
  void fail(const Args&... parts) {
    diags_.push_back(
        detail::concat(fn_.loc.str(), ": error: function '", fn_.name, "' ", parts...));
  }

  void check_sorted() {
    const auto& attrs = fn_.attrs;
    for (size_t i = 1; i < attrs.size(); ++i)
      if (!(attrs[i - 1].name < attrs[i].name))
        fail("has attributes out of order or repeated ('", attrs[i - 1].name, "', '", attrs[i].name,
             "')");
  }

  std::optional<int64_t> int_attr(std::string_view name) {
    const AttrValue* v = find_attr(fn_.attrs, name);
    if (!v) {
      fail("(SIMT) expects an integer attribute '", name, "'");
      return std::nullopt;
    }
    if (const int64_t* i = std::get_if<int64_t>(v)) return *i;
    fail("(SIMT) expects attribute '", name, "' to be an integer, got ", print_attr_value(*v));
    return std::nullopt;
  }

  /// The `shared_<i>` attributes: names, types, and dense numbering.
  std::map<int64_t, std::optional<SharedBuffer>> buffers() {
    std::map<int64_t, std::optional<SharedBuffer>> out;
    for (const Attribute& a : fn_.attrs) {
      if (!a.name.starts_with("shared")) continue;
      std::optional<int64_t> index = parse_shared_buffer_attr(a.name);
      if (!index) {
        fail("(SIMT) has attribute '", a.name,
             "'; shared buffers are named shared_<i> (i = 0, 1, ...)");
        continue;
      }
      const Type* t = std::get_if<Type>(&a.value);
      if (!t || t->rank() != 1 || t->is_ptr || t->shape[0] <= 0) {
        fail("(SIMT) expects attribute '", a.name,
             "' to be a 1-D tile type of a non-pointer dtype, tile<Nxdtype> with N > 0, got ",
             print_attr_value(a.value));
        out[*index] = std::nullopt;
        continue;
      }
      out[*index] = SharedBuffer{t->dtype, t->shape[0]};
    }
    int64_t expected = 0;
    for (const auto& [index, buffer] : out) {
      if (index != expected) {
        fail("(SIMT) expects shared buffers numbered densely from 0, but '",
             shared_buffer_attr(expected), "' is missing");
        break;
      }
      ++expected;
    }
    return out;
  }

  const Function& fn_;
  std::vector<std::string>& diags_;
};

/// `width` in `allowed`; reported otherwise.
std::optional<int> width_attr(OpChecker& c, std::initializer_list<int> allowed,
                              std::string_view choices) {
  std::optional<int64_t> w = c.int_attr(attr::kWidth);
  if (!w) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *w) != allowed.end()) return static_cast<int>(*w);
  c.fail("expects attribute 'width' to be one of ", choices, "; got ", *w);
  return std::nullopt;
}

/// The buffer named by attribute `buffer`; null if missing, unknown (both reported) or
/// malformed (reported with the function).

/// `width` copies of `t`.
std::vector<Type> repeated(const Type& t, int width) {
  return std::vector<Type>(static_cast<size_t>(width), t);
}

std::vector<Type> operand_types_from(const OpChecker& c, size_t first) {
  std::vector<Type> all = types_of(c.op.operands);
  return std::vector<Type>(all.begin() + static_cast<long>(first), all.end());
}

void check_shuffle(OpChecker& c) {
  c.enum_attr(attr::kMode, parse_shuffle_mode, "xor, idx, up, down", true);
  c.expect_type("operand #1 (the lane operand)", c.in(1), kI32);
  if (c.in(0).is_tile()) {
    c.fail("expects operand #0 to be a scalar or a pointer, got ", c.in(0).str());
    return;
  }
  c.expect_type("result", c.out(), c.in(0), " (operand #0's)");
}

/// shared_load and shared_store: the index, the buffer and `width` elements of its dtype.
void check_shared(OpChecker& c, bool is_store) {
  c.expect_type("operand #0 (the index)", c.in(0), kI32);
  const SharedBuffer* buffer = buffer_attr(c);
  std::optional<int> width = width_attr(c, {1, 2, 4, 8}, "1, 2, 4, 8");
  if (!width) return;
  if (is_store && c.num_in() != static_cast<size_t>(1 + *width)) {
    c.fail("expects 1 + width = ", 1 + *width, " operands (the index, then ", *width,
           " values), got ", c.num_in());
    return;
  }
  if (!is_store && !c.expect_num_results(static_cast<size_t>(*width), attr::kWidth)) return;
  if (!buffer) return;
  if (*width > buffer->count) {
    c.fail("expects attribute 'width' (", *width, ") to be at most the buffer's element count (",
           buffer->count, ")");
    return;
  }
  std::vector<Type> want = repeated(Type::scalar(buffer->dtype), *width);
  if (is_store)
    c.expect_types("values of the buffer's dtype", operand_types_from(c, 1), want);
  else
    c.expect_types("results of the buffer's dtype", types_of(c.op.results), want);
}

/// `align`: a power of two, at least the element size when the pointer is known.
void check_align(OpChecker& c, const Type* ptr) {
  std::optional<int64_t> align = c.int_attr(attr::kAlign);
  if (!align) return;
  if (!ptr) {
    if (!is_power_of_two(*align))
      c.fail("expects attribute 'align' to be a power of two, got ", *align);
    return;
  }
  int size = dtype_bytes(ptr->dtype);
  if (!is_power_of_two(*align) || *align < size)
    c.fail("expects attribute 'align' to be a power of two >= the element size (", size,
           " bytes), got ", *align);
}

/// global_load and global_store: a scalar pointer, an i1 predicate, then `width` values of the
/// pointee dtype (the others of a load, the stored values of a store).
void check_global(OpChecker& c, bool is_store) {
  const Type& p = c.in(0);
  bool ptr_ok = p.is_ptr && !p.is_tile();
  if (!ptr_ok) c.fail("expects operand #0 to be a scalar pointer, got ", p.str());
  c.expect_type("operand #1 (the predicate)", c.in(1), kBool);
  check_align(c, ptr_ok ? &p : nullptr);
  c.str_attr(attr::kCache, false);
  c.str_attr(attr::kEviction, false);
  std::optional<int> width = width_attr(c, {1, 2, 4, 8, 16}, "1, 2, 4, 8, 16");
  if (!width) return;
  if (c.num_in() != static_cast<size_t>(2 + *width)) {
    c.fail("expects 2 + width = ", 2 + *width, " operands (the pointer, the predicate, then ",
           *width, is_store ? " values" : " other values", "), got ", c.num_in());
    return;
  }
  if (!is_store && !c.expect_num_results(static_cast<size_t>(*width), attr::kWidth)) return;
  if (!ptr_ok) return;
  std::vector<Type> want = repeated(Type::scalar(p.dtype), *width);
  c.expect_types(is_store ? "values of the pointee dtype" : "other values of the pointee dtype",
                 operand_types_from(c, 2), want);
  if (!is_store) c.expect_types("results of the pointee dtype", types_of(c.op.results), want);
}

/// Warp-collective ops (mma, ldmatrix) need 32-lane subgroups.
void check_warp(OpChecker& c) {
  if (c.simt->subgroup && *c.simt->subgroup != 32)
    c.fail("needs subgroups of 32 lanes (a warp), but the function has subgroup = ",
           *c.simt->subgroup);
}

std::string mma_pairs() {
  std::string out;
  for (const MmaShape& s : mma_shapes())
    out += std::string(out.empty() ? "" : ", ") + "(\"" + std::string(s.shape) + "\", \"" +
           std::string(s.a) + "\")";
  return out;
}

/// mma: a supported (shape, a) pair, its operand and result counts and dtypes.
void check_mma(OpChecker& c) {
  check_warp(c);
  const std::string* shape = c.str_attr(attr::kShape, true);
  const std::string* a = c.str_attr(attr::kA, true);
  if (!shape || !a) return;
  const MmaShape* s = find_mma_shape(*shape, *a);
  if (!s) {
    c.fail("expects (shape, a) to be one of ", mma_pairs(), "; got (\"", *shape, "\", \"", *a,
           "\")");
    return;
  }
  size_t na = static_cast<size_t>(s->a_count()), nb = static_cast<size_t>(s->b_count());
  size_t want = na + nb + MmaShape::kCCount;
  if (c.num_in() != want) {
    c.fail("expects ", want, " operands for ", *shape, " ", *a, " (", na, " A, ", nb,
           " B, then 4 C values), got ", c.num_in());
    return;
  }
  std::vector<Type> in_types = types_of(c.op.operands);
  std::vector<Type> ab(in_types.begin(), in_types.begin() + static_cast<long>(na + nb));
  std::vector<Type> cs(in_types.begin() + static_cast<long>(na + nb), in_types.end());
  c.expect_types("A and B values", ab, repeated(Type::scalar(s->in), static_cast<int>(na + nb)));
  c.expect_types("C values", cs, repeated(Type::scalar(s->acc), MmaShape::kCCount));
  c.expect_types("results", types_of(c.op.results),
                 repeated(Type::scalar(s->acc), MmaShape::kCCount));
}

/// ldmatrix: the index, the buffer (1-, 2- or 4-byte elements), count, trans and the results.
void check_ldmatrix(OpChecker& c) {
  check_warp(c);
  c.expect_type("operand #0 (the index)", c.in(0), kI32);
  std::optional<int64_t> count = c.int_attr(attr::kCount);
  if (count && *count != 1 && *count != 2 && *count != 4) {
    c.fail("expects attribute 'count' to be one of 1, 2, 4; got ", *count);
    count.reset();
  }
  bool trans = c.flag_attr(attr::kTrans) && c.op.int_attr_or(attr::kTrans, 0) != 0;
  const SharedBuffer* buffer = buffer_attr(c);
  if (!buffer || !count) return;
  int bytes = dtype_bytes(buffer->dtype);
  if (buffer->dtype == DType::i1 || (bytes != 1 && bytes != 2 && bytes != 4)) {
    c.fail("expects a buffer of 1-, 2- or 4-byte elements, got ", dtype_name(buffer->dtype));
    return;
  }
  if (trans && bytes != 2) {
    c.fail("with trans = 1 expects a buffer of 2-byte elements, got ", dtype_name(buffer->dtype));
    return;
  }
  int per = 4 / bytes;
  if (!c.expect_num_results(static_cast<size_t>(*count * per), "count x 4 / element bytes")) return;
  c.expect_types("results of the buffer's dtype", types_of(c.op.results),
                 repeated(Type::scalar(buffer->dtype), static_cast<int>(*count * per)));
}

/// cp_async: the index, a scalar pointer to the buffer's dtype, the predicate.
void check_cp_async(OpChecker& c) {
  c.expect_type("operand #0 (the index)", c.in(0), kI32);
  const Type& p = c.in(1);
  bool ptr_ok = p.is_ptr && !p.is_tile();
  if (!ptr_ok) c.fail("expects operand #1 to be a scalar pointer, got ", p.str());
  c.expect_type("operand #2 (the predicate)", c.in(2), kBool);
  const SharedBuffer* buffer = buffer_attr(c);
  if (buffer && ptr_ok && buffer->dtype != p.dtype)
    c.fail("expects a pointer to the buffer's dtype ", dtype_name(buffer->dtype), ", got ",
           p.str());
}

/// `rank` (default 0); reported unless a non-negative integer.
std::optional<int64_t> rank_attr(OpChecker& c) {
  if (!c.op.has_attr(attr::kRank)) return 0;
  std::optional<int64_t> r = c.int_attr(attr::kRank);
  if (r && (*r < 0 || *r > std::numeric_limits<int32_t>::max())) {
    c.fail("expects attribute 'rank' to be a tile rank (0 or more), got ", *r);
    return std::nullopt;
  }
  return r;
}

/// barrier {global, id, threads}: a named barrier (id 1 to 15) counts whole warps of the
/// workgroup; id 0 (or none) is the whole workgroup's.
void check_barrier(OpChecker& c) {
  c.flag_attr(attr::kGlobal);  // 1: global memory too (debug_barrier)
  const bool named = c.op.has_attr(attr::kBarrierId) || c.op.has_attr(attr::kThreadCount);
  if (!named) return;
  std::optional<int64_t> id = c.int_attr_in(attr::kBarrierId, 1, 15);
  std::optional<int64_t> n = c.int_attr(attr::kThreadCount);
  if (!id || !n) return;
  if (*n < 32 || *n % 32 != 0)
    c.fail("expects attribute 'threads' to be a positive multiple of 32 (whole warps), got ", *n);
  else if (c.simt->threads && *n > *c.simt->threads)
    c.fail("waits for ", *n, " threads, but the function has threads = ", *c.simt->threads);
}

}  // namespace

const SharedBuffer* buffer_attr(OpChecker& c, std::string_view name) {
  std::optional<int64_t> b = c.int_attr(name);
  if (!b) return nullptr;
  auto it = c.simt->buffers.find(*b);
  if (it == c.simt->buffers.end()) {
    c.fail("expects attribute '", name, "' to name a shared buffer of the function, got ", *b,
           " (no attribute '", shared_buffer_attr(*b), "')");
    return nullptr;
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<SimtContext> check_function_attrs(const Function& fn,
                                                std::vector<std::string>& diags) {
  return FunctionAttrChecker(fn, diags).run();
}

bool check_stage(OpChecker& c) {
  if (c.simt && c.op.has(kTileOnly))
    return c.fail("is a tile-IR op and cannot appear in a SIMT function");
  if (!c.simt && c.op.has(kSimt))
    return c.fail(
        "is a SIMT-IR op and cannot appear in a tile function (one without stage = "
        "\"simt\")");
  // Cooperative matrices: only in SIMT functions, made and used by the coopmat ops and carried
  // by control flow.
  const bool takes_mats =
      c.simt && (c.op.kind == OpKind::CoopMatFill || c.op.kind == OpKind::CoopMatLoad ||
                 c.op.kind == OpKind::CoopMatStore || c.op.kind == OpKind::CoopMatMulAdd ||
                 c.op.kind == OpKind::CoopMatLoadTensor || c.op.kind == OpKind::For ||
                 c.op.kind == OpKind::If || c.op.kind == OpKind::While ||
                 c.op.kind == OpKind::Yield || c.op.kind == OpKind::Condition);
  if (!takes_mats) {  // the first matrix operand, else result, is reported
    for (size_t i = 0; i < c.num_in(); ++i)
      if (c.op.operands[i] && c.in(i).is_mat())
        return c.fail("operand #", i, " is a cooperative matrix (", c.in(i).str(),
                      "), which only the coopmat ops and control flow of a SIMT function take");
    for (size_t i = 0; i < c.op.results.size(); ++i)
      if (c.op.results[i] && c.out(i).is_mat())
        return c.fail("result #", i, " is a cooperative matrix (", c.out(i).str(),
                      "), which only the coopmat ops and control flow of a SIMT function make");
  }
  if (!c.simt) return true;
  bool ok = true;
  const char* why = "; the values of a SIMT function are scalars or pointers";
  for (size_t i = 0; i < c.op.results.size(); ++i)
    if (c.out(i).is_tile()) ok = c.fail("result #", i, " has type ", c.out(i).str(), why);
  for (size_t k = 0; k < c.op.regions.size(); ++k) {
    const Region& r = *c.op.regions[k];
    for (size_t i = 0; i < r.args.size(); ++i)
      if (r.args[i]->type.is_tile())
        ok = c.fail("region #", k, " argument #", i, " has type ", r.args[i]->type.str(), why);
  }
  return ok;
}

void check_simt(OpChecker& c) {
  TESSERA_CHECK(c.simt, "SIMT op '", c.op.name(), "' checked outside a SIMT function");
  // clang-format off
  switch (c.op.kind) {
    case OpKind::LaneId: case OpKind::SubgroupId:
      c.expect_type("result", c.out(), kI32);
      return;
    case OpKind::Barrier: return check_barrier(c);
    case OpKind::Shuffle: return check_shuffle(c);
    case OpKind::SharedLoad: return check_shared(c, /*is_store=*/false);
    case OpKind::SharedStore: return check_shared(c, /*is_store=*/true);
    case OpKind::GlobalLoad: return check_global(c, /*is_store=*/false);
    case OpKind::GlobalStore: return check_global(c, /*is_store=*/true);
    case OpKind::Mma: return check_mma(c);
    case OpKind::LdMatrix: return check_ldmatrix(c);
    case OpKind::CpAsync: return check_cp_async(c);
    case OpKind::CpAsyncCommit:
      return;  // no operands, results or attributes
    case OpKind::CpAsyncWait:
      c.int_attr_in(attr::kPending, 0, 16);
      return;
    default:
      TESSERA_CHECK(false, "not a SIMT op: ", c.op.name());
  }
  // clang-format on
}

void check_simt_debug(OpChecker& c) {
  bool is_print = c.op.kind == OpKind::Print;
  if (is_print) {
    c.str_attr(attr::kPrefix, false);
    c.flag_attr(attr::kHex);
  } else {
    c.str_attr(attr::kMessage, false);
    c.str_attr(attr::kFault, false);
  }
  std::optional<int64_t> rank = rank_attr(c);
  if (!rank) return;
  const int64_t values = is_print ? 0 : assert_values(c);
  const char* what = is_print ? "the value" : "the condition";
  if (c.num_in() != static_cast<size_t>(*rank + values) + 1) {
    if (is_print)
      c.fail("expects rank + 1 = ", *rank + 1, " operands (", *rank, " i32 indices, then ", what,
             "), got ", c.num_in());
    else
      c.fail("expects rank + values + 1 = ", *rank + values + 1, " operands (", *rank,
             " i32 indices, ", values, " values, then ", what, "), got ", c.num_in());
    return;
  }
  size_t last = static_cast<size_t>(*rank + values);
  for (size_t i = 0; i < static_cast<size_t>(*rank); ++i)
    c.expect_type("operand #" + std::to_string(i) + " (an index)", c.in(i), kI32);
  for (size_t i = static_cast<size_t>(*rank); i < last; ++i)
    if (!c.in(i).is_int() || c.in(i).is_bool() || c.in(i).is_tile())
      c.fail("expects operand #", i, " (a reported value) to be an integer scalar, got ",
             c.in(i).str());
  std::string last_what = "operand #" + std::to_string(last) + " (" + what + ")";
  if (!is_print)
    c.expect_type(last_what, c.in(last), kBool);
  else if (c.in(last).is_tile())
    c.fail("expects ", last_what, " to be a scalar or a pointer, got ", c.in(last).str());
}

}  // namespace tessera::ir::verifier_detail
