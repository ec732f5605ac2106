/// \file device_print, device_assert, the compiler hints (multiple_of, max_contiguous, assume)
/// and the trace-time static_assert_ and static_print.
#include <cstdio>
#include <sstream>
#include <string>

#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {
namespace {

using detail::builder_at;
using detail::wrap;
using ir::OpKind;

tensor hint(OpKind kind, const tensor& x, const std::vector<int64_t>& values, const Here& loc) {
  std::string_view name = ir::op_name(kind);
  ir::Value* v = detail::value_of(x, name, loc);
  if (ir::is_float(v->type.dtype) && !v->type.is_ptr)
    user_error(loc, name, "applies to integers and pointers, got " + v->type.str());
  size_t want = v->type.is_tile() ? static_cast<size_t>(v->type.rank()) : 1;
  std::vector<int64_t> vals = values;
  if (vals.size() == 1 && want > 1) vals.assign(want, values[0]);
  if (vals.size() != want)
    user_error(loc, name, "needs " + std::to_string(want) + " values for " + v->type.str());
  for (int64_t d : vals)
    if (d <= 0) user_error(loc, name, "values must be positive, got " + std::to_string(d));
  return wrap(builder_at(loc).create_value(kind, {v}, v->type, {{attr::kValues, vals}}));
}

}  // namespace

void device_print(const std::string& prefix, const std::vector<tensor>& values, bool hex,
                  Here loc) {
  std::vector<ir::Value*> vs;
  for (const tensor& t : values) vs.push_back(detail::value_of(t, "print", loc));
  std::vector<ir::Attribute> attrs = {{attr::kPrefix, prefix}};
  if (hex) attrs.push_back({attr::kHex, int64_t{1}});
  builder_at(loc).create(OpKind::Print, vs, {}, attrs);
}

void device_assert(const Operand& cond, const std::string& message, Here loc) {
  ir::Value* c = detail::value_of(cond, "assert", loc);
  if (c->type.is_ptr || c->type.dtype != DType::i1)
    user_error(loc, "assert", "the condition must be i1 (a comparison), got " + c->type.str());
  builder_at(loc).create(OpKind::Assert, {c}, {}, {{attr::kMessage, message}});
}

tensor multiple_of(const tensor& x, int64_t d, Here loc) {
  return hint(OpKind::MultipleOf, x, {d}, loc);
}
tensor multiple_of(const tensor& x, const std::vector<int64_t>& d, Here loc) {
  return hint(OpKind::MultipleOf, x, d, loc);
}
tensor max_contiguous(const tensor& x, int64_t r, Here loc) {
  return hint(OpKind::MaxContiguous, x, {r}, loc);
}
tensor max_contiguous(const tensor& x, const std::vector<int64_t>& r, Here loc) {
  return hint(OpKind::MaxContiguous, x, r, loc);
}

void assume(const Operand& cond, Here loc) {
  ir::Value* c = detail::condition_value(cond, "assume", loc);
  builder_at(loc).create(OpKind::Assume, {c}, {});
}

void debug_barrier(Here loc) {
  builder_at(loc).create(OpKind::DebugBarrier, {}, {});
}

void static_assert_(bool cond, const std::string& message, Here loc) {
  Tracer::current(loc);  // only while tracing, like every kernel-language call
  if (!cond) user_error(loc, "static_assert", message.empty() ? "assertion failed" : message);
}

void static_print(const std::string& prefix, const std::vector<Operand>& values, Here loc) {
  Tracer::current(loc);
  std::string line = prefix;
  for (const Operand& v : values) {
    line += line.empty() ? "" : " ";
    switch (v.kind()) {
      case Operand::Kind::Tensor:
        line += detail::value_of(v.as_tensor(), "static_print", loc)->type.str();
        break;
      case Operand::Kind::Int:
        line += v.unsigned64() ? std::to_string(static_cast<uint64_t>(v.int_value()))
                               : std::to_string(v.int_value());
        break;
      case Operand::Kind::Float:
        line += (std::ostringstream() << v.float_value()).str();
        break;
      case Operand::Kind::Bool:
        line += v.int_value() ? "true" : "false";
        break;
    }
  }
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace tessera::tl
