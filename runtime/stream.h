/// \file Streams (ordered asynchronous work) and events (device-side timestamps).
#pragma once

#include <memory>

#include "backend.h"

namespace tessera {

/// A queue of device work that runs in the order it was enqueued: launches, uploads, fills,
/// copies, downloads and event records.
///
/// Across the streams of a device, the rule of CUDA's legacy default stream holds
/// (docs/design.md, "Ordering"): work on the device's default stream (every call given no stream:
/// `dev.upload(x)`, `buf.download()`, `buf.fill(v)`, a launch without a stream) starts after all
/// work enqueued earlier on the device's other streams, and work on another stream starts after
/// all work enqueued earlier on the default stream. Streams from create_stream() are not ordered
/// among themselves: order them with an Event (record on one, wait_in the other).
class Stream {
 public:
  /// A handle of a backend stream (Device::create_stream and default_stream make them).
  explicit Stream(std::shared_ptr<rt::StreamImpl> impl) : impl_(std::move(impl)) {}
  /// Waits until every launch and copy enqueued so far has finished; rethrows the first error
  /// of that work (a device fault names the kernel).
  void synchronize() const { impl_->synchronize(); }
  /// The CUstream the stream enqueues on (`reinterpret_cast<CUstream>(s.cu_stream())`), owned by
  /// Tessera unless it came from Device::wrap_cu_stream. ErrorKind::Argument naming the device
  /// when it is not a cuda device.
  uint64_t cu_stream() const { return impl_->native_handle(); }
  /// The backend's stream (for tests and backends).
  const std::shared_ptr<rt::StreamImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<rt::StreamImpl> impl_;
};

/// A point in a stream's work: recorded on one stream, waited for by another (cross-stream
/// order), and timed against another event with device timestamps.
class Event {
 public:
  /// A handle of a backend event (Device::create_event makes them).
  Event(std::shared_ptr<rt::DeviceImpl> device, std::shared_ptr<rt::EventImpl> impl)
      : device_(std::move(device)), impl_(std::move(impl)) {}
  /// Marks the point in `stream`'s work where this event completes; like any work on `stream`,
  /// that point comes after what the default-stream rule orders it after (class Stream).
  void record(const Stream& stream) const {
    rt::ordered_stream(*stream.impl()->device(), &stream.impl())->record(impl_);
  }
  /// Makes `stream` wait for this event before its later work.
  void wait_in(const Stream& stream) const { stream.impl()->wait(impl_); }
  /// Milliseconds from `start` to this event (both recorded; waits for them).
  double elapsed_since(const Event& start) const { return device_->elapsed_ms(*start.impl_, *impl_); }

 private:
  std::shared_ptr<rt::DeviceImpl> device_;
  std::shared_ptr<rt::EventImpl> impl_;
};

}  // namespace tessera
