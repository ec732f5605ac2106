/// \file Buffer operations: range checks, the cross-stream order, then the device stream does the
/// work.
#include "runtime/buffer.h"

#include <limits>

#include "core/support/error.h"

namespace tessera {
namespace {

/// The stream a transfer runs on (`stream`, else the device's default stream), ordered after the
/// earlier work of the other streams that the default-stream rule says (runtime/ordering.h).
/// `what` ("upload", ...) names the operation when the stream is capturing a graph.
std::shared_ptr<rt::StreamImpl> stream_of(const std::shared_ptr<rt::DeviceImpl>& device,
                                          Stream* stream, const char* what) {
  if (!stream) return rt::ordered_stream(*device, nullptr);  // the default stream never captures
  if (stream->impl()->device() != device.get())
    fail(ErrorKind::Argument, "the stream belongs to device '",
         stream->impl()->device()->info().name, "', the buffer to '", device->info().name, "'");
  refuse_in_capture(*stream->impl(), what);
  return rt::ordered_stream(*device, &stream->impl());
}

void require_valid(const BufferBase& b, const char* what) {
  if (!b.valid()) fail(ErrorKind::Argument, what, ": the buffer is empty (default-constructed)");
}

}  // namespace

namespace detail {
void buffer_count_error(const char* what, size_t given, size_t size) {
  fail(ErrorKind::Argument, "buffer ", what, " of ", given, " elements into a buffer of ", size);
}

size_t checked_bytes(const char* what, size_t count, size_t element_bytes) {
  if (element_bytes && count > std::numeric_limits<size_t>::max() / element_bytes)
    fail(ErrorKind::Argument, what, " of ", count, " elements of ", element_bytes,
         " bytes: the byte count overflows",
         count > size_t{1} << 63 ? " (a negative count converted to an unsigned size?)" : "");
  return count * element_bytes;
}
}  // namespace detail

namespace {
/// No device has 2^56 bytes (64 PiB); larger requests fail before any size arithmetic of the
/// allocators (rounding up to their granularity) can wrap.
constexpr size_t kMaxAllocation = size_t{1} << 56;
}  // namespace

BufferBase BufferBase::allocate(const std::shared_ptr<rt::DeviceImpl>& device, size_t bytes,
                                ir::DType dtype) {
  if (bytes > kMaxAllocation)
    fail(ErrorKind::OutOfMemory, device->info().name, ": cannot allocate ", bytes,
         " bytes (more than any device has)");
  BufferBase b;
  b.device_ = device;
  b.alloc_ = device->allocate(bytes);
  b.bytes_ = bytes;
  b.dtype_ = dtype;
  return b;
}

BufferBase BufferBase::wrap(const std::shared_ptr<rt::DeviceImpl>& device, uint64_t address,
                            size_t bytes, ir::DType dtype, std::shared_ptr<void> keep) {
  if (address == 0)
    fail(ErrorKind::Argument, "wrap on ", device->info().name, ": the pointer is null");
  if (bytes > std::numeric_limits<uint64_t>::max() - address)
    fail(ErrorKind::Argument, "wrap on ", device->info().name, ": ", bytes, " bytes at ",
         rt::hex_address(address), " run past the end of the address space");
  BufferBase b;
  b.device_ = device;
  b.alloc_ = device->wrap(address, bytes, std::move(keep));
  b.bytes_ = bytes;
  b.dtype_ = dtype;
  return b;
}

BufferBase BufferBase::wrap_vk_buffer(const std::shared_ptr<rt::DeviceImpl>& device,
                                      uint64_t vk_buffer, uint64_t address, uint64_t offset,
                                      size_t bytes, ir::DType dtype) {
  BufferBase b;
  b.device_ = device;
  b.alloc_ = device->wrap_vk_buffer(vk_buffer, address, offset, bytes);
  b.bytes_ = bytes;
  b.dtype_ = dtype;
  return b;
}

uint64_t BufferBase::cu_deviceptr() const {
  require_valid(*this, "cu_deviceptr");
  if (device_->info().kind != "cuda")
    fail(ErrorKind::Argument, "cu_deviceptr: the buffer is on device '", device_->info().name,
         "' (", device_->info().kind, "), not a cuda device");
  return address();
}

uint64_t BufferBase::vk_buffer() const {
  require_valid(*this, "vk_buffer");
  if (device_->info().kind != "vulkan")
    fail(ErrorKind::Argument, "vk_buffer: the buffer is on device '", device_->info().name, "' (",
         device_->info().kind, "), not a vulkan device");
  return alloc_->vk_buffer().first;
}

uint64_t BufferBase::vk_buffer_offset() const {
  vk_buffer();  // the same checks
  return alloc_->vk_buffer().second + offset_;
}

void BufferBase::upload_bytes(const void* src, size_t bytes, size_t offset, Stream* stream) const {
  require_valid(*this, "upload");
  if (bytes > bytes_ || offset > bytes_ - bytes)
    fail(ErrorKind::Argument, "upload of ", bytes, " bytes at offset ", offset,
         " overruns a buffer of ", bytes_, " bytes");
  if (bytes == 0) return;
  std::shared_ptr<rt::StreamImpl> s = stream_of(device_, stream, "upload");
  rt::CountEnqueued counted(*device_, *s);
  s->upload(alloc_, offset_ + offset, src, bytes);
}

void BufferBase::download_bytes(void* dst, size_t bytes, size_t offset, Stream* stream) const {
  require_valid(*this, "download");
  if (bytes > bytes_ || offset > bytes_ - bytes)
    fail(ErrorKind::Argument, "download of ", bytes, " bytes at offset ", offset,
         " overruns a buffer of ", bytes_, " bytes");
  // Not counted: the data is in `dst` when download returns.
  stream_of(device_, stream, "download")->download(alloc_, offset_ + offset, dst, bytes);
}

void BufferBase::fill_bytes(const void* pattern, size_t pattern_bytes, Stream* stream) const {
  require_valid(*this, "fill");
  if (bytes_ == 0) return;
  std::shared_ptr<rt::StreamImpl> s = stream_of(device_, stream, "fill");
  rt::CountEnqueued counted(*device_, *s);
  s->fill(alloc_, offset_, bytes_, pattern, pattern_bytes);
}

void BufferBase::copy_bytes_from(const BufferBase& src, Stream* stream) const {
  require_valid(*this, "copy");
  require_valid(src, "copy");
  if (src.bytes_ != bytes_)
    fail(ErrorKind::Argument, "copy between buffers of different sizes (", src.bytes_, " and ",
         bytes_, " bytes)");
  if (src.device_ != device_)
    fail(ErrorKind::Argument, "copy between devices '", src.device_->info().name, "' and '",
         device_->info().name, "': download and upload instead");
  if (bytes_ == 0) return;
  std::shared_ptr<rt::StreamImpl> s = stream_of(device_, stream, "copy");
  rt::CountEnqueued counted(*device_, *s);
  s->copy(alloc_, offset_, src.alloc_, src.offset_, bytes_);
}

BufferBase BufferBase::sub(size_t offset_bytes, size_t bytes) const {
  require_valid(*this, "slice");
  if (bytes > bytes_ || offset_bytes > bytes_ - bytes) {
    if (offset_bytes <= std::numeric_limits<size_t>::max() - bytes)
      fail(ErrorKind::Argument, "slice [", offset_bytes, ", ", offset_bytes + bytes,
           ") bytes is outside a buffer of ", bytes_, " bytes");
    fail(ErrorKind::Argument, "slice of ", bytes, " bytes at byte ", offset_bytes,
         " is outside a buffer of ", bytes_, " bytes");
  }
  BufferBase b = *this;
  b.offset_ += offset_bytes;
  b.bytes_ = bytes;
  return b;
}

}  // namespace tessera
