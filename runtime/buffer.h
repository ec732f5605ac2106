/// \file Buffers: typed device memory with upload, download, fill, copy and sub-ranges.
#pragma once

#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/lang/params.h"
#include "runtime/backend.h"
#include "runtime/stream.h"

namespace tessera {

namespace detail {
/// count * element_bytes, or an Argument error naming `what` and the count when the product does
/// not fit (a negative count converted to size_t lands here too).
size_t checked_bytes(const char* what, size_t count, size_t element_bytes);
}  // namespace detail

/// An untyped view of device memory: an allocation, a byte range in it, and an element dtype.
class BufferBase {
 public:
  BufferBase() = default;
  static BufferBase allocate(const std::shared_ptr<rt::DeviceImpl>& device, size_t bytes,
                             ir::DType dtype);
  /// Wraps memory the caller owns (an external device pointer); `keep` is held while in use.
  static BufferBase wrap(const std::shared_ptr<rt::DeviceImpl>& device, uint64_t address,
                         size_t bytes, ir::DType dtype);

  bool valid() const { return alloc_ != nullptr; }
  size_t bytes() const { return bytes_; }
  ir::DType dtype() const { return dtype_; }
  /// The device address of the first element (a host address on the host device).
  uint64_t address() const { return alloc_ ? alloc_->address() + offset_ : 0; }
  rt::DeviceImpl* device() const { return device_.get(); }
  const std::shared_ptr<rt::DeviceImpl>& device_handle() const { return device_; }
  const std::shared_ptr<rt::Allocation>& allocation() const { return alloc_; }
  size_t offset() const { return offset_; }

  void upload_bytes(const void* src, size_t bytes, size_t offset, Stream* stream) const;
  void download_bytes(void* dst, size_t bytes, size_t offset, Stream* stream) const;
  void fill_bytes(const void* pattern, size_t pattern_bytes, Stream* stream) const;
  void copy_bytes_from(const BufferBase& src, Stream* stream) const;
  BufferBase sub(size_t offset_bytes, size_t bytes) const;

 protected:
  std::shared_ptr<rt::DeviceImpl> device_;
  std::shared_ptr<rt::Allocation> alloc_;
  size_t offset_ = 0;
  size_t bytes_ = 0;
  ir::DType dtype_ = ir::DType::u8;
};

template <class T>
class Buffer : public BufferBase {
 public:
  Buffer() = default;
  explicit Buffer(BufferBase base) : BufferBase(std::move(base)) {}

  size_t size() const { return bytes() / sizeof(T); }

  /// Copies `data` into the buffer (from element 0), enqueued on `stream` (default: the device's
  /// default stream). `data` is staged at once and may be reused when the call returns. Without a
  /// stream, work enqueued later on any stream of the device sees the data; on a created stream,
  /// later work on that stream and on the default stream does (class Stream).
  void upload(std::span<const T> data, Stream* stream = nullptr) const {
    check_count(data.size(), "upload");
    upload_bytes(data.data(), data.size() * sizeof(T), 0, stream);
  }
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
  void download(std::span<T> out, Stream* stream = nullptr) const {
    check_count(out.size(), "download");
    download_bytes(out.data(), out.size() * sizeof(T), 0, stream);
  }
  /// Sets every element to `value`, enqueued on `stream` (default: the default stream) and
  /// ordered like upload.
  void fill(const T& value, Stream* stream = nullptr) const { fill_bytes(&value, sizeof(T), stream); }
  /// Copies all of `src` (same element count, same device) into this buffer, enqueued on `stream`
  /// (default: the default stream) and ordered like upload.
  void copy_from(const Buffer<T>& src, Stream* stream = nullptr) const { copy_bytes_from(src, stream); }
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
