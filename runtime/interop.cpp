/// \file Interop defaults of the backend interface: a device or stream refuses what its backend
/// does not have (a CUcontext of a Vulkan device, a VkBuffer on the host), naming the device.
#include <cstdio>

#include "core/support/error.h"
#include "runtime/backend.h"

namespace tessera::rt {
namespace {

/// The kind of device that has `which`.
const char* owner_kind(NativeHandle which) {
  switch (which) {
    case NativeHandle::CuContext:
    case NativeHandle::CuDevice:
      return "cuda";
    default:
      return "vulkan";
  }
}

}  // namespace

const char* native_handle_name(NativeHandle which) {
  switch (which) {
    case NativeHandle::CuContext:
      return "CUcontext";
    case NativeHandle::CuDevice:
      return "CUdevice";
    case NativeHandle::VkInstance:
      return "VkInstance";
    case NativeHandle::VkPhysicalDevice:
      return "VkPhysicalDevice";
    case NativeHandle::VkDevice:
      return "VkDevice";
    case NativeHandle::VkQueue:
      return "VkQueue";
  }
  return "native handle";
}

std::string hex_address(uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

uint64_t StreamImpl::native_handle() {
  fail(ErrorKind::Argument, "native stream handle: device '", device()->info().name, "' (",
       device()->info().kind, ") has no native stream (CUstream belongs to cuda devices)");
}

std::shared_ptr<Allocation> DeviceImpl::wrap(uint64_t, size_t, std::shared_ptr<void>) {
  fail(ErrorKind::Unsupported, "wrap: device '", info().name, "' cannot wrap external memory");
}

std::shared_ptr<Allocation> DeviceImpl::wrap_vk_buffer(uint64_t, uint64_t, uint64_t, size_t) {
  fail(ErrorKind::Argument, "wrap_vk_buffer: device '", info().name, "' (", info().kind,
       ") is not a vulkan device");
}

std::shared_ptr<StreamImpl> DeviceImpl::wrap_stream(uint64_t) {
  fail(ErrorKind::Argument, "wrap_cu_stream: device '", info().name, "' (", info().kind,
       ") is not a cuda device");
}

uint64_t DeviceImpl::native_handle(NativeHandle which) {
  fail(ErrorKind::Argument, native_handle_name(which), ": device '", info().name, "' (",
       info().kind, ") has none; it belongs to ", owner_kind(which), " devices");
}

}  // namespace tessera::rt
