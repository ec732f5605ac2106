/// \file The tracer's state: the module under construction and the list of live variables.
#include "core/lang/tracer.h"

#include <algorithm>
#include <atomic>

#include "core/ir/limits.h"
#include "core/support/error.h"

namespace tessera::tl {
namespace {
thread_local Tracer* g_active = nullptr;
std::atomic<uint64_t> g_serials{0};
}  // namespace

void user_error(const std::source_location& loc, std::string_view op, const std::string& message) {
  fail(ErrorKind::User, loc.file_name(), ":", loc.line(), ": error: '", op, "': ", message);
}

Tracer::Tracer(std::string kernel_name)
    : module_(std::make_unique<ir::Module>()),
      function_(module_->add_function(std::move(kernel_name))),
      builder_(*module_, function_->body),
      previous_(g_active),
      serial_(++g_serials) {
  // The sentinel may have attached itself to an enclosing tracer; make it our empty list.
  if (head_.tracer_) head_.tracer_->unlink(&head_);
  head_.prev_ = head_.next_ = &head_;
  head_.tracer_ = nullptr;
  g_active = this;
}

Tracer::~Tracer() {
  for (tensor* t = head_.next_; t != &head_;) {
    tensor* next = t->next_;
    t->prev_ = t->next_ = nullptr;
    t->tracer_ = nullptr;
    t->captures_ = 0;
    t = next;
  }
  head_.prev_ = head_.next_ = nullptr;
  g_active = previous_;
}

Tracer* Tracer::active() {
  return g_active;
}

Tracer& Tracer::current(const std::source_location& loc) {
  if (!g_active)
    user_error(loc, "kernel language",
               "called outside a kernel being traced (launch the kernel through tessera::Kernel)");
  return *g_active;
}

namespace {
/// "gelu_kernel" from "void {anonymous}::gelu_kernel(tessera::tl::ptr<float>, ...)".
std::string short_function_name(std::string_view pretty) {
  std::string_view head = pretty.substr(0, pretty.find('('));
  size_t start = head.find_last_of(": ");
  return std::string(start == std::string_view::npos ? head : head.substr(start + 1));
}
}  // namespace

ir::Builder& Tracer::at(const std::source_location& loc) {
  if (++ops_ > ir::kMaxOps)
    user_error(loc, "kernel",
               "more than " + std::to_string(ir::kMaxOps) +
                   " operations traced, the limit of one kernel (a C++ loop that "
                   "never ends? tl::range makes an IR loop, traced once)");
  // A kernel traced without a name is named after the function of its first op.
  if (function_->name.empty()) function_->name = short_function_name(loc.function_name());
  if (!function_->loc.known()) function_->loc = Location::from(loc);
  builder_.set_loc(Location::from(loc));
  return builder_;
}

void Tracer::enter_region(std::string_view op, const std::source_location& loc) {
  if (depth_ + 1 > ir::kMaxRegionDepth)
    user_error(loc, op,
               "regions nested " + std::to_string(depth_ + 1) + " deep, over the limit of " +
                   std::to_string(ir::kMaxRegionDepth) +
                   " (for, if, while and combine functions inside one another)");
  depth_ += 1;
}

ir::Value* Tracer::add_param(const std::string& name, ir::Type type,
                             std::vector<ir::Attribute> attrs) {
  ir::Value* v = module_->add_arg(function_->body, std::move(type));
  std::sort(attrs.begin(), attrs.end(),
            [](const ir::Attribute& a, const ir::Attribute& b) { return a.name < b.name; });
  function_->params.push_back(ir::Param{name, v, std::move(attrs)});
  return v;
}

std::unique_ptr<ir::Module> Tracer::finish() {
  if (!deferred_error_.empty()) fail(ErrorKind::User, deferred_error_);
  TESSERA_CHECK(scopes_.empty(), "an IR scope is still open at the end of tracing");
  // The body after each tl::return_if went into the else region of its if: end them all.
  for (auto it = early_returns_.rbegin(); it != early_returns_.rend(); ++it) {
    builder_.set_insertion_end(*it);
    builder_.create(ir::OpKind::Yield, {}, {});
  }
  early_returns_.clear();
  return std::move(module_);
}

void Tracer::link(tensor* t) {
  t->tracer_ = this;
  t->prev_ = head_.prev_;
  t->next_ = &head_;
  head_.prev_->next_ = t;
  head_.prev_ = t;
}

void Tracer::unlink(tensor* t) {
  t->prev_->next_ = t->next_;
  t->next_->prev_ = t->prev_;
  t->prev_ = t->next_ = nullptr;
  t->tracer_ = nullptr;
}

std::vector<tensor*> Tracer::live_variables() const {
  std::vector<tensor*> out;
  for (tensor* t = head_.next_; t != &head_; t = t->next_) out.push_back(t);
  return out;
}

void Tracer::begin_capture(const std::vector<tensor*>& vars) {
  for (tensor* t : vars)
    if (t) t->captures_ += 1;
}

void Tracer::end_capture(const std::vector<tensor*>& vars) {
  for (tensor* t : vars)
    if (t) t->captures_ -= 1;
}

void Tracer::forget(tensor* var) {
  for (std::vector<tensor*>* scope : scopes_)
    for (tensor*& t : *scope)
      if (t == var) t = nullptr;
}

// --- tensor's hooks into the tracer ------------------------------------------------------------

void tensor::attach() {
  if (Tracer* t = Tracer::active()) t->link(this);
}

uint64_t tensor::current_trace() {
  return g_active ? g_active->serial_ : 0;
}

void tensor::stale(const Here* loc, std::string_view op) {
  std::string message =
      "a tl::tensor used outside the trace that made it (kept in a static, or captured from "
      "another kernel's trace, or used after its trace ended); make kernel values inside the "
      "kernel, and pass values between kernels through buffers";
  if (loc) user_error(*loc, op, message);
  fail(ErrorKind::User, "error: ", message);
}

void tensor::detach() {
  if (!tracer_) return;
  if (captures_ > 0) tracer_->forget(this);
  tracer_->unlink(this);
}

}  // namespace tessera::tl
