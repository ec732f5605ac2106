/// \file Device print, device assert and assume. Print writes one line per element, in
/// row-major order, with floats in the shortest form that reads back to the same value.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/interp/exec.h"
#include "core/interp/scalar.h"
#include "core/support/fault_text.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;

/// The shortest "%.*g" text of a narrow float that converts back to the same bits.
template <class T>
std::string shortest_narrow(typename T::S bits) {
  const double x = T::to_double(bits);
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (T::from_double(std::strtod(buf, nullptr)) == bits) break;
  }
  return buf;
}

template <class S>
std::string shortest(S x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

/// "0x" and the element's bits, two hex digits per byte.
std::string hex_element(const std::byte* p, int bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, bytes);  // little-endian host
  std::ostringstream os;
  os << "0x" << std::hex;
  os.width(bytes * 2);
  os.fill('0');
  os << bits;
  return os.str();
}

}  // namespace

std::string format_scalar(ir::DType dtype, bool is_ptr, const std::byte* bits, bool hex) {
  if (hex || is_ptr) return hex_element(bits, is_ptr ? 8 : ir::dtype_bytes(dtype));
  return dispatch(dtype, [&](auto t) -> std::string {
    using T = decltype(t);
    typename T::S x;
    std::memcpy(&x, bits, sizeof x);
    if constexpr (T::kNarrow)
      return shortest_narrow<T>(x);
    else if constexpr (T::kFloat)
      return shortest(x);
    else if constexpr (T::kSigned)
      return std::to_string(static_cast<int64_t>(x));
    else
      return std::to_string(static_cast<uint64_t>(x));
  });
}

namespace {

std::string format_element(const RuntimeValue& v, int64_t i, bool hex) {
  return format_scalar(v.dtype, v.is_ptr, v.raw() + i * v.elem_bytes(), hex);
}

void print(const Exec& ex, const Op& op) {
  const std::string prefix = op.str_attr_or(attr::kPrefix, "");
  const bool hex = op.int_attr_or(attr::kHex, 0) != 0;
  const auto& pid = ex.program();
  std::ostringstream head;
  head << "pid (" << pid[0] << ", " << pid[1] << ", " << pid[2] << ") ";
  std::ostringstream os;
  if (op.operands.empty()) os << head.str() << prefix << "\n";
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const RuntimeValue& v = ex.get(op.operand(k));
    const std::string label =
        op.operands.size() > 1 ? prefix + "(operand " + std::to_string(k) + ") " : prefix;
    for (int64_t i = 0; i < v.numel(); ++i) {
      os << head.str();
      if (!v.shape.empty()) os << "idx " << index_str(v.shape, i) << " ";
      os << label << format_element(v, i, hex) << "\n";
    }
  }
  ex.out() << os.str() << std::flush;
}

/// The first false element of an i1 value, or -1.
int64_t first_false(const RuntimeValue& cond) {
  TESSERA_CHECK(cond.dtype == ir::DType::i1 && !cond.is_ptr, "condition of type ",
                cond.type().str());
  const uint8_t* c = cond.data<uint8_t>();
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (!c[i]) return i;
  return -1;
}

void check(const Exec& ex, const Op& op) {
  const RuntimeValue& cond = ex.get(op.operands.back());
  const int64_t i = first_false(cond);
  if (i < 0) return;
  const std::string index = cond.shape.empty() ? "" : ", index " + index_str(cond.shape, i);
  if (op.kind == OpKind::Assume) ex.fault(op, "assumption violated", index);
  const ir::AssertOp a(&op);
  std::vector<uint64_t> values;
  for (const ir::Value* v : a.values())
    values.push_back(static_cast<uint64_t>(int_element(ex.get(v), i)));
  ex.fault(op, assert_heading(op), index + ": " + format_assert_message(a.message(), values));
}

}  // namespace

void exec_debug(Exec& ex, const Op& op) {
  if (op.kind == OpKind::DebugBarrier) return;  // a program's ops already run in order here
  if (op.kind == OpKind::Print) return print(ex, op);
  check(ex, op);
}

}  // namespace tessera::interp
