/// \file print, assert and assume in the SIMT interpreter. Each thread that runs a print writes
/// the line the tile interpreter writes for the element it holds (its `rank` index operands name
/// the element), so the two interpreters' outputs agree line for line up to order; threads print
/// in thread order. An assert reports the lowest failing thread and its element's index.
#include <sstream>

#include "core/interp/simt_exec.h"
#include "core/support/fault_text.h"

namespace tessera::interp::simt {
namespace {

/// "(i, j)": thread t's index operands (the first `rank` operands).
std::string index_of(const Instr& in, uint32_t t) {
  std::string s = "(";
  for (int64_t d = 0; d < in.imm[0]; ++d) {
    if (d) s += ", ";
    s += std::to_string(in.in[static_cast<size_t>(d)].as<int32_t>()[t]);
  }
  return s + ")";
}

/// print %i.., %v {prefix, hex, rank = imm[0]}; imm[1] = hex.
void print(Machine& m, const Instr& in, const Mask& mask) {
  const std::string prefix = in.op->str_attr_or(attr::kPrefix, "");
  const ir::Type& type = in.op->operands.back()->type;
  const Slot& value = in.in.back();
  std::ostringstream os;
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t]) continue;
    os << "pid (" << m.pid[0] << ", " << m.pid[1] << ", " << m.pid[2] << ") ";
    if (in.imm[0] > 0) os << "idx " << index_of(in, t) << " ";
    os << prefix << format_scalar(type.dtype, type.is_ptr, value.data + t * value.bytes, in.imm[1])
       << "\n";
  }
  m.out << os.str() << std::flush;
}

/// Thread t's element of an integer slot of `dtype`, extended to 64 bits by its signedness.
uint64_t slot_int(const Slot& s, ir::DType dtype, uint32_t t) {
  const bool sign = ir::is_signed_int(dtype);
  switch (s.bytes) {
    case 1:
      return sign ? static_cast<uint64_t>(s.as<int8_t>()[t]) : s.as<uint8_t>()[t];
    case 2:
      return sign ? static_cast<uint64_t>(s.as<int16_t>()[t]) : s.as<uint16_t>()[t];
    case 4:
      return sign ? static_cast<uint64_t>(s.as<int32_t>()[t]) : s.as<uint32_t>()[t];
    default:
      return s.as<uint64_t>()[t];
  }
}

/// assert %i.., %v.., %cond {message, rank = imm[0], values = imm[1]}.
void check_assert(Machine& m, const Instr& in, const Mask& mask) {
  const uint8_t* cond = in.in.back().as<uint8_t>();
  for (uint32_t t = 0; t < m.threads; ++t) {
    if (!mask.on[t] || cond[t]) continue;
    const std::string index = in.imm[0] > 0 ? ", index " + index_of(in, t) : "";
    std::vector<uint64_t> values;
    for (int64_t k = in.imm[0]; k < in.imm[0] + in.imm[1]; ++k) {
      const auto at = static_cast<size_t>(k);
      values.push_back(slot_int(in.in[at], in.op->operand(at)->type.dtype, t));
    }
    m.fault(*in.op, static_cast<int>(t), assert_heading(*in.op),
            index + ": " + format_assert_message(in.op->str_attr_or(attr::kMessage, ""), values));
  }
}

void check_assume(Machine& m, const Instr& in, const Mask& mask) {
  const uint8_t* cond = in.in[0].as<uint8_t>();
  for (uint32_t t = 0; t < m.threads; ++t)
    if (mask.on[t] && !cond[t]) m.fault(*in.op, static_cast<int>(t), "assumption violated", "");
}

}  // namespace

Handler select_debug(Instr& in) {
  const ir::Op& op = *in.op;
  if (op.kind == ir::OpKind::Assume) return check_assume;
  const ir::SimtDebugOp view(&op);
  in.imm[0] = view.rank();
  // print: imm[1] = hex; assert: imm[1] = the number of reported values.
  in.imm[1] = op.kind == ir::OpKind::Print ? op.int_attr_or(attr::kHex, 0) != 0 : view.num_values();
  const int64_t values = op.kind == ir::OpKind::Print ? 0 : in.imm[1];
  TESSERA_CHECK(in.imm[0] >= 0 && static_cast<size_t>(in.imm[0] + values) + 1 == in.in.size(), "'",
                op.name(), "' with rank ", in.imm[0], ", ", values, " values and ", in.in.size(),
                " operands");
  return op.kind == ir::OpKind::Print ? print : check_assert;
}

}  // namespace tessera::interp::simt
