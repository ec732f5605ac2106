/// \file DLPack export and import (runtime/dlpack.h): dtype and device mapping, the stride check,
/// and the ownership of the managed tensors in both directions.
#include "runtime/dlpack.h"

#ifdef TESSERA_HAS_DLPACK

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/support/error.h"

namespace tessera {
namespace {

/// DLPack's dtype of a Tessera dtype (none for bool: DLPack 0.6 has no bool type).
std::optional<DLDataType> to_dl(ir::DType t) {
  if (t == ir::DType::i1) return std::nullopt;
  uint8_t code = t == ir::DType::bf16   ? kDLBfloat
                 : ir::is_float(t)      ? kDLFloat
                 : ir::is_signed_int(t) ? kDLInt
                                        : kDLUInt;
  return DLDataType{code, static_cast<uint8_t>(ir::dtype_bits(t)), 1};
}

std::optional<ir::DType> from_dl(DLDataType t) {
  using ir::DType;
  if (t.lanes != 1) return std::nullopt;
  for (DType d : {DType::i8, DType::i16, DType::i32, DType::i64, DType::u8, DType::u16, DType::u32,
                  DType::u64, DType::f16, DType::bf16, DType::f32, DType::f64}) {
    std::optional<DLDataType> dl = to_dl(d);
    if (dl->code == t.code && dl->bits == t.bits) return d;
  }
  return std::nullopt;
}

std::string dl_dtype_text(DLDataType t) {
  return "(code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
         std::to_string(t.lanes) + ")";
}

std::string dl_device_text(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
      return "kDLCPU";
    case kDLCUDA:
      return "kDLCUDA:" + std::to_string(d.device_id);
    case kDLVulkan:
      return "kDLVulkan:" + std::to_string(d.device_id);
    default:
      return "device type " + std::to_string(d.device_type) + ":" + std::to_string(d.device_id);
  }
}

/// The DLPack device of a Tessera device (Unsupported for vulkan and unknown kinds).
DLDevice dl_device_of(const DeviceInfo& info, const char* what) {
  if (info.kind == "host" || info.kind == "simt") return {kDLCPU, 0};
  if (info.kind == "cuda") return {kDLCUDA, std::stoi(info.name.substr(info.name.find(':') + 1))};
  fail(ErrorKind::Unsupported, what, ": device '", info.name, "' (", info.kind,
       ") cannot exchange DLPack tensors: DLPack's kDLVulkan gives no buffer device address; "
       "download and upload, or share a VkBuffer (Device::wrap_vk_buffer, Buffer::vk_buffer)");
}

/// An exported tensor: the buffer it keeps alive and its shape.
struct Exported {
  DLManagedTensor managed{};
  BufferBase buffer;
  std::vector<int64_t> shape;
};

}  // namespace

DLManagedTensor* to_dlpack(const BufferBase& buffer, std::span<const int64_t> shape) {
  if (!buffer.valid())
    fail(ErrorKind::Argument, "to_dlpack: the buffer is empty (default-constructed)");
  const DeviceInfo& info = buffer.device()->info();
  DLDevice device = dl_device_of(info, "to_dlpack");
  std::optional<DLDataType> dtype = to_dl(buffer.dtype());
  if (!dtype)
    fail(ErrorKind::Unsupported, "to_dlpack: a ", ir::dtype_name(buffer.dtype()),
         " buffer: DLPack 0.6 has no bool type");
  const int64_t count = static_cast<int64_t>(buffer.bytes() / ir::dtype_bytes(buffer.dtype()));
  auto e = std::make_unique<Exported>();
  e->buffer = buffer;
  e->shape.assign(shape.begin(), shape.end());
  if (e->shape.empty()) e->shape.push_back(count);
  int64_t n = 1;
  for (int64_t d : e->shape) {
    if (d < 0 || (d && n > std::numeric_limits<int64_t>::max() / d))
      fail(ErrorKind::Argument, "to_dlpack: shape ", ir::shape_str(e->shape),
           " is not a valid shape");
    n *= d;
  }
  if (n != count)
    fail(ErrorKind::Argument, "to_dlpack: shape ", ir::shape_str(e->shape), " has ", n,
         " elements, the buffer ", count);
  DLTensor& t = e->managed.dl_tensor;
  t.data = reinterpret_cast<void*>(buffer.address());
  t.device = device;
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = *dtype;
  t.shape = e->shape.data();
  t.strides = nullptr;  // compact row-major
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<Exported*>(self->manager_ctx);
  };
  return &e.release()->managed;
}

namespace detail {
void check_dlpack_dtype(const DLManagedTensor* tensor, ir::DType want) {
  if (!tensor) fail(ErrorKind::Argument, "from_dlpack: the tensor is null");
  DLDataType have = tensor->dl_tensor.dtype;
  std::optional<ir::DType> d = from_dl(have);
  if (d != want)
    fail(ErrorKind::Argument, "from_dlpack: the tensor's dtype is ",
         d ? std::string(ir::dtype_name(*d)) : "DLPack " + dl_dtype_text(have), ", the buffer's ",
         ir::dtype_name(want));
}
}  // namespace detail

BufferBase from_dlpack(const Device& device, DLManagedTensor* tensor) {
  if (!tensor) fail(ErrorKind::Argument, "from_dlpack: the tensor is null");
  const DLTensor& t = tensor->dl_tensor;
  const DeviceInfo& info = device.info();
  if (t.device.device_type == kDLVulkan)
    fail(ErrorKind::Unsupported, "from_dlpack: a ", dl_device_text(t.device),
         " tensor: DLPack's Vulkan data pointer is no buffer device address; share a VkBuffer "
         "with Device::wrap_vk_buffer instead");
  DLDevice want = dl_device_of(info, "from_dlpack");
  if (t.device.device_type != want.device_type || t.device.device_id != want.device_id)
    fail(ErrorKind::Argument, "from_dlpack: the tensor is on ", dl_device_text(t.device),
         ", not on device '", info.name, "' (", dl_device_text(want), ")");
  std::optional<ir::DType> dtype = from_dl(t.dtype);
  if (!dtype)
    fail(ErrorKind::Unsupported, "from_dlpack: DLPack dtype ", dl_dtype_text(t.dtype),
         " has no Tessera type");
  if (t.ndim < 0 || (t.ndim > 0 && !t.shape))
    fail(ErrorKind::Argument, "from_dlpack: ndim ", t.ndim, " without a valid shape");
  size_t count = 1;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0)
      fail(ErrorKind::Argument, "from_dlpack: dimension ", i, " has negative extent ", t.shape[i]);
    count = detail::checked_bytes("from_dlpack", count, static_cast<size_t>(t.shape[i]));
  }
  // Compact row-major: stride[i] is the product of the later extents (any for an extent of 1).
  if (t.strides) {
    int64_t expect = 1;
    for (int32_t i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != expect)
        fail(ErrorKind::Argument, "from_dlpack: stride ", t.strides[i], " of dimension ", i,
             " is not contiguous (a compact row-major tensor of this shape has ", expect,
             "): make the tensor contiguous first");
      expect *= t.shape[i];
    }
  }
  const size_t bytes = detail::checked_bytes("from_dlpack", count, ir::dtype_bytes(*dtype));
  if (bytes == 0) {  // nothing to refer to: an empty buffer of the device; the tensor is done
    BufferBase b = BufferBase::allocate(device.impl(), 0, *dtype);
    if (tensor->deleter) tensor->deleter(tensor);
    return b;
  }
  if (!t.data) fail(ErrorKind::Argument, "from_dlpack: the tensor's data pointer is null");
  const uint64_t address = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
  // The tensor becomes Tessera's only once the wrap succeeded (else it stays the caller's).
  auto taken = std::make_shared<bool>(false);
  std::shared_ptr<void> keep(tensor, [taken](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (*taken && m->deleter) m->deleter(m);
  });
  BufferBase b = BufferBase::wrap(device.impl(), address, bytes, *dtype, std::move(keep));
  *taken = true;
  return b;
}

}  // namespace tessera

#endif
