/// \file The verifier's walk: structure, dominance and shapes here; typing per op family in
/// verifier_*.cpp.
#include "core/ir/verifier.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/op_table.h"
#include "core/ir/printer.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir {
namespace verifier_detail {

std::string types_str(const std::vector<Type>& types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i) out += (i ? ", " : "") + types[i].str();
  return out + ")";
}

std::vector<Type> types_of(const std::vector<Value*>& values) {
  std::vector<Type> out;
  for (const Value* v : values) out.push_back(v->type);
  return out;
}

bool is_valid_shape(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(),
                     [](int64_t d) { return d > 0 && (d & (d - 1)) == 0; });
}

std::optional<int64_t> OpChecker::int_attr(std::string_view name) {
  const AttrValue* v = op.find_attr(name);
  if (!v) {
    fail("expects an integer attribute '", name, "'");
    return std::nullopt;
  }
  if (const int64_t* i = std::get_if<int64_t>(v)) return *i;
  fail("expects attribute '", name, "' to be an integer, got ", print_attr_value(*v));
  return std::nullopt;
}

bool OpChecker::flag_attr(std::string_view name) {
  if (!op.has_attr(name)) return true;
  return int_attr_in(name, 0, 1).has_value();
}

std::optional<int64_t> OpChecker::int_attr_in(std::string_view name, int64_t lo, int64_t hi) {
  std::optional<int64_t> v = int_attr(name);
  if (!v || (*v >= lo && *v <= hi)) return v;
  fail("expects attribute '", name, "' in ", lo, "..", hi, ", got ", *v);
  return std::nullopt;
}

std::optional<int> OpChecker::axis_attr(int rank) {
  std::optional<int64_t> v = int_attr_in(attr::kAxis, 0, rank - 1);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

const std::string* OpChecker::str_attr(std::string_view name, bool required) {
  const AttrValue* v = op.find_attr(name);
  if (!v) {
    if (required) fail("expects a string attribute '", name, "'");
    return nullptr;
  }
  if (const std::string* s = std::get_if<std::string>(v)) return s;
  fail("expects attribute '", name, "' to be a string, got ", print_attr_value(*v));
  return nullptr;
}

const std::vector<int64_t>* OpChecker::ints_attr(std::string_view name) {
  const AttrValue* v = op.find_attr(name);
  if (!v) {
    fail("expects an integer list attribute '", name, "'");
    return nullptr;
  }
  if (const auto* list = std::get_if<std::vector<int64_t>>(v)) return list;
  fail("expects attribute '", name, "' to be an integer list, got ", print_attr_value(*v));
  return nullptr;
}

bool OpChecker::expect_type(std::string_view what, const Type& got, const Type& want,
                            std::string_view note) {
  if (got == want) return true;
  return fail("expects ", what, " of type ", want.str(), note, ", got ", got.str());
}

bool OpChecker::expect_types(std::string_view what, const std::vector<Type>& got,
                             const std::vector<Type>& want) {
  if (got == want) return true;
  return fail("expects ", what, " ", types_str(want), ", got ", types_str(got));
}

bool OpChecker::expect_same_operand_types(size_t first) {
  for (size_t i = first + 1; i < num_in(); ++i) {
    if (in(i) != in(first))
      return fail("expects operands of identical types, got ", in(first).str(), " and ",
                  in(i).str());
  }
  return true;
}

bool OpChecker::expect_pointer(size_t i) {
  if (in(i).is_ptr) return true;
  return fail("expects operand #", i, " to be a pointer or a tile of pointers, got ", in(i).str());
}

bool OpChecker::expect_num_results(size_t n, std::string_view why) {
  if (op.results.size() == n) return true;
  return fail("expects ", n, " result", n == 1 ? "" : "s", " (", why, "), got ", op.results.size());
}

}  // namespace verifier_detail

namespace {

using verifier_detail::OpChecker;

std::string count_str(int n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

/// "2 operands", "at least 3 operands", "1 to 3 operands".
std::string arity_str(int lo, int hi, std::string_view noun) {
  if (hi < 0) return "at least " + count_str(lo, noun);
  if (lo == hi) return count_str(lo, noun);
  return std::to_string(lo) + " to " + count_str(hi, noun);
}

/// `print` and `assert` are checked as SIMT ops in a SIMT function.
void check_debug(OpChecker& c) {
  using namespace verifier_detail;
  return c.simt ? check_simt_debug(c) : check_hint_or_debug(c);
}

/// No operands, results or attributes: the structural checks said all.
void check_nothing(OpChecker&) {}

/// The family check of each kind: traits pick whole families (every `kMath` row is elementwise),
/// the lists name the rest; the static_assert fails the build while a kind in ops.def has none.
using Check = void (*)(OpChecker&);
constexpr OpTable<Check> kChecks = [] {
  using namespace verifier_detail;
  using K = OpKind;
  OpTable<Check> t;
  t.add_trait(check_elementwise, kMath);
  // clang-format off
  t.add(check_identity_or_construction, {K::ProgramId, K::NumPrograms, K::Constant, K::Arange,
                                         K::Splat, K::Broadcast, K::ExpandDims, K::Reshape,
                                         K::Permute, K::Cat});
  t.add(check_elementwise, {K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min, K::Max, K::And, K::Or,
                            K::Xor, K::Shl, K::Shr, K::CmpEq, K::CmpNe, K::CmpLt, K::CmpLe,
                            K::CmpGt, K::CmpGe, K::Neg, K::Not, K::Abs, K::Fma, K::Where,
                            K::Cast, K::Bitcast, K::PtrAdd});
  t.add(check_memory, {K::Load, K::Store, K::AtomicRmw, K::AtomicCas, K::DescLoad, K::DescStore});
  t.add(check_reduction, {K::Reduce, K::ReduceGeneric, K::Scan, K::ScanGeneric, K::Dot});
  t.add(check_debug, {K::Print, K::Assert});
  t.add(check_hint_or_debug, {K::MultipleOf, K::MaxContiguous, K::Assume});
  t.add(check_nothing, {K::DebugBarrier});
  t.add(check_control, {K::For, K::If, K::While, K::Yield, K::Condition, K::WarpSpecialize});
  t.add(check_simt, {K::LaneId, K::SubgroupId, K::Barrier, K::Shuffle, K::SharedLoad,
                     K::SharedStore, K::GlobalLoad, K::GlobalStore, K::Mma, K::LdMatrix,
                     K::CpAsync, K::CpAsyncCommit, K::CpAsyncWait});
  t.add(check_wgmma_family, {K::Wgmma, K::WgmmaFence, K::WgmmaCommit, K::WgmmaWait,
                             K::FenceAsyncShared, K::SetMaxNReg});
  t.add(check_tma_family, {K::MbarrierInit, K::MbarrierArriveTx, K::MbarrierWait, K::MbarrierInval,
                          K::TmaLoad, K::TmaStore, K::TmaStoreCommit, K::TmaStoreWait,
                          K::ClusterRank, K::ClusterBarrier});
  t.add(check_coopmat_family, {K::CoopMatFill, K::CoopMatLoad, K::CoopMatStore,
                               K::CoopMatMulAdd, K::CoopMatLoadTensor});
  t.add(check_inline_asm, {K::InlineAsm, K::InlineAsmImpure});
  // clang-format on
  return t;
}();
static_assert(complete(kChecks), "an op kind of ops.def has no verifier family");

void check_semantics(OpChecker& c) {
  kChecks[c.op.kind](c);
}

/// fp8 values are stored, moved, converted and multiplied, never computed on: the targets have
/// no fp8 arithmetic (Triton's fp8 is the same). True for every op of a SIMT function (the
/// lowering made them) and for an op without fp8 operands or results.
bool fp8_use_ok(OpChecker& c) {
  using K = OpKind;
  static constexpr K kAllowed[] = {
      K::Constant, K::Splat, K::Broadcast, K::ExpandDims, K::Reshape, K::Permute,  K::Cat,
      K::Where,    K::Cast,  K::Bitcast,   K::Load,       K::Store,   K::DescLoad, K::DescStore,
      K::Dot,      K::For,   K::If,        K::While,      K::Yield,   K::Condition};
  if (c.simt ||
      std::find(std::begin(kAllowed), std::end(kAllowed), c.op.kind) != std::end(kAllowed))
    return true;
  auto fp8 = [](const Value* v) { return !v->type.is_ptr && is_fp8(v->type.dtype); };
  const Value* bad = nullptr;
  for (const Value* v : c.op.operands)
    if (v && fp8(v)) bad = v;
  for (const Value* v : c.op.results)
    if (fp8(v)) bad = v;
  if (!bad) return true;
  return c.fail("does not accept ", bad->type.str(), ": fp8 values are only loaded, stored, ",
                "reshaped, selected, cast, bitcast and multiplied in dot; cast to f16 or f32 to ",
                "compute");
}

/// Walks one function: every op in order, with the set of values visible at each point.
class FunctionVerifier {
 public:
  FunctionVerifier(const Function& fn, std::vector<std::string>& diags) : fn_(fn), diags_(diags) {}

  void run() {
    if (!fn_.body) return function_error("has no body");
    if (fn_.body->parent) function_error("body has a parent op");
    check_params();
    simt_ = verifier_detail::check_function_attrs(fn_, diags_);
    collect_definitions(*fn_.body);
    check_region(*fn_.body);
  }

 private:
  template <class... Args>
  void function_error(const Args&... parts) {
    diags_.push_back(
        detail::concat(fn_.loc.str(), ": error: function '", fn_.name, "' ", parts...));
  }

  void check_params() {
    if (fn_.params.size() != fn_.body->args.size())
      function_error("has ", fn_.params.size(), " parameters but its body has ",
                     fn_.body->args.size(), " arguments");
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      const Param& p = fn_.params[i];
      if (i >= fn_.body->args.size() || p.value != fn_.body->args[i]) {
        function_error("parameter #", i, " ('", p.name, "') is not argument #", i, " of its body");
        continue;
      }
      if (p.value->type.is_tile())
        function_error("parameter #", i, " ('", p.name, "') has type ", p.value->type.str(),
                       "; kernel parameters are scalars or pointers");
    }
  }

  void collect_definitions(const Region& region) {
    for (const Value* a : region.args) defined_in_[a] = &region;
    for (const Op* op : region.ops) {
      for (const Value* r : op->results) defined_in_[r] = &region;
      for (const Region* r : op->regions) collect_definitions(*r);
    }
  }

  void check_region(const Region& region) {
    open_.push_back(&region);
    for (const Value* a : region.args) visible_.insert(a);
    for (const Op* op : region.ops) {
      check_op(*op, region);
      for (const Value* r : op->results) visible_.insert(r);
    }
    for (const Value* a : region.args) visible_.erase(a);
    for (const Op* op : region.ops)
      for (const Value* r : op->results) visible_.erase(r);
    open_.pop_back();
  }

  void check_op(const Op& op, const Region& region) {
    OpChecker c(op, diags_, simt_ ? &*simt_ : nullptr);
    bool counts_ok = check_structure(c, region);
    if (counts_ok) check_dominance(c);
    // An op or a type foreign to the stage says all there is to say about the op.
    bool types_ok = verifier_detail::check_stage(c) && check_types_valid(c);
    if (counts_ok && types_ok && fp8_use_ok(c)) {
      check_semantics(c);
      check_attrs_sorted(c);
      if (simt_) verifier_detail::check_async_operands(c);
    }
    for (const Region* r : op.regions) check_region(*r);
  }

  /// Parent pointers and the counts of ops.def; false if the family checks must not run.
  bool check_structure(OpChecker& c, const Region& region) {
    const Op& op = c.op;
    const OpInfo& info = op.info();
    if (op.parent != &region) c.fail("is in a region that is not its parent (Op::parent)");
    for (size_t i = 0; i < op.regions.size(); ++i)
      if (op.regions[i]->parent != &op)
        c.fail("region #", i, " does not point back to its op (Region::parent)");
    for (size_t i = 0; i < op.results.size(); ++i)
      if (op.results[i]->def != &op || op.results[i]->index != i)
        c.fail("result #", i, " does not point back to its op (Value::def, Value::index)");
    bool ok = true;
    int n = static_cast<int>(op.operands.size());
    // A SIMT assert takes `rank` indices before its values and condition (check_simt_debug
    // counts them). A tile-IR assert takes its `values` (check_assert checks the count) and its
    // condition only.
    int max_operands = !c.simt && op.kind == OpKind::Assert
                           ? 1 + static_cast<int>(std::clamp<int64_t>(
                                     op.int_attr_or(attr::kValues, 0), 0, kMaxAssertValues))
                           : info.max_operands;
    if (n < info.min_operands || (max_operands >= 0 && n > max_operands))
      ok = c.fail("expects ", arity_str(info.min_operands, max_operands, "operand"), ", got ", n);
    int results = static_cast<int>(op.results.size());
    if (info.num_results >= 0 && results != info.num_results)
      ok = c.fail("expects ", count_str(info.num_results, "result"), ", got ", results);
    int regions = static_cast<int>(op.regions.size());
    if (info.num_regions >= 0 ? regions != info.num_regions : regions < 1)
      ok = c.fail("expects ",
                  info.num_regions >= 0 ? count_str(info.num_regions, "region")
                                        : arity_str(1, -1, "region"),
                  ", got ", regions);
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (!op.operands[i]) ok = c.fail("operand #", i, " is null");
    return ok;
  }

  void check_dominance(OpChecker& c) {
    for (size_t i = 0; i < c.op.operands.size(); ++i) {
      const Value* v = c.op.operands[i];
      if (visible_.count(v)) continue;
      auto it = defined_in_.find(v);
      if (it == defined_in_.end()) {
        c.fail("operand #", i, " is not defined in this function");
      } else if (std::find(open_.begin(), open_.end(), it->second) != open_.end()) {
        c.fail("operand #", i, " is used before its definition");
      } else {
        c.fail("operand #", i, " is defined in a region that does not enclose this use");
      }
    }
  }

  bool check_types_valid(OpChecker& c) {
    bool ok = true;
    for (size_t i = 0; i < c.op.results.size(); ++i)
      if (!verifier_detail::is_valid_shape(c.out(i).shape))
        ok = c.fail("result #", i, " has type ", c.out(i).str(),
                    "; tile dimensions must be powers of two");
    for (size_t k = 0; k < c.op.regions.size(); ++k) {
      const Region& r = *c.op.regions[k];
      for (size_t i = 0; i < r.args.size(); ++i)
        if (!verifier_detail::is_valid_shape(r.args[i]->type.shape))
          ok = c.fail("region #", k, " argument #", i, " has type ", r.args[i]->type.str(),
                      "; tile dimensions must be powers of two");
    }
    return ok;
  }

  void check_attrs_sorted(OpChecker& c) {
    const auto& attrs = c.op.attrs;
    for (size_t i = 1; i < attrs.size(); ++i)
      if (!(attrs[i - 1].name < attrs[i].name))
        c.fail("has attributes out of order or repeated ('", attrs[i - 1].name, "', '",
               attrs[i].name, "')");
  }

  const Function& fn_;
  std::vector<std::string>& diags_;
  std::optional<verifier_detail::SimtContext> simt_;  ///< set for a SIMT function
  std::unordered_map<const Value*, const Region*> defined_in_;
  std::unordered_set<const Value*> visible_;
  std::vector<const Region*> open_;  ///< the regions being walked, outermost first
};

[[noreturn]] void throw_first(const std::vector<std::string>& diags) {
  throw Error(ErrorKind::User, diags.front());
}

}  // namespace

std::vector<std::string> verify_all(const Function& fn) {
  std::vector<std::string> diags;
  FunctionVerifier(fn, diags).run();
  return diags;
}

std::vector<std::string> verify_all(const Module& module) {
  std::vector<std::string> diags;
  std::unordered_set<std::string_view> names;
  for (const auto& fn : module.functions) {
    if (!names.insert(fn->name).second)
      diags.push_back(
          detail::concat(fn->loc.str(), ": error: function '", fn->name, "' is defined twice"));
    FunctionVerifier(*fn, diags).run();
  }
  return diags;
}

void verify(const Function& fn) {
  std::vector<std::string> diags = verify_all(fn);
  if (!diags.empty()) throw_first(diags);
}

void verify(const Module& module) {
  std::vector<std::string> diags = verify_all(module);
  if (!diags.empty()) throw_first(diags);
}

}  // namespace tessera::ir
