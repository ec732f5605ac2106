/// \file Streams (ordered asynchronous work) and events (device-side timestamps).
#pragma once

#include <memory>

#include "runtime/backend.h"

namespace tessera {

class Stream {
 public:
  explicit Stream(std::shared_ptr<rt::StreamImpl> impl) : impl_(std::move(impl)) {}
  /// Waits until every launch and copy enqueued so far has finished; rethrows the first error
  /// of that work (a device fault names the kernel).
  void synchronize() const { impl_->synchronize(); }
  const std::shared_ptr<rt::StreamImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<rt::StreamImpl> impl_;
};

class Event {
 public:
  Event(std::shared_ptr<rt::DeviceImpl> device, std::shared_ptr<rt::EventImpl> impl)
      : device_(std::move(device)), impl_(std::move(impl)) {}
  /// Marks the point in `stream`'s work where this event completes.
  void record(const Stream& stream) const { stream.impl()->record(impl_); }
  /// Makes `stream` wait for this event before its later work.
  void wait_in(const Stream& stream) const { stream.impl()->wait(impl_); }
  /// Milliseconds from `start` to this event (both recorded; waits for them).
  double elapsed_since(const Event& start) const { return device_->elapsed_ms(*start.impl_, *impl_); }

 private:
  std::shared_ptr<rt::DeviceImpl> device_;
  std::shared_ptr<rt::EventImpl> impl_;
};

}  // namespace tessera
