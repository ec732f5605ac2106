/// \file Buffers: typed device memory with upload, download, fill, copy and sub-ranges.
#pragma once

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "../core/lang/params.h"
#include "backend.h"
#include "stream.h"

namespace tessera {

namespace detail {
/// count * element_bytes, or an Argument error naming `what` and the count when the product does
/// not fit (a negative count converted to size_t lands here too).
size_t checked_bytes(const char* what, size_t count, size_t element_bytes);
}  // namespace detail

/// An untyped view of device memory: an allocation, a byte range in it, and an element dtype.
class BufferBase {
 public:
  /// An empty buffer (valid() is false), to be assigned later.
  BufferBase() = default;
  /// `bytes` of new memory on `device`, holding `dtype` elements (Device::alloc is the typed
  /// spelling); ErrorKind::OutOfMemory naming the size and the device when it cannot be had.
  static BufferBase allocate(const std::shared_ptr<rt::DeviceImpl>& device, size_t bytes,
                             ir::DType dtype);
  /// Wraps `bytes` at `address`, memory the caller owns (Device::wrap has the rules): Tessera
  /// never frees it; `keep` (may be null) is held while any buffer refers to the memory.
  static BufferBase wrap(const std::shared_ptr<rt::DeviceImpl>& device, uint64_t address,
                         size_t bytes, ir::DType dtype, std::shared_ptr<void> keep = nullptr);
  /// Wraps `bytes` from byte `offset` of a VkBuffer the caller owns whose device address is
  /// `address` (Device::wrap_vk_buffer has the rules).
  static BufferBase wrap_vk_buffer(const std::shared_ptr<rt::DeviceImpl>& device,
                                   uint64_t vk_buffer, uint64_t address, uint64_t offset,
                                   size_t bytes, ir::DType dtype);

  /// False for a default-constructed buffer.
  bool valid() const { return alloc_ != nullptr; }
  /// The size in bytes.
  size_t bytes() const { return bytes_; }
  /// The element type.
  ir::DType dtype() const { return dtype_; }
  /// The device address of the first element (a host address on the host device).
  uint64_t address() const { return alloc_ ? alloc_->address() + offset_ : 0; }
  /// The backend device the memory is on.
  rt::DeviceImpl* device() const { return device_.get(); }
  /// The backend device, shared.
  const std::shared_ptr<rt::DeviceImpl>& device_handle() const { return device_; }
  /// The memory block this buffer is a range of (shared with its slices).
  const std::shared_ptr<rt::Allocation>& allocation() const { return alloc_; }
  /// The byte offset of this buffer in allocation().
  size_t offset() const { return offset_; }

  /// The CUdeviceptr of the first element (as an integer: `CUdeviceptr p = b.cu_deviceptr()`),
  /// for CUDA libraries; valid while this buffer (or another referring to the memory) lives.
  /// ErrorKind::Argument naming the device when it is not a cuda device.
  uint64_t cu_deviceptr() const;
  /// The VkBuffer holding the memory (`reinterpret_cast<VkBuffer>(b.vk_buffer())`); the buffer's
  /// first element is at vk_buffer_offset() in it. The VkBuffer may be shared with other Tessera
  /// buffers (Tessera suballocates): use only that range, and the VkDevice of Device::vk_device().
  /// ErrorKind::Argument naming the device when it is not a vulkan device.
  uint64_t vk_buffer() const;
  /// The byte offset of the first element in vk_buffer().
  uint64_t vk_buffer_offset() const;

  /// Untyped Buffer<T>::upload: `bytes` from `src` to byte `offset` (Argument error past the end).
  void upload_bytes(const void* src, size_t bytes, size_t offset, Stream* stream) const;
  /// Untyped Buffer<T>::download: `bytes` from byte `offset` into `dst`.
  void download_bytes(void* dst, size_t bytes, size_t offset, Stream* stream) const;
  /// Untyped Buffer<T>::fill: repeats the `pattern_bytes` at `pattern` over the buffer.
  void fill_bytes(const void* pattern, size_t pattern_bytes, Stream* stream) const;
  /// Untyped Buffer<T>::copy_from (same size, same device).
  void copy_bytes_from(const BufferBase& src, Stream* stream) const;
  /// Bytes [offset_bytes, offset_bytes + bytes) as a buffer sharing this memory.
  BufferBase sub(size_t offset_bytes, size_t bytes) const;

 protected:
  std::shared_ptr<rt::DeviceImpl> device_;  ///< the device the memory is on
  std::shared_ptr<rt::Allocation> alloc_;   ///< the memory block (null: an empty buffer)
  size_t offset_ = 0;                       ///< the first byte in alloc_
  size_t bytes_ = 0;                        ///< the size
  ir::DType dtype_ = ir::DType::u8;         ///< the element type
};

/// Device memory holding elements of type T (float, int32_t, tessera::half, ...): what kernels
/// take for `tl::ptr<T>` parameters. Copies share the memory; it is freed (unless wrapped, see
/// Device::wrap) when the last buffer referring to it goes.
template <class T>
class Buffer : public BufferBase {
 public:
  /// An empty buffer.
  Buffer() = default;
  /// A typed view of `base` (its dtype is not checked: the caller knows it holds T).
  explicit Buffer(BufferBase base) : BufferBase(std::move(base)) {}

  /// The number of elements.
  size_t size() const { return bytes() / sizeof(T); }

  /// Copies `data` into the buffer (from element 0), enqueued on `stream` (default: the device's
  /// default stream). `data` is staged at once and may be reused when the call returns. Without a
  /// stream, work enqueued later on any stream of the device sees the data; on a created stream,
  /// later work on that stream and on the default stream does (class Stream).
  void upload(std::span<const T> data, Stream* stream = nullptr) const {
    check_count(data.size(), "upload");
    upload_bytes(data.data(), data.size() * sizeof(T), 0, stream);
  }
  /// upload(std::span) of a vector (std::vector<bool> too, widened to bytes).
  void upload(const std::vector<T>& data, Stream* stream = nullptr) const {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits: widen to bytes
      check_count(data.size(), "upload");
      std::vector<uint8_t> bytes(data.begin(), data.end());
      upload_bytes(bytes.data(), bytes.size(), 0, stream);
    } else {
      upload(std::span<const T>(data), stream);
    }
  }
  /// Returns the contents once the work the download is ordered after has finished: without a
  /// stream, all work enqueued earlier on every stream of the device; on a created stream, that
  /// stream's earlier work and the default stream's (class Stream).
  std::vector<T> download(Stream* stream = nullptr) const {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(size());
      download_bytes(bytes.data(), bytes.size(), 0, stream);
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(size());
      download_bytes(out.data(), bytes(), 0, stream);
      return out;
    }
  }
  /// The first out.size() elements into `out`, ordered like download().
  void download(std::span<T> out, Stream* stream = nullptr) const {
    check_count(out.size(), "download");
    download_bytes(out.data(), out.size() * sizeof(T), 0, stream);
  }
  /// Sets every element to `value`, enqueued on `stream` (default: the default stream) and
  /// ordered like upload.
  void fill(const T& value, Stream* stream = nullptr) const {
    fill_bytes(&value, sizeof(T), stream);
  }
  /// Copies all of `src` (same element count, same device) into this buffer, enqueued on `stream`
  /// (default: the default stream) and ordered like upload.
  void copy_from(const Buffer<T>& src, Stream* stream = nullptr) const {
    copy_bytes_from(src, stream);
  }
  /// Elements [offset, offset + count) as a buffer sharing this memory.
  Buffer<T> slice(size_t offset, size_t count) const {
    return Buffer<T>(sub(detail::checked_bytes("slice offset", offset, sizeof(T)),
                         detail::checked_bytes("slice", count, sizeof(T))));
  }

 private:
  void check_count(size_t n, const char* what) const;
};

namespace detail {
[[noreturn]] void buffer_count_error(const char* what, size_t given, size_t size);
}

template <class T>
void Buffer<T>::check_count(size_t n, const char* what) const {
  if (n > size()) detail::buffer_count_error(what, n, size());
}

}  // namespace tessera
