/// \file Enumerated attribute values of the typed views, as text.
#include "core/ir/ops.h"

#include <algorithm>
#include <array>

namespace tessera::ir {
namespace {

template <class E, size_t N>
bool parse_enum(const std::array<std::string_view, N>& names, std::string_view s, E* out) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

constexpr std::array<std::string_view, 7> kAtomicOps = {"add", "max", "min", "and",
                                                        "or",  "xor", "xchg"};
constexpr std::array<std::string_view, 4> kSems = {"relaxed", "acquire", "release", "acq_rel"};
constexpr std::array<std::string_view, 3> kScopes = {"cta", "gpu", "sys"};
constexpr std::array<std::string_view, 9> kReduceKinds = {
    "sum", "prod", "max", "min", "argmax", "argmin", "xor_sum", "and", "or"};
constexpr std::array<std::string_view, 2> kPrecisions = {"ieee", "tf32"};

template <class E, size_t N>
E attr_enum(const Op* op, std::string_view attr, const std::array<std::string_view, N>& names,
            E fallback) {
  const AttrValue* v = op->find_attr(attr);
  if (!v) return fallback;
  E out = fallback;
  const auto* s = std::get_if<std::string>(v);
  TESSERA_CHECK(s && parse_enum(names, *s, &out), "bad '", attr, "' attribute on '", op->name(),
                "'");
  return out;
}

}  // namespace

std::string_view to_string(AtomicOp o) {
  return kAtomicOps[static_cast<size_t>(o)];
}
std::string_view to_string(MemSem s) {
  return kSems[static_cast<size_t>(s)];
}
std::string_view to_string(MemScope s) {
  return kScopes[static_cast<size_t>(s)];
}
std::string_view to_string(ReduceKind k) {
  return kReduceKinds[static_cast<size_t>(k)];
}
std::string_view to_string(DotPrecision p) {
  return kPrecisions[static_cast<size_t>(p)];
}
bool parse_atomic_op(std::string_view s, AtomicOp* out) {
  return parse_enum(kAtomicOps, s, out);
}
bool parse_mem_sem(std::string_view s, MemSem* out) {
  return parse_enum(kSems, s, out);
}
bool parse_mem_scope(std::string_view s, MemScope* out) {
  return parse_enum(kScopes, s, out);
}
bool parse_reduce_kind(std::string_view s, ReduceKind* out) {
  return parse_enum(kReduceKinds, s, out);
}
bool parse_dot_precision(std::string_view s, DotPrecision* out) {
  return parse_enum(kPrecisions, s, out);
}

AtomicOp AtomicRmwOp::atomic_op() const {
  return attr_enum(op, attr::kOp, kAtomicOps, AtomicOp::Add);
}
MemSem AtomicRmwOp::sem() const {
  return attr_enum(op, attr::kSem, kSems, MemSem::AcqRel);
}
MemScope AtomicRmwOp::scope() const {
  return attr_enum(op, attr::kScope, kScopes, MemScope::Gpu);
}
MemSem AtomicCasOp::sem() const {
  return attr_enum(op, attr::kSem, kSems, MemSem::AcqRel);
}
MemScope AtomicCasOp::scope() const {
  return attr_enum(op, attr::kScope, kScopes, MemScope::Gpu);
}
ReduceKind ReduceOp::reduce_kind() const {
  return attr_enum(op, attr::kKind, kReduceKinds, ReduceKind::Sum);
}
ReduceKind ScanOp::scan_kind() const {
  return attr_enum(op, attr::kKind, kReduceKinds, ReduceKind::Sum);
}
DotPrecision DotOp::precision() const {
  // f32 inputs default to TF32 like Triton; for other dtypes the attribute has no effect.
  return attr_enum(op, attr::kPrecision, kPrecisions, DotPrecision::Tf32);
}

int inline_asm_elems_per_reg(DType t, int64_t pack) {
  const int bits = dtype_bits(t);
  if (bits >= 32) return 1;
  return static_cast<int>(std::min<int64_t>(32 / std::max(bits, 8), pack));
}

AsmConstraints parse_asm_constraints(std::string_view constraints) {
  AsmConstraints c;
  size_t start = 0;
  int index = 0;
  while (start <= constraints.size()) {
    size_t end = constraints.find(',', start);
    if (end == std::string_view::npos) end = constraints.size();
    const std::string_view entry = constraints.substr(start, end - start);
    const std::string at = "entry " + std::to_string(index) + " (\"" + std::string(entry) + "\")";
    if (c.error.empty()) {
      if (entry.empty())
        c.error = "entry " + std::to_string(index) + " is empty";
      else if (entry[0] == '=' && (c.inputs || c.clobbers))
        c.error = at + " is an output after an input or clobber";
      else if (entry[0] != '~' && entry[0] != '=' && c.clobbers)
        c.error = at + " is an input after a clobber";
    }
    if (!entry.empty()) ++(entry[0] == '=' ? c.outputs : entry[0] == '~' ? c.clobbers : c.inputs);
    start = end + 1;
    ++index;
  }
  return c;
}

int inline_asm_registers(std::span<const DType> dtypes, int64_t pack) {
  int n = 0;
  for (DType t : dtypes) n += static_cast<int>(pack / inline_asm_elems_per_reg(t, pack));
  return n;
}

DType sum_accumulator(DType t) {
  return t == DType::f16 || t == DType::bf16 ? DType::f32 : t;
}

bool propagates_nan(const Op* minmax) {
  return minmax->str_attr_or(attr::kNan, "propagate") != "ignore";
}

}  // namespace tessera::ir
