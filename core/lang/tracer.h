/// \file The tracer: runs a kernel function once per specialization and records the tile IR.
///
/// One Tracer is active per thread while a kernel is traced. It owns the Module being built, the
/// builder's insertion point, and the list of live `tl::tensor` variables. IR scopes (loops,
/// branches) capture the live variables when they open and decide, when they close, which of
/// them the scope assigned: those become iteration arguments or branch results.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "../ir/builder.h"
#include "../ir/ir.h"
#include "tensor.h"

namespace tessera::tl {

class Tracer {
 public:
  /// `kernel_name` may be empty: the kernel is then named after the function of its first op,
  /// whose location also becomes the function's.
  explicit Tracer(std::string kernel_name);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// The tracer active on this thread; a user error if none (a kernel-language call outside a
  /// kernel being traced).
  static Tracer& current(const std::source_location& loc);
  static Tracer* active();

  ir::Module& module() { return *module_; }
  ir::Function& function() { return *function_; }
  ir::Builder& builder() { return builder_; }
  /// Points the builder's location at `loc` and returns the builder.
  ir::Builder& at(const std::source_location& loc);

  /// Adds a kernel parameter (a region argument of the body) and returns its value.
  ir::Value* add_param(const std::string& name, ir::Type type, std::vector<ir::Attribute> attrs);

  /// Finishes tracing: checks every scope closed, verifies nothing escaped, returns the module.
  std::unique_ptr<ir::Module> finish();
  /// Records a user error found where throwing is impossible (a destructor); finish() throws it.
  void defer_error(std::string message) {
    if (deferred_error_.empty()) deferred_error_ = std::move(message);
  }

  // --- variable capture, used by loops and branches -----------------------------------------
  /// The live variables, in construction order.
  std::vector<tensor*> live_variables() const;
  void begin_capture(const std::vector<tensor*>& vars);
  void end_capture(const std::vector<tensor*>& vars);
  /// Called by ~tensor for a captured variable: forgets it in every open scope.
  void forget(tensor* var);
  /// A region opens inside the current one (for, if, while, a combine function): a user error at
  /// `loc` past ir::kMaxRegionDepth levels. leave_region() closes it.
  void enter_region(std::string_view op, const std::source_location& loc);
  void leave_region() { depth_ -= 1; }
  /// Open scopes register their captured-variable lists here so forget() can find them.
  void push_scope(std::vector<tensor*>* vars) { scopes_.push_back(vars); }
  void pop_scope() { scopes_.pop_back(); }

  // --- early returns (tl::return_if) ------------------------------------------------------------
  /// Whether the insertion point is the kernel body itself (inside no loop, branch or combine
  /// function other than the else regions of earlier early returns).
  bool at_body_level() const { return depth_ == static_cast<int>(early_returns_.size()); }
  /// An early return opened an if whose else region, `rest`, now receives the body: finish()
  /// ends it (and every earlier one) with its yield.
  void add_early_return(ir::Region* rest) { early_returns_.push_back(rest); }

 private:
  friend class tensor;
  void link(tensor* t);
  void unlink(tensor* t);

  std::unique_ptr<ir::Module> module_;
  ir::Function* function_;
  ir::Builder builder_;
  tensor head_;  // sentinel of the circular list of live tensors (not itself a variable)
  std::vector<std::vector<tensor*>*> scopes_;
  std::string deferred_error_;
  std::vector<ir::Region*> early_returns_;  // else regions of tl::return_if, outermost first
  Tracer* previous_;
  uint64_t serial_;  // this trace's number, tensor::trace_ of the values it makes
  int depth_ = 0;    // regions open around the insertion point
  int64_t ops_ = 0;  // operations traced (calls of at()), against ir::kMaxOps
};

/// Builds a user error: "<file>:<line>: error: '<op>': <message>".
[[noreturn]] void user_error(const std::source_location& loc, std::string_view op,
                             const std::string& message);

}  // namespace tessera::tl
