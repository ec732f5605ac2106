/// \file Program identity, constants and the ops that build or rearrange tiles (they move
/// elements without looking at them, so they work on fixed-size byte elements), plus ptr_add.
#include <cstring>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"
#include "core/interp/scalar.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> strides_of(const ir::Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// out[i] = in[source(i)] for every element of `out`, elements of `bytes` bytes.
template <class F>
void gather(const RuntimeValue& in, RuntimeValue& out, F&& source) {
  with_elem_size(out.elem_bytes(), [&](auto size) {
    constexpr int N = decltype(size)::value;
    const std::byte* src = in.raw();
    std::byte* dst = out.raw();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * N, src + source(i) * N, N);
  });
}

/// Maps each output element to its input element through per-dimension input strides (0 for a
/// broadcast dimension), walking the output's coordinates like an odometer.
void strided_gather(const RuntimeValue& in, RuntimeValue& out,
                    const std::vector<int64_t>& in_strides) {
  const ir::Shape& shape = out.shape;
  std::vector<int64_t> coord(shape.size(), 0);
  int64_t offset = 0;
  gather(in, out, [&](int64_t) {
    const int64_t here = offset;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += in_strides[d];
      if (++coord[d] < shape[d]) break;
      offset -= in_strides[d] * shape[d];
      coord[d] = 0;
    }
    return here;
  });
}

RuntimeValue splat(const RuntimeValue& scalar, const ir::Type& type) {
  RuntimeValue out = RuntimeValue::of_type(type);
  gather(scalar, out, [](int64_t) { return int64_t{0}; });
  return out;
}

}  // namespace

RuntimeValue constant_value(const Op& op) {
  const ir::Type& type = op.result()->type;
  const ir::AttrValue* attr = op.find_attr(attr::kValue);
  TESSERA_CHECK(attr, "constant without a value");
  if (const auto* i = std::get_if<int64_t>(attr)) {
    // An integer attribute wraps to the dtype's width (ir::wrap_to_dtype; i1 keeps bit 0).
    if (type.is_ptr || ir::is_int(type.dtype))
      return splat(int_scalar(type.is_ptr ? ir::DType::u64 : type.dtype, *i), type);
    return splat(convert(int_scalar(ir::DType::i64, *i), type.dtype, false), type);
  }
  RuntimeValue scalar = RuntimeValue::make(ir::DType::f64, false, {});
  scalar.data<double>()[0] = std::get<double>(*attr);
  return splat(convert(scalar, type.dtype, type.is_ptr), type);
}

namespace {

RuntimeValue arange(const Op& op) {
  const int64_t start = op.int_attr(attr::kStart);
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  dispatch(out.dtype, [&](auto t) {
    using T = decltype(t);
    TESSERA_CHECK(!T::kFloat, "arange of ", ir::dtype_name(out.dtype));
    if constexpr (!T::kFloat) {
      auto* p = out.data<typename T::S>();
      for (int64_t i = 0; i < out.numel(); ++i)
        p[i] = num::wrap<T>(static_cast<uint64_t>(start + i));
    }
  });
  return out;
}

RuntimeValue broadcast(const RuntimeValue& in, const ir::Type& type) {
  RuntimeValue out = RuntimeValue::of_type(type);
  // Align the input's dimensions to the right (a scalar broadcasts to everything).
  const size_t pad = type.shape.size() - in.shape.size();
  const std::vector<int64_t> in_strides = strides_of(in.shape);
  std::vector<int64_t> strides(type.shape.size(), 0);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    TESSERA_CHECK(in.shape[d] == 1 || in.shape[d] == type.shape[d + pad], "cannot broadcast ",
                  ir::shape_str(in.shape), " to ", ir::shape_str(type.shape));
    strides[d + pad] = in.shape[d] == 1 ? 0 : in_strides[d];
  }
  strided_gather(in, out, strides);
  return out;
}

RuntimeValue permute(const RuntimeValue& in, const Op& op) {
  const std::vector<int64_t>& order = op.ints_attr(attr::kOrder);
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  const std::vector<int64_t> in_strides = strides_of(in.shape);
  std::vector<int64_t> strides(order.size());
  for (size_t d = 0; d < order.size(); ++d) strides[d] = in_strides[order[d]];
  strided_gather(in, out, strides);
  return out;
}

RuntimeValue cat(const RuntimeValue& a, const RuntimeValue& b, const Op& op) {
  const int64_t axis = op.int_attr(attr::kAxis);
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a.shape[d];
  // Each outer index contributes a contiguous block of `a` followed by one of `b`.
  const size_t a_block = a.bytes.size() / outer, b_block = b.bytes.size() / outer;
  std::byte* dst = out.raw();
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst, a.raw() + o * a_block, a_block);
    std::memcpy(dst + a_block, b.raw() + o * b_block, b_block);
    dst += a_block + b_block;
  }
  return out;
}

/// p + off * sizeof(pointee), in wrapping 64-bit arithmetic; `off` of any integer dtype.
RuntimeValue ptr_add(const RuntimeValue& p, const RuntimeValue& off, const Op& op) {
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  out.shape = elementwise_shape({&p, &off}, out.shape);
  out.bytes.resize(static_cast<size_t>(ir::num_elements(out.shape)) * 8);
  const uint64_t scale = static_cast<uint64_t>(ir::dtype_bytes(p.dtype));
  const uint64_t* base = p.data<uint64_t>();
  const int64_t sp = p.numel() == 1 ? 0 : 1;
  dispatch(off.dtype, [&](auto t) {
    using T = decltype(t);
    TESSERA_CHECK(!T::kFloat && !off.is_ptr, "ptr_add offset of type ", off.type().str());
    const auto* o = off.data<typename T::S>();
    const int64_t so = off.numel() == 1 ? 0 : 1;
    uint64_t* dst = out.data<uint64_t>();
    for (int64_t i = 0; i < out.numel(); ++i)
      dst[i] = base[i * sp] + num::widen<T>(o[i * so]) * scale;
  });
  return out;
}

RuntimeValue program_value(const Exec& ex, const Op& op) {
  const int axis = static_cast<int>(op.int_attr(attr::kAxis));
  TESSERA_CHECK(axis >= 0 && axis < 3, "program axis ", axis);
  const Grid g = ex.grid();
  const uint32_t sizes[3] = {g.x, g.y, g.z};
  const uint32_t v = op.kind == OpKind::ProgramId ? ex.program()[axis] : sizes[axis];
  return int_scalar(op.result()->type.dtype, v);
}

/// A copy of `in` with the result's shape (reshape and expand_dims keep the bytes).
RuntimeValue reshaped(const RuntimeValue& in, const ir::Type& type) {
  RuntimeValue out = in;
  out.shape = type.shape;
  TESSERA_CHECK(ir::num_elements(type.shape) == in.numel(), "reshape of ", ir::shape_str(in.shape),
                " to ", ir::shape_str(type.shape));
  return out;
}

}  // namespace

void exec_tile(Exec& ex, const Op& op) {
  const ir::Type& type = op.result()->type;
  auto operand = [&](size_t i) -> const RuntimeValue& { return ex.get(op.operand(i)); };
  switch (op.kind) {
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      return ex.set(op.result(), program_value(ex, op));
    case OpKind::Constant:
      return ex.set(op.result(), constant_value(op));
    case OpKind::Arange:
      return ex.set(op.result(), arange(op));
    case OpKind::Splat:
      return ex.set(op.result(), splat(operand(0), type));
    case OpKind::Broadcast:
      return ex.set(op.result(), broadcast(operand(0), type));
    case OpKind::Permute:
      return ex.set(op.result(), permute(operand(0), op));
    case OpKind::Cat:
      return ex.set(op.result(), cat(operand(0), operand(1), op));
    case OpKind::PtrAdd:
      return ex.set(op.result(), ptr_add(operand(0), operand(1), op));
    case OpKind::ExpandDims:
    case OpKind::Reshape:
      return ex.set(op.result(), reshaped(operand(0), type));
    case OpKind::MultipleOf:
    case OpKind::MaxContiguous:
      return ex.set(op.result(), operand(0));  // promises only
    default:
      TESSERA_CHECK(false, "not a tile op: ", op.name());
  }
}

}  // namespace tessera::interp
