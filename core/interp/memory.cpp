/// \file Masked loads and stores and atomics on host memory. Every access of an active lane is
/// checked against the MemoryMap and for alignment first, so a bad address is a DeviceFault that
/// names the kernel, the line and the program instead of a crash. Atomics apply lane by lane in
/// lane order, so lanes naming one address see each other's updates.
#include <cstring>
#include <sstream>

#include "core/interp/exec.h"
#include "core/interp/numeric.h"
#include "core/interp/scalar.h"

namespace tessera::interp {
namespace {

using ir::Op;
using ir::OpKind;

/// Throws unless [address, address + bytes) is live and aligned to `bytes`.
void require_access(const Exec& ex, const Op& op, std::string_view access, uint64_t address,
                    int bytes) {
  if (auto bad = check_access(ex.memory(), access, address, bytes, bytes))
    ex.fault(op, bad->what, bad->detail);
}

/// Whether lane `i` is active: no mask, or a true mask element (a scalar mask covers all lanes).
bool active(const RuntimeValue* mask, int64_t i) {
  if (!mask) return true;
  return mask->data<uint8_t>()[mask->numel() == 1 ? 0 : i] != 0;
}

const RuntimeValue* optional_operand(const Exec& ex, const Op& op, size_t i) {
  return op.operands.size() > i ? &ex.get(op.operand(i)) : nullptr;
}

/// Host address of a checked lane.
std::byte* host(uint64_t address) {
  return reinterpret_cast<std::byte*>(address);
}

RuntimeValue load(const Exec& ex, const Op& op) {
  const RuntimeValue& ptr = ex.get(op.operand(0));
  const RuntimeValue* mask = optional_operand(ex, op, 1);
  const RuntimeValue* other = optional_operand(ex, op, 2);
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);  // masked lanes: zero bits
  const int n = out.elem_bytes();
  const uint64_t* addresses = ptr.data<uint64_t>();
  const bool is_bool = !out.is_ptr && out.dtype == ir::DType::i1;
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::byte* dst = out.raw() + i * n;
    if (!active(mask, i)) {
      if (other) std::memcpy(dst, other->raw() + (other->numel() == 1 ? 0 : i) * n, n);
      continue;
    }
    require_access(ex, op, "load", addresses[i], n);
    std::memcpy(dst, host(addresses[i]), n);
    if (is_bool) *dst = static_cast<std::byte>(*dst != std::byte{0});
  }
  return out;
}

void store(const Exec& ex, const Op& op) {
  const RuntimeValue& ptr = ex.get(op.operand(0));
  const RuntimeValue& value = ex.get(op.operand(1));
  const RuntimeValue* mask = optional_operand(ex, op, 2);
  const int n = value.elem_bytes();
  const uint64_t* addresses = ptr.data<uint64_t>();
  const int64_t sv = value.numel() == 1 ? 0 : 1;
  for (int64_t i = 0; i < ptr.numel(); ++i) {
    if (!active(mask, i)) continue;
    require_access(ex, op, "store", addresses[i], n);
    std::memcpy(host(addresses[i]), value.raw() + i * sv * n, n);
  }
}

RuntimeValue atomic_rmw(const Exec& ex, const Op& op) {
  ir::AtomicOp kind = ir::AtomicOp::Add;
  TESSERA_CHECK(ir::parse_atomic_op(op.str_attr_or(attr::kOp, "add"), &kind), "bad atomic op");
  const RuntimeValue& ptr = ex.get(op.operand(0));
  const RuntimeValue& val = ex.get(op.operand(1));
  const RuntimeValue* mask = optional_operand(ex, op, 2);
  const bool bitwise =
      kind == ir::AtomicOp::And || kind == ir::AtomicOp::Or || kind == ir::AtomicOp::Xor;
  TESSERA_CHECK(!bitwise || !ir::is_float(val.dtype), "atomic '", ir::to_string(kind), "' on ",
                val.type().str());
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);  // masked lanes: zero bits
  const uint64_t* addresses = ptr.data<uint64_t>();
  const int64_t sv = val.numel() == 1 ? 0 : 1;
  dispatch(val.storage_dtype(), [&](auto t) {
    using T = decltype(t);
    using S = typename T::S;
    const S* v = val.data<S>();
    S* old = out.data<S>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (!active(mask, i)) continue;
      require_access(ex, op, "atomic", addresses[i], sizeof(S));
      std::memcpy(&old[i], host(addresses[i]), sizeof(S));
      const S next = num::atomic_rmw<T>(kind, old[i], v[i * sv]);
      std::memcpy(host(addresses[i]), &next, sizeof(S));
    }
  });
  return out;
}

/// Per lane: old = *p; if old == cmp bit for bit, *p = val; yields old.
RuntimeValue atomic_cas(const Exec& ex, const Op& op) {
  const RuntimeValue& ptr = ex.get(op.operand(0));
  const RuntimeValue& cmp = ex.get(op.operand(1));
  const RuntimeValue& val = ex.get(op.operand(2));
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);
  const int n = out.elem_bytes();
  const uint64_t* addresses = ptr.data<uint64_t>();
  const int64_t sc = cmp.numel() == 1 ? 0 : 1, sv = val.numel() == 1 ? 0 : 1;
  for (int64_t i = 0; i < out.numel(); ++i) {
    require_access(ex, op, "atomic", addresses[i], n);
    std::byte* old = out.raw() + i * n;
    std::memcpy(old, host(addresses[i]), n);
    if (std::memcmp(old, cmp.raw() + i * sc * n, n) == 0)
      std::memcpy(host(addresses[i]), val.raw() + i * sv * n, n);
  }
  return out;
}

/// One element of a tensor descriptor's block: its address, and whether it lies in the tensor.
struct DescElement {
  uint64_t address;
  bool inside;
};

/// The elements of the block `block` of descriptor op `op` (ops.h: desc_load), row-major.
std::vector<DescElement> desc_elements(const Exec& ex, const Op& op, const ir::Shape& block) {
  const size_t rank = block.size();
  const bool wide = op.operand(1)->type.dtype == ir::DType::i64;
  const auto wrap = [wide](int64_t x) {
    return wide ? x : static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(x)));
  };
  // The descriptor's dims, strides and offsets (operands 1 .. 3 * rank), read once.
  std::vector<int64_t> scalars(3 * rank);
  for (size_t i = 0; i < scalars.size(); ++i) scalars[i] = int_element(ex.get(op.operand(1 + i)));
  const auto index = [&](size_t i) { return scalars[i]; };
  const uint64_t base = ex.get(op.operand(0)).data<uint64_t>()[0];
  const int64_t elem = ir::dtype_bytes(op.operand(0)->type.dtype);
  std::vector<DescElement> out;
  out.reserve(static_cast<size_t>(ir::num_elements(block)));
  std::vector<int64_t> at(rank, 0);  // the element's position in the block
  for (int64_t n = 0; n < ir::num_elements(block); ++n) {
    bool inside = true;
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t c = wrap(index(2 * rank + d) + at[d]);
      inside = inside && c >= 0 && c < index(d);
      offset = wrap(offset + wrap(c * index(rank + d)));
    }
    out.push_back({base + static_cast<uint64_t>(offset * elem), inside});
    for (size_t d = rank; d-- > 0;) {  // the next position, last dimension fastest
      if (++at[d] < block[d]) break;
      at[d] = 0;
    }
  }
  return out;
}

RuntimeValue desc_load(const Exec& ex, const Op& op) {
  RuntimeValue out = RuntimeValue::of_type(op.result()->type);  // outside the tensor: zero
  const int n = out.elem_bytes();
  const bool is_bool = out.dtype == ir::DType::i1;
  const std::vector<DescElement> elements = desc_elements(ex, op, out.shape);
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i].inside) continue;
    require_access(ex, op, "load", elements[i].address, n);
    std::byte* dst = out.raw() + i * n;
    std::memcpy(dst, host(elements[i].address), n);
    if (is_bool) *dst = static_cast<std::byte>(*dst != std::byte{0});
  }
  return out;
}

void desc_store(const Exec& ex, const Op& op) {
  const RuntimeValue& value = ex.get(op.operands.back());
  const int n = value.elem_bytes();
  const std::vector<DescElement> elements = desc_elements(ex, op, value.shape);
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i].inside) continue;
    require_access(ex, op, "store", elements[i].address, n);
    std::memcpy(host(elements[i].address), value.raw() + i * n, n);
  }
}

}  // namespace

std::optional<AccessFault> check_access(const MemoryMap& memory, std::string_view access,
                                        uint64_t address, int bytes, int align) {
  const bool inside = memory.contains(address, static_cast<uint64_t>(bytes));
  if (inside && address % static_cast<uint64_t>(align) == 0) return std::nullopt;
  std::ostringstream detail;
  detail << ": address 0x" << std::hex << address << std::dec << " (" << bytes << " bytes) is ";
  if (!inside) {
    detail << "not inside a live buffer";
    return AccessFault{"out-of-bounds " + std::string(access), detail.str()};
  }
  detail << "not aligned to " << align << " bytes";
  return AccessFault{"misaligned " + std::string(access), detail.str()};
}

void exec_memory(Exec& ex, const Op& op) {
  switch (op.kind) {
    case OpKind::Load:
      return ex.set(op.result(), load(ex, op));
    case OpKind::Store:
      return store(ex, op);
    case OpKind::AtomicRmw:
      return ex.set(op.result(), atomic_rmw(ex, op));
    case OpKind::AtomicCas:
      return ex.set(op.result(), atomic_cas(ex, op));
    case OpKind::DescLoad:
      return ex.set(op.result(), desc_load(ex, op));
    case OpKind::DescStore:
      return desc_store(ex, op);
    default:
      TESSERA_CHECK(false, "not a memory op: ", op.name());
  }
}

}  // namespace tessera::interp
