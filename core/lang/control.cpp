/// \file IR control flow from C++: tl::range loops, tl::if_ and tl::while_, with automatic
/// detection of loop-carried variables and branch results.
///
/// The mechanism is the same for all three: when a scope opens, every live tl::tensor variable
/// gets a fresh region argument (or its value is remembered); the scope's body is traced once;
/// when it closes, the variables whose value changed are the scope's results. Arguments of
/// unchanged variables are replaced by their outer values and removed.
#include <string>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;
using ir::Type;

/// Live variables split into those with a value (captured) and those without.
struct Capture {
  std::vector<tensor*> vars;
  std::vector<ir::Value*> values;  // values when the scope opened
  std::vector<tensor*> unset;      // variables declared but never given a value
};

Capture capture_live(Tracer& tracer) {
  Capture c;
  for (tensor* t : tracer.live_variables()) {
    if (t->defined()) {
      c.vars.push_back(t);
      c.values.push_back(t->value());
    } else {
      c.unset.push_back(t);
    }
  }
  return c;
}

void set_value(tensor* t, ir::Value* v) {
  *t = wrap(v);
}

/// Drops the arguments at positions where !keep[i], replacing their uses by `repl[i]`.
void prune_args(ir::Region* region, size_t first, const std::vector<bool>& keep,
                const std::vector<ir::Value*>& repl) {
  std::vector<ir::Value*> args(region->args.begin(), region->args.begin() + first);
  for (size_t i = 0; i < keep.size(); ++i) {
    ir::Value* a = region->args[first + i];
    if (keep[i]) {
      args.push_back(a);
    } else {
      ir::replace_all_uses(region, a, repl[i]);
    }
  }
  for (size_t i = 0; i < args.size(); ++i) args[i]->index = static_cast<uint32_t>(i);
  region->args = std::move(args);
}

void check_unset(const std::vector<tensor*>& unset, std::string_view op, const Here& loc) {
  for (tensor* t : unset)
    if (t && t->defined())
      user_error(loc, op,
                 "a variable with no value before the " + std::string(op) +
                     " is assigned inside it; give it an initial value first (a value "
                     "defined inside an IR region cannot be used after it)");
}

void check_same_type(ir::Value* before, ir::Value* after, std::string_view op, const Here& loc) {
  if (before->type != after->type)
    user_error(loc, op,
               "a carried variable changes type from " + before->type.str() + " to " +
                   after->type.str() + "; convert it with .to() so both sides agree");
}

}  // namespace

// --- for ---------------------------------------------------------------------------------------

Range range(const Operand& lo, const Operand& hi, const Operand& step, Here loc) {
  return range(lo, hi, step, RangeOptions{}, loc);
}

Range range(const Operand& lo, const Operand& hi, const Operand& step, const RangeOptions& options,
            Here loc) {
  std::vector<ir::Attribute> attrs;
  auto positive = [&](const std::optional<int>& v, std::string_view name) {
    if (!v) return;
    if (*v < 1)
      user_error(loc, "for", std::string(name) + " must be at least 1, got " + std::to_string(*v));
    attrs.push_back({name, int64_t{*v}});
  };
  positive(options.num_stages, attr::kNumStages);
  positive(options.loop_unroll_factor, attr::kLoopUnrollFactor);
  if (options.flatten) attrs.push_back({attr::kFlatten, int64_t{1}});
  if (options.warp_specialize) attrs.push_back({attr::kWarpSpecialize, int64_t{1}});
  ir::Value* l = detail::require_scalar(lo, "for", "the lower bound", loc);
  ir::Value* h = detail::require_scalar(hi, "for", "the upper bound", loc);
  ir::Value* s = detail::require_scalar(step, "for", "the step", loc);
  for (ir::Value* v : {l, h, s})
    if (v->type.is_ptr || ir::is_float(v->type.dtype) || v->type.dtype == DType::i1)
      user_error(loc, "for", "loop bounds must be integers, got " + v->type.str());
  DType t = detail::promote(detail::promote(l->type.dtype, h->type.dtype), s->type.dtype);
  if (ir::dtype_bits(t) < 32) t = DType::i32;
  if (t == DType::u32) t = DType::i64;  // every u32 value fits, and the loop runs in i64
  if (t == DType::u64) t = DType::i64;
  return Range(detail::cast_to(l, t, loc), detail::cast_to(h, t, loc), detail::cast_to(s, t, loc),
               loc, std::move(attrs));
}

Range::Range(ir::Value* lo, ir::Value* hi, ir::Value* step, std::source_location loc,
             std::vector<ir::Attribute> attrs)
    : lo_(lo), hi_(hi), step_(step), loc_(loc), attrs_(std::move(attrs)) {}

Range::~Range() {
  if (!opened_ || closed_) return;
  Tracer* tracer = Tracer::active();
  if (!tracer) return;
  tracer->leave_region();
  tracer->pop_scope();
  tracer->end_capture(vars_);
  tracer->builder().set_insertion_end(outer_);
  if (std::uncaught_exceptions() == 0)
    tracer->defer_error(std::string(loc_.file_name()) + ":" + std::to_string(loc_.line()) +
                        ": error: 'for': the loop body left early (break or return); IR loops "
                        "run their body to the end: use tl::while_ with a condition instead");
}

Range::iterator Range::begin() {
  open();
  return iterator(this, false);
}

tensor Range::iterator::operator*() const {
  return wrap(range_->body_->args[0]);
}

Range::iterator& Range::iterator::operator++() {
  range_->close();
  done_ = true;
  return *this;
}

void Range::open() {
  Tracer& tracer = Tracer::current(loc_);
  tracer.enter_region("for", loc_);
  Capture c = capture_live(tracer);
  vars_ = std::move(c.vars);
  inits_ = std::move(c.values);
  unset_vars_ = std::move(c.unset);
  outer_ = tracer.builder().region();
  body_ = tracer.module().new_region(nullptr);
  tracer.module().add_arg(body_, lo_->type);
  for (size_t i = 0; i < vars_.size(); ++i)
    set_value(vars_[i], tracer.module().add_arg(body_, inits_[i]->type));
  tracer.begin_capture(vars_);
  tracer.begin_capture(unset_vars_);
  tracer.push_scope(&vars_);
  tracer.push_scope(&unset_vars_);
  tracer.builder().set_insertion_end(body_);
  opened_ = true;
}

void Range::close() {
  Tracer& tracer = Tracer::current(loc_);
  closed_ = true;
  tracer.leave_region();
  tracer.pop_scope();
  tracer.pop_scope();
  tracer.end_capture(vars_);
  tracer.end_capture(unset_vars_);
  check_unset(unset_vars_, "for", loc_);
  std::vector<bool> keep(vars_.size());
  std::vector<ir::Value*> yields, inits;
  std::vector<Type> types;
  for (size_t i = 0; i < vars_.size(); ++i) {
    ir::Value* arg = body_->args[i + 1];
    keep[i] = vars_[i] && vars_[i]->value() != arg;
    if (!keep[i]) continue;
    check_same_type(arg, vars_[i]->value(), "for", loc_);
    yields.push_back(vars_[i]->value());
    inits.push_back(inits_[i]);
    types.push_back(arg->type);
  }
  tracer.builder().set_insertion_end(body_);
  tracer.at(loc_).create(OpKind::Yield, yields, {});
  prune_args(body_, 1, keep, inits_);
  tracer.builder().set_insertion_end(outer_);
  std::vector<ir::Value*> operands = {lo_, hi_, step_};
  operands.insert(operands.end(), inits.begin(), inits.end());
  ir::Op* op = tracer.at(loc_).create(OpKind::For, operands, types, attrs_);
  op->regions.push_back(body_);
  body_->parent = op;
  size_t r = 0;
  for (size_t i = 0; i < vars_.size(); ++i) {
    if (keep[i])
      set_value(vars_[i], op->result(r++));
    else if (vars_[i])
      set_value(vars_[i], inits_[i]);
  }
}

// --- if ----------------------------------------------------------------------------------------

namespace {

/// Traces `fn` into a fresh detached region; returns the variables' values at its end and
/// restores the values they had before.
std::vector<ir::Value*> trace_branch(Tracer& tracer, ir::Region* region, Capture& c,
                                     const std::function<void()>& fn) {
  tracer.builder().set_insertion_end(region);
  if (fn) fn();
  std::vector<ir::Value*> out;
  for (size_t i = 0; i < c.vars.size(); ++i) {
    out.push_back(c.vars[i] ? c.vars[i]->value() : nullptr);
    if (c.vars[i]) set_value(c.vars[i], c.values[i]);
  }
  return out;
}

std::vector<ir::Value*> branch_unset(Capture& c) {
  std::vector<ir::Value*> out;
  for (tensor*& t : c.unset) {
    out.push_back(t ? t->value() : nullptr);
    if (t) *t = tensor();
  }
  return out;
}

}  // namespace

void if_(const Operand& cond, const std::function<void()>& then_fn, Here loc) {
  if_(cond, then_fn, nullptr, loc);
}

void if_(const Operand& cond, const std::function<void()>& then_fn,
         const std::function<void()>& else_fn, Here loc) {
  Tracer& tracer = Tracer::current(loc);
  ir::Value* c = detail::condition_value(cond, "if", loc);
  tracer.enter_region("if", loc);
  Capture cap = capture_live(tracer);
  ir::Region* outer = tracer.builder().region();
  ir::Region* then_r = tracer.module().new_region(nullptr);
  ir::Region* else_r = tracer.module().new_region(nullptr);
  tracer.begin_capture(cap.vars);
  tracer.begin_capture(cap.unset);
  tracer.push_scope(&cap.vars);
  tracer.push_scope(&cap.unset);
  struct Restore {  // leaves the tracer consistent if a branch throws
    Tracer& t;
    Capture& c;
    ir::Region* outer;
    ~Restore() {
      t.leave_region();
      t.pop_scope();
      t.pop_scope();
      t.end_capture(c.vars);
      t.end_capture(c.unset);
      t.builder().set_insertion_end(outer);
    }
  };
  std::vector<ir::Value*> v_then, v_else, u_then, u_else;
  {
    Restore restore{tracer, cap, outer};
    v_then = trace_branch(tracer, then_r, cap, then_fn);
    u_then = branch_unset(cap);
    v_else = trace_branch(tracer, else_r, cap, else_fn);
    u_else = branch_unset(cap);
  }
  std::vector<ir::Value*> y_then, y_else;
  std::vector<Type> types;
  std::vector<tensor*> targets;
  for (size_t i = 0; i < cap.vars.size(); ++i) {
    if (!cap.vars[i] || (v_then[i] == cap.values[i] && v_else[i] == cap.values[i])) continue;
    check_same_type(v_then[i], v_else[i], "if", loc);
    check_same_type(cap.values[i], v_then[i], "if", loc);
    y_then.push_back(v_then[i]);
    y_else.push_back(v_else[i]);
    types.push_back(v_then[i]->type);
    targets.push_back(cap.vars[i]);
  }
  for (size_t i = 0; i < cap.unset.size(); ++i) {
    if (!cap.unset[i] || (!u_then[i] && !u_else[i])) continue;
    if (!u_then[i] || !u_else[i])
      user_error(loc, "if",
                 "a variable with no value before the branch is assigned in only one "
                 "of its sides; assign it in both, or give it a value before");
    check_same_type(u_then[i], u_else[i], "if", loc);
    y_then.push_back(u_then[i]);
    y_else.push_back(u_else[i]);
    types.push_back(u_then[i]->type);
    targets.push_back(cap.unset[i]);
  }
  tracer.builder().set_insertion_end(then_r);
  tracer.at(loc).create(OpKind::Yield, y_then, {});
  tracer.builder().set_insertion_end(else_r);
  tracer.at(loc).create(OpKind::Yield, y_else, {});
  tracer.builder().set_insertion_end(outer);
  ir::Op* op = tracer.at(loc).create(OpKind::If, {c}, types);
  for (ir::Region* r : {then_r, else_r}) {
    op->regions.push_back(r);
    r->parent = op;
  }
  for (size_t i = 0; i < targets.size(); ++i) set_value(targets[i], op->result(i));
}

// --- while -------------------------------------------------------------------------------------

void while_(const std::function<tensor()>& cond, const std::function<void()>& body, Here loc) {
  Tracer& tracer = Tracer::current(loc);
  ir::Module& m = tracer.module();
  tracer.enter_region("while", loc);
  Capture cap = capture_live(tracer);
  ir::Region* outer = tracer.builder().region();
  ir::Region* before = m.new_region(nullptr);
  ir::Region* after = m.new_region(nullptr);
  size_t n = cap.vars.size();
  for (size_t i = 0; i < n; ++i) set_value(cap.vars[i], m.add_arg(before, cap.values[i]->type));
  tracer.begin_capture(cap.vars);
  tracer.begin_capture(cap.unset);
  tracer.push_scope(&cap.vars);
  tracer.push_scope(&cap.unset);
  std::vector<ir::Value*> v_cond(n), v_body(n);
  ir::Value* c = nullptr;
  {
    struct Restore {
      Tracer& t;
      Capture& c;
      ir::Region* outer;
      ~Restore() {
        t.leave_region();
        t.pop_scope();
        t.pop_scope();
        t.end_capture(c.vars);
        t.end_capture(c.unset);
        t.builder().set_insertion_end(outer);
      }
    } restore{tracer, cap, outer};
    tracer.builder().set_insertion_end(before);
    tensor ct = cond();
    c = detail::condition_value(Operand(ct, loc), "while", loc);
    for (size_t i = 0; i < n; ++i) {
      if (!cap.vars[i]) continue;
      v_cond[i] = cap.vars[i]->value();
      check_same_type(before->args[i], v_cond[i], "while", loc);
      set_value(cap.vars[i], m.add_arg(after, v_cond[i]->type));
    }
    tracer.builder().set_insertion_end(after);
    body();
    for (size_t i = 0; i < n; ++i)
      if (cap.vars[i]) v_body[i] = cap.vars[i]->value();
  }
  check_unset(cap.unset, "while", loc);
  // Arguments of `after` exist only for variables still alive after the condition; index them.
  std::vector<bool> keep(n);
  std::vector<ir::Value*> after_args_all(n, nullptr);
  for (size_t i = 0, a = 0; i < n; ++i)
    if (v_cond[i]) after_args_all[i] = after->args[a++];
  std::vector<ir::Value*> inits, conds, yields;
  std::vector<Type> types;
  for (size_t i = 0; i < n; ++i) {
    keep[i] = cap.vars[i] && (v_cond[i] != before->args[i] || v_body[i] != after_args_all[i]);
    if (!keep[i]) continue;
    check_same_type(before->args[i], v_body[i], "while", loc);
    inits.push_back(cap.values[i]);
    conds.push_back(v_cond[i]);
    yields.push_back(v_body[i]);
    types.push_back(v_cond[i]->type);
  }
  conds.insert(conds.begin(), c);
  tracer.builder().set_insertion_end(before);
  tracer.at(loc).create(OpKind::Condition, conds, {});
  tracer.builder().set_insertion_end(after);
  tracer.at(loc).create(OpKind::Yield, yields, {});
  prune_args(before, 0, keep, cap.values);
  std::vector<bool> keep_after;
  std::vector<ir::Value*> repl_after;
  for (size_t i = 0; i < n; ++i) {
    if (!after_args_all[i]) continue;
    keep_after.push_back(keep[i]);
    repl_after.push_back(cap.values[i]);
  }
  prune_args(after, 0, keep_after, repl_after);
  tracer.builder().set_insertion_end(outer);
  ir::Op* op = tracer.at(loc).create(OpKind::While, inits, types);
  for (ir::Region* r : {before, after}) {
    op->regions.push_back(r);
    r->parent = op;
  }
  for (size_t i = 0, r = 0; i < n; ++i) {
    if (keep[i])
      set_value(cap.vars[i], op->result(r++));
    else if (cap.vars[i])
      set_value(cap.vars[i], cap.values[i]);
  }
}

// --- early return ------------------------------------------------------------------------------

void return_if(const Operand& cond, Here loc) {
  Tracer& tracer = Tracer::current(loc);
  if (!tracer.at_body_level())
    user_error(loc, "return_if",
               "an early return inside a tl::range, tl::if_ or tl::while_ body (or a combine "
               "function) is not supported: call it at the top level of the kernel body, or "
               "wrap the rest of that body in tl::if_");
  ir::Value* c = detail::condition_value(cond, "return_if", loc);
  tracer.enter_region("return_if", loc);  // the rest of the body nests one level deeper
  ir::Region* outer = tracer.builder().region();
  ir::Region* then_r = tracer.module().new_region(nullptr);
  ir::Region* else_r = tracer.module().new_region(nullptr);
  tracer.builder().set_insertion_end(then_r);
  tracer.at(loc).create(OpKind::Yield, {}, {});
  tracer.builder().set_insertion_end(outer);
  ir::Op* op = tracer.at(loc).create(OpKind::If, {c}, {});
  for (ir::Region* r : {then_r, else_r}) {
    op->regions.push_back(r);
    r->parent = op;
  }
  tracer.builder().set_insertion_end(else_r);
  tracer.add_early_return(else_r);
}

}  // namespace tessera::tl
