/// \file Verifier typing rules: structured control flow (`for`, `if`, `while`) and the
/// terminators (`yield`, `condition`) that end the regions of every op with regions.
#include <algorithm>

#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kBool = Type::scalar(DType::i1);

/// The terminator region #k of `parent` ends in; nullopt for kinds that take no regions.
std::optional<OpKind> expected_terminator(const Op& parent, size_t k) {
  // clang-format off
  switch (parent.kind) {
    case OpKind::For: case OpKind::If: case OpKind::ReduceGeneric: case OpKind::ScanGeneric:
    case OpKind::WarpSpecialize:
      return OpKind::Yield;
    case OpKind::While: return k == 0 ? OpKind::Condition : OpKind::Yield;
    default:
      return std::nullopt;
  }
  // clang-format on
}

bool any_null(const std::vector<Value*>& values) {
  return std::any_of(values.begin(), values.end(), [](const Value* v) { return !v; });
}

/// The types the terminator of region #k of `parent` passes on (for `condition`: after its
/// i1), and what they are, for messages; nullopt when the parent's own checks cannot tell.
std::optional<std::vector<Type>> passed_types(const Op& parent, size_t k, std::string* what) {
  std::string of = " of the enclosing '" + std::string(parent.name()) + "'";
  if (any_null(parent.operands)) return std::nullopt;
  // clang-format off
  switch (parent.kind) {
    case OpKind::For: case OpKind::If:
      *what = "the results" + of;
      return types_of(parent.results);
    case OpKind::WarpSpecialize:
      *what = "nothing (its roles pass no values on)";
      return std::vector<Type>{};
    case OpKind::While:
      *what = (k == 0 ? "the results" : "the initial values") + of;
      return types_of(k == 0 ? parent.results : parent.operands);
    case OpKind::ReduceGeneric:
    case OpKind::ScanGeneric: {
      *what = "the element types of the operands" + of;
      std::vector<Type> out;
      for (const Value* v : parent.operands) out.push_back(v->type.element());
      return out;
    }
    default:
      return std::nullopt;
  }
  // clang-format on
}

/// `yield` and `condition`: placement and the types they pass to their op.
void check_terminator_op(OpChecker& c) {
  const Region* region = c.op.parent;
  if (!region) return;
  const Op* parent = region->parent;
  if (!parent) {
    c.fail("is not allowed at function top level");
    return;
  }
  if (region->ops.empty() || region->ops.back() != &c.op) {
    c.fail("must be the last op of its region");
    return;
  }
  auto it = std::find(parent->regions.begin(), parent->regions.end(), region);
  if (it == parent->regions.end()) return;
  size_t k = static_cast<size_t>(it - parent->regions.begin());
  // A terminator of the wrong kind is reported by the parent (check_terminators).
  if (expected_terminator(*parent, k) != c.op.kind) return;
  std::string what;
  std::optional<std::vector<Type>> want = passed_types(*parent, k, &what);
  if (!want) return;
  std::vector<Type> got = types_of(c.op.operands);
  if (c.op.kind == OpKind::Condition) {
    c.expect_type("operand #0 (the condition)", got.front(), kBool);
    got.erase(got.begin());
    c.expect_types("forwarded operand types matching " + what, got, *want);
    return;
  }
  c.expect_types("operand types matching " + what, got, *want);
}

void check_for(OpChecker& c) {
  check_terminators(c);
  const Type& lb = c.in(0);
  if (lb != Type::scalar(DType::i32) && lb != Type::scalar(DType::i64)) {
    c.fail("expects a lower bound of type i32 or i64, got ", lb.str());
    return;
  }
  c.expect_type("operand #1 (the upper bound)", c.in(1), lb, " (the lower bound's)");
  c.expect_type("operand #2 (the step)", c.in(2), lb, " (the lower bound's)");
  std::vector<Type> inits = types_of(c.op.operands);
  inits.erase(inits.begin(), inits.begin() + 3);
  std::vector<Type> args = inits;
  args.insert(args.begin(), lb);
  c.expect_types("body arguments to be the induction variable and the initial values",
                 types_of(c.op.region(0)->args), args);
  c.expect_types("result types to match the initial values", types_of(c.op.results), inits);
}

void check_if(OpChecker& c) {
  c.expect_type("operand #0 (the condition)", c.in(0), kBool);
  check_terminators(c);
  for (size_t k = 0; k < 2; ++k) {
    const Region& r = *c.op.region(k);
    if (!r.args.empty())
      c.fail("expects region #", k, " to have no arguments, got ", types_str(types_of(r.args)));
  }
}

void check_while(OpChecker& c) {
  check_terminators(c);
  c.expect_types("region #0 arguments to match the initial values", types_of(c.op.region(0)->args),
                 types_of(c.op.operands));
  c.expect_types("region #1 arguments to match the results", types_of(c.op.region(1)->args),
                 types_of(c.op.results));
}

/// warp_specialize {roles = [n0, n1, ...]} (region k, role k): whole warps each, the function's
/// threads in all, at the function's top level (every thread reaches it), regions without
/// arguments, and no workgroup barrier inside (the other roles never reach it: a role's barriers
/// are named ones of its own threads).
void check_warp_specialize(OpChecker& c) {
  check_terminators(c);
  if (!c.simt) return;  // check_stage reports it
  const Region* home = c.op.parent;
  if (home && home->parent)
    c.fail("must be at the function's top level (every thread reaches it), not inside '",
           home->parent->name(), "'");
  for (size_t k = 0; k < c.op.regions.size(); ++k)
    if (!c.op.region(k)->args.empty())
      c.fail("expects region #", k, " to have no arguments, got ",
             types_str(types_of(c.op.region(k)->args)));
  const std::vector<int64_t>* roles = c.ints_attr(attr::kRoles);
  if (!roles) return;
  if (roles->size() != c.op.regions.size()) {
    c.fail("has ", c.op.regions.size(), " regions but attribute 'roles' lists ", roles->size(),
           " thread counts (one per role)");
    return;
  }
  int64_t total = 0;
  for (size_t k = 0; k < roles->size(); ++k) {
    const int64_t n = (*roles)[k];
    if (n < 32 || n % 32 != 0) {
      c.fail("expects role ", k, "'s thread count to be a positive multiple of 32, got ", n);
      return;
    }
    total += n;
  }
  if (c.simt->threads && total != *c.simt->threads)
    c.fail("roles of ", total,
           " threads in all, but the function has threads = ", *c.simt->threads);
  for (size_t k = 0; k < c.op.regions.size(); ++k)
    walk(c.op.region(k), [&](const Op* op) {
      if (op->kind == OpKind::Barrier && !op->has_attr(attr::kThreadCount))
        c.fail("role ", k, " holds a workgroup barrier at ", op->loc.str(),
               ", which the other roles never reach (a GPU hangs): a role synchronizes its own "
               "threads with barrier {id, threads}");
    });
}

}  // namespace

void check_terminators(OpChecker& c) {
  for (size_t k = 0; k < c.op.regions.size(); ++k) {
    std::optional<OpKind> want = expected_terminator(c.op, k);
    if (!want) continue;
    const Region& r = *c.op.regions[k];
    if (r.ops.empty()) {
      c.fail("expects region #", k, " to end in '", op_name(*want), "', got an empty region");
    } else if (r.ops.back()->kind != *want) {
      c.fail("expects region #", k, " to end in '", op_name(*want), "', got '",
             r.ops.back()->name(), "'");
    }
  }
}

void check_control(OpChecker& c) {
  // clang-format off
  switch (c.op.kind) {
    case OpKind::For: return check_for(c);
    case OpKind::If: return check_if(c);
    case OpKind::While: return check_while(c);
    case OpKind::WarpSpecialize: return check_warp_specialize(c);
    case OpKind::Yield: case OpKind::Condition:
      return check_terminator_op(c);
    default:
      TESSERA_CHECK(false, "not a control-flow op: ", c.op.name());
  }
  // clang-format on
}

}  // namespace tessera::ir::verifier_detail
