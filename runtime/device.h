/// \file Devices: enumerate, open by name ("host", "cuda:0", "vulkan:1"), or take the best one.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend.h"
#include "buffer.h"
#include "stream.h"

namespace tessera {

/// A device that runs kernels: `host` (the tile interpreter), `simt:N` (the SIMT interpreter),
/// `cuda:N`, `vulkan:N`. A cheap handle: copies refer to the same device.
class Device {
 public:
  /// Every device of every backend, best first, plus why any backend has none.
  struct Listing {
    std::vector<DeviceInfo> devices;       ///< best first
    std::vector<std::string> unavailable;  ///< "cuda unavailable: ...", one per missing backend
  };
  /// Every device of every backend (enumerated once per process), best first.
  static Listing enumerate();
  /// Opens a device by name; an unknown or unavailable name is ErrorKind::Runtime naming the
  /// devices that exist.
  static Device open(std::string_view name);
  /// CUDA, else a Vulkan GPU, else lavapipe, else the host interpreter.
  static Device best();

  /// What the device says about itself.
  const DeviceInfo& info() const { return impl_->info(); }
  /// "host", "cuda:0", ...
  const std::string& name() const { return impl_->info().name; }

  /// A new buffer of `count` elements (uninitialized); ErrorKind::OutOfMemory when the device
  /// cannot give it, Argument when the byte count overflows.
  template <class T>
  Buffer<T> alloc(size_t count) const {
    return Buffer<T>(BufferBase::allocate(impl_, detail::checked_bytes("alloc", count, sizeof(T)),
                                          tl::dtype_of<T>()));
  }
  /// A new buffer holding `data`, uploaded on the default stream: work launched later on any
  /// stream of this device sees the data (class Stream says why).
  template <class T>
  Buffer<T> upload(std::span<const T> data) const {
    Buffer<T> b = alloc<T>(data.size());
    b.upload(data);
    return b;
  }
  /// upload(std::span) of a vector.
  template <class T>
  Buffer<T> upload(const std::vector<T>& data) const {
    Buffer<T> b = alloc<T>(data.size());
    b.upload(data);
    return b;
  }

  /// Interop: memory, streams and handles shared with other libraries (docs/guide.md, "Interop").
  ///
  /// A typed buffer over `count` elements at `address`, memory the caller owns and keeps alive
  /// while any buffer refers to it (Tessera never frees it). On a cuda device `address` is a
  /// CUdeviceptr in this device's primary context (cuMemAlloc'd, or another library's);
  /// the driver is asked (cuPointerGetAttribute) and memory of another device or context, or a
  /// range past the end of its allocation, is an ErrorKind::Argument error. On host and simt
  /// devices it is host memory (wrap(T*, count) is the easier spelling). On a vulkan device it is
  /// a buffer device address, and the buffer can only be passed to kernels (upload, download,
  /// fill and copy need the VkBuffer: wrap_vk_buffer). A null address and a byte count that
  /// overflows are Argument errors.
  template <class T>
  Buffer<T> wrap(uint64_t address, size_t count) const {
    return Buffer<T>(BufferBase::wrap(
        impl_, address, detail::checked_bytes("wrap", count, sizeof(T)), tl::dtype_of<T>()));
  }
  /// Host memory the caller owns, on the host and simt devices (see wrap(uint64_t, size_t)).
  template <class T>
  Buffer<T> wrap(T* data, size_t count) const {
    return wrap<T>(reinterpret_cast<uint64_t>(data), count);
  }
  /// A typed buffer over `count` elements from byte `offset` of a VkBuffer the caller owns
  /// (`reinterpret_cast<uint64_t>(vk_buffer)`), made on this device's VkDevice (vk_device()) with
  /// VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT (kernels address memory by device address) and
  /// TRANSFER_SRC/DST (for upload, download, fill and copy). `device_address` is
  /// vkGetBufferDeviceAddress of the VkBuffer. The caller keeps the VkBuffer and its memory alive
  /// while any buffer refers to it and orders its own use of them against Tessera's work
  /// (synchronize first). Errors (ErrorKind::Argument): a null VkBuffer, a zero device address,
  /// a range that overflows, a device that is not a vulkan device.
  template <class T>
  Buffer<T> wrap_vk_buffer(uint64_t vk_buffer, uint64_t device_address, size_t count,
                           uint64_t offset = 0) const {
    return Buffer<T>(BufferBase::wrap_vk_buffer(
        impl_, vk_buffer, device_address, offset,
        detail::checked_bytes("wrap_vk_buffer", count, sizeof(T)), tl::dtype_of<T>()));
  }
  /// A stream that enqueues Tessera's work on the caller's CUstream
  /// (`dev.wrap_cu_stream(reinterpret_cast<uint64_t>(s))`), which must belong to this device's
  /// primary context (checked: cuStreamGetCtx); launch on it as on any stream
  /// (`k[{grid, {}, &stream}](...)`). Tessera never destroys it: the caller keeps it alive while
  /// the Stream (and its copies) live. It is ordered like a created stream (class Stream).
  /// ErrorKind::Argument for a null CUstream or another device's or context's.
  Stream wrap_cu_stream(uint64_t cu_stream) const {
    return adopted(impl_->wrap_stream(cu_stream), false);
  }
  /// The device's primary CUcontext (`reinterpret_cast<CUcontext>(dev.cu_context())`), which
  /// Tessera shares with every other user of the primary context in the process. cuda only.
  uint64_t cu_context() const { return impl_->native_handle(rt::NativeHandle::CuContext); }
  /// The CUdevice. cuda only.
  uint64_t cu_device() const { return impl_->native_handle(rt::NativeHandle::CuDevice); }
  /// The VkInstance, VkPhysicalDevice, VkDevice and the VkQueue Tessera submits to (externally
  /// synchronized: do not submit to it while Tessera may). vulkan only; Tessera owns them all.
  uint64_t vk_instance() const { return impl_->native_handle(rt::NativeHandle::VkInstance); }
  /// See vk_instance().
  uint64_t vk_physical_device() const {
    return impl_->native_handle(rt::NativeHandle::VkPhysicalDevice);
  }
  /// See vk_instance().
  uint64_t vk_device() const { return impl_->native_handle(rt::NativeHandle::VkDevice); }
  /// See vk_instance().
  uint64_t vk_queue() const { return impl_->native_handle(rt::NativeHandle::VkQueue); }
  /// After a device fault: on a cuda device, resets the primary context (cuDevicePrimaryCtxReset),
  /// which frees every allocation in it, other libraries' too, so Tessera does not do it by
  /// itself (unless TESSERA_CUDA_RESET_ON_FAULT=1); buffers from before are invalid afterwards.
  /// Other devices recover without it: a no-op there.
  void reset() const { impl_->reset(); }

  /// The stream that launches and transfers use unless one is given. Its work is ordered after
  /// the earlier work of every other stream of the device, and theirs after its (class Stream).
  Stream default_stream() const { return adopted(impl_->default_stream(), true); }
  /// A new stream: ordered with the default stream, not with other created streams (class Stream).
  Stream create_stream() const { return adopted(impl_->create_stream(), false); }
  /// A new event, for timing and cross-stream waits (class Event).
  Event create_event() const { return Event(impl_, impl_->create_event()); }
  /// Waits for all work of all streams of this device.
  void synchronize() const { impl_->synchronize(); }

  /// The backend device (for tests and backends).
  std::shared_ptr<rt::DeviceImpl> impl() const { return impl_; }
  /// The same device.
  bool operator==(const Device& o) const { return impl_ == o.impl_; }

 private:
  explicit Device(std::shared_ptr<rt::DeviceImpl> impl) : impl_(std::move(impl)) {}
  Stream adopted(std::shared_ptr<rt::StreamImpl> s, bool is_default) const {
    rt::adopt_stream(*impl_, s, is_default);
    return Stream(std::move(s));
  }
  std::shared_ptr<rt::DeviceImpl> impl_;
};

}  // namespace tessera
