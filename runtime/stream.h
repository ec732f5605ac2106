/// \file Streams (ordered asynchronous work) and events (device-side timestamps).
#pragma once

#include <memory>

#include "backend.h"

namespace tessera {

class Stream;

/// An Argument error when `stream` is capturing a graph: `what` ("upload", "event record", ...)
/// cannot be captured.
void refuse_in_capture(const rt::StreamImpl& stream, const char* what);

/// Kernel launches captured on a stream and replayed as one unit (Stream::capture): on CUDA a
/// CUDA graph (one cuGraphLaunch per replay), on Vulkan one command buffer (one submit per
/// replay), on the host and simt devices the launches run again one by one.
///
/// Each launch keeps the arguments it was captured with: a replay runs the same kernels on the
/// same buffers with the same scalars (change the data by copying into the buffers, not by
/// passing others). The graph holds its buffers' memory alive until the graph goes away.
class Graph {
 public:
  /// An empty graph (replaying it is an Argument error); Stream::capture makes real ones.
  Graph() = default;
  /// A handle of a backend graph (Stream::end_capture makes them).
  explicit Graph(std::shared_ptr<rt::GraphImpl> impl) : impl_(std::move(impl)) {}
  /// Enqueues the captured launches on `stream`, a stream of the device the graph was captured
  /// on (else an Argument error naming both devices) that is not capturing; ordered with the
  /// device's other streams like a launch on `stream` (class Stream).
  void replay(const Stream& stream) const;
  /// The number of kernel launches captured (launches with an empty grid are not).
  size_t launches() const { return impl_ ? impl_->launches() : 0; }
  /// The backend's graph (for tests and backends).
  const std::shared_ptr<rt::GraphImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<rt::GraphImpl> impl_;
};

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
  void synchronize() const {
    refuse_in_capture(*impl_, "synchronize");
    impl_->synchronize();
  }
  /// The CUstream the stream enqueues on (`reinterpret_cast<CUstream>(s.cu_stream())`), owned by
  /// Tessera unless it came from Device::wrap_cu_stream. ErrorKind::Argument naming the device
  /// when it is not a cuda device.
  uint64_t cu_stream() const { return impl_->native_handle(); }
  /// The backend's stream (for tests and backends).
  const std::shared_ptr<rt::StreamImpl>& impl() const { return impl_; }

  /// Starts capturing a graph (class Graph): until end_capture(), kernel launches on this stream
  /// (`k[{grid, {}, &stream}](...)`) are recorded, not run. Only launches can be captured: an
  /// upload, download, fill, copy, event record or wait, or synchronize on a capturing stream is
  /// an Argument error naming it, as are a capture on the device's default stream (it orders
  /// every other stream: capture on a stream from Device::create_stream) and a capture inside a
  /// capture. Work enqueued earlier on the stream stays ordered before the graph's replays.
  void begin_capture() const;
  /// Ends the capture begun by begin_capture() and returns its graph (Argument error when the
  /// stream is not capturing). A launch the device cannot capture was an error at the launch.
  Graph end_capture() const;
  /// Captures the launches `body` makes on this stream: begin_capture(), body(), end_capture().
  /// When `body` throws, the capture is dropped and the exception passes on.
  template <class F>
  Graph capture(F&& body) const {
    begin_capture();
    try {
      body();
    } catch (...) {
      abandon_capture();
      throw;
    }
    return end_capture();
  }

 private:
  void abandon_capture() const;

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
    refuse_in_capture(*stream.impl(), "event record");
    rt::ordered_stream(*stream.impl()->device(), &stream.impl())->record(impl_);
  }
  /// Makes `stream` wait for this event before its later work.
  void wait_in(const Stream& stream) const {
    refuse_in_capture(*stream.impl(), "event wait_in");
    stream.impl()->wait(impl_);
  }
  /// Milliseconds from `start` to this event (both recorded; waits for them).
  double elapsed_since(const Event& start) const {
    return device_->elapsed_ms(*start.impl_, *impl_);
  }

 private:
  std::shared_ptr<rt::DeviceImpl> device_;
  std::shared_ptr<rt::EventImpl> impl_;
};

}  // namespace tessera
