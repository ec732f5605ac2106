/// \file Order across the streams of a device (docs/design.md, "Ordering"): the rule of CUDA's
/// legacy default stream, kept once by the public layer with the backends' own events, so that
/// every device follows it. An operation on a device's default stream starts after all work
/// enqueued earlier on the device's other streams; an operation on another stream starts after
/// all work enqueued earlier on the default stream. Streams other than the default one are not
/// ordered among themselves (events order them).
///
/// A join (an event recorded on one stream and waited for on the other) is made only when the
/// other side has enqueued work since the last join, which per-stream and per-device counters
/// tell; a program that uses one stream pays a few atomic loads and one increment per operation.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tessera::rt {

class DeviceImpl;
class StreamImpl;

/// The order's record of one stream (a member of StreamImpl; backends leave it alone).
struct StreamOrder {
  enum Role : uint8_t { kUnknown, kDefault, kCreated };
  std::atomic<uint8_t> role{kUnknown};  ///< learned at the stream's first ordered operation
  /// Created streams: operations enqueued so far, each counted after it was enqueued.
  std::atomic<uint64_t> work{0};
  /// Created streams: how much of `work` the default stream has waited for.
  std::atomic<uint64_t> joined{0};
  /// Created streams: how much of the device's default-stream work this stream has waited for.
  std::atomic<uint64_t> seen_default{0};
};

/// The order's record of one device (a member of DeviceImpl; backends leave it alone).
struct DeviceOrder {
  std::atomic<uint64_t> default_work{0};  ///< operations enqueued on the default stream
  std::atomic<uint64_t> created_work{0};  ///< operations enqueued on all created streams
  std::atomic<uint64_t> created_joined{
      0};            ///< how much of created_work the default stream waited for
  std::mutex mutex;  ///< guards `created`
  /// The device's created streams the order has seen. Weak: a stream that went away finished its
  /// work first (every backend's stream drains or waits in its destructor).
  std::vector<std::weak_ptr<StreamImpl>> created;
};

/// The stream an operation of `device` runs on: `*given`, or the device's default stream when
/// `given` is null, after making it wait for the earlier work the rule orders the operation after.
/// Throws what the backend's event record or wait throws (a lost device, a fault).
std::shared_ptr<StreamImpl> ordered_stream(DeviceImpl& device,
                                           const std::shared_ptr<StreamImpl>* given);

/// Counts an operation enqueued on `stream` (of `device`) whose effect may still be pending, so
/// that the other side's next operation waits for it. Synchronous operations (downloads) are done
/// when they return and are not counted.
void count_enqueued(DeviceImpl& device, StreamImpl& stream) noexcept;

/// Counts the operation when it goes out of scope, also when enqueuing it threw partway: a join
/// too many costs an event, a join too few lets stale data through.
class CountEnqueued {
 public:
  CountEnqueued(DeviceImpl& device, StreamImpl& stream) : device_(device), stream_(stream) {}
  ~CountEnqueued() { count_enqueued(device_, stream_); }
  CountEnqueued(const CountEnqueued&) = delete;
  CountEnqueued& operator=(const CountEnqueued&) = delete;

 private:
  DeviceImpl& device_;
  StreamImpl& stream_;
};

/// Tells the order that `stream` is `device`'s default stream (is_default) or a stream created on
/// it, as Device::default_stream() and Device::create_stream() know, so that it need not ask.
void adopt_stream(DeviceImpl& device, const std::shared_ptr<StreamImpl>& stream, bool is_default);

}  // namespace tessera::rt
