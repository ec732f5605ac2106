/// \file cast and bitcast between every pair of dtypes, on whole values; the per-element rules
/// live in convert.h.
#include "core/interp/convert.h"
#include "core/interp/exec.h"

namespace tessera::interp {
namespace {

using ir::Op;

RuntimeValue bitcast(const RuntimeValue& src, const ir::Type& type) {
  RuntimeValue out = src;
  out.dtype = type.dtype;
  out.is_ptr = type.is_ptr;
  auto is_bool = [](const RuntimeValue& v) { return !v.is_ptr && v.dtype == ir::DType::i1; };
  TESSERA_CHECK(out.elem_bytes() == src.elem_bytes() && is_bool(out) == is_bool(src),
                "bitcast from ", src.type().str(), " to ", type.str());
  return out;
}

}  // namespace

RuntimeValue convert(const RuntimeValue& src, ir::DType dtype, bool to_ptr) {
  RuntimeValue out = RuntimeValue::make(dtype, to_ptr, src.shape);
  dispatch(src.storage_dtype(), [&](auto from) {
    dispatch(out.storage_dtype(), [&](auto to) {
      using From = decltype(from);
      using To = decltype(to);
      const auto* in = src.data<typename From::S>();
      auto* dst = out.data<typename To::S>();
      for (int64_t i = 0; i < out.numel(); ++i) dst[i] = convert_element<To, From>(in[i]);
    });
  });
  return out;
}

RuntimeValue cast_value(const Op& op, std::span<const RuntimeValue* const> operands,
                        const ir::Shape& /*shape: the operand's*/) {
  TESSERA_CHECK(operands.size() == 1, "'", op.name(), "' with ", operands.size(), " operands");
  const ir::Type& type = op.result()->type;
  if (op.kind == ir::OpKind::Bitcast) return bitcast(*operands[0], type);
  return convert(*operands[0], type.dtype, type.is_ptr);
}

void exec_cast(Exec& ex, const Op& op) {
  const RuntimeValue* operands[] = {&ex.get(op.operand(0))};
  ex.set(op.result(), cast_value(op, operands, op.result()->type.shape));
}

}  // namespace tessera::interp
