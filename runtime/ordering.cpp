/// \file The legacy default-stream rule (runtime/ordering.h): the counters' fast checks and the
/// joins, an event recorded on one stream and waited for on the other, made outside every lock
/// the order holds (a backend's record or wait may take its streams' locks).
#include "runtime/ordering.h"

#include <algorithm>

#include "runtime/backend.h"

namespace tessera::rt {
namespace {

void raise_to(std::atomic<uint64_t>& counter, uint64_t value) {
  uint64_t seen = counter.load(std::memory_order_relaxed);
  while (seen < value && !counter.compare_exchange_weak(seen, value, std::memory_order_acq_rel)) {
  }
}

/// `waiter` waits for everything enqueued on `on` so far.
void join(DeviceImpl& device, StreamImpl& on, StreamImpl& waiter) {
  std::shared_ptr<EventImpl> e = device.create_event();  // fresh: a reused one could be re-armed
  on.record(e);                                          // before an earlier wait saw it complete
  waiter.wait(e);
}

/// Makes the default stream `d` wait for the work of every created stream not yet waited for.
void join_created(DeviceImpl& device, StreamImpl& d) {
  DeviceOrder& order = device.ordering;
  // Read before the streams' counts: work counted after this read makes the check fail again.
  const uint64_t target = order.created_work.load(std::memory_order_acquire);
  struct Pending {
    std::shared_ptr<StreamImpl> stream;
    uint64_t work;
  };
  std::vector<Pending> pending;
  {
    std::lock_guard lock(order.mutex);
    std::erase_if(order.created, [](const std::weak_ptr<StreamImpl>& w) { return w.expired(); });
    for (const std::weak_ptr<StreamImpl>& w : order.created) {
      std::shared_ptr<StreamImpl> s = w.lock();
      if (!s) continue;
      // A count read here was bumped after its operation was enqueued: the event recorded below
      // comes after that operation on its stream.
      uint64_t work = s->ordering.work.load(std::memory_order_acquire);
      if (work != s->ordering.joined.load(std::memory_order_relaxed))
        pending.push_back({std::move(s), work});
    }
  }
  for (const Pending& p : pending) {
    join(device, *p.stream, d);
    raise_to(p.stream->ordering.joined, p.work);
  }
  raise_to(order.created_joined, target);
}

/// Makes the created stream `s` wait for the default stream's work enqueued so far (`seen`).
void join_default(DeviceImpl& device, StreamImpl& s, uint64_t seen) {
  std::shared_ptr<StreamImpl> d = device.default_stream();
  join(device, *d, s);
  raise_to(s.ordering.seen_default, seen);
}

/// Learns whether `s`, seen for the first time, is the device's default stream.
StreamOrder::Role resolve(DeviceImpl& device, const std::shared_ptr<StreamImpl>& s) {
  bool is_default = device.default_stream() == s;
  adopt_stream(device, s, is_default);
  return static_cast<StreamOrder::Role>(s->ordering.role.load(std::memory_order_acquire));
}

}  // namespace

void adopt_stream(DeviceImpl& device, const std::shared_ptr<StreamImpl>& stream, bool is_default) {
  StreamOrder& so = stream->ordering;
  if (so.role.load(std::memory_order_acquire) != StreamOrder::kUnknown) return;
  if (is_default) {
    so.role.store(StreamOrder::kDefault, std::memory_order_release);
    return;
  }
  DeviceOrder& order = device.ordering;
  std::lock_guard lock(order.mutex);
  if (so.role.load(std::memory_order_relaxed) != StreamOrder::kUnknown) return;  // raced: adopted
  std::erase_if(order.created, [](const std::weak_ptr<StreamImpl>& w) { return w.expired(); });
  order.created.push_back(stream);
  so.role.store(StreamOrder::kCreated, std::memory_order_release);
}

std::shared_ptr<StreamImpl> ordered_stream(DeviceImpl& device,
                                           const std::shared_ptr<StreamImpl>* given) {
  DeviceOrder& order = device.ordering;
  std::shared_ptr<StreamImpl> s = given ? *given : device.default_stream();
  auto role = static_cast<StreamOrder::Role>(s->ordering.role.load(std::memory_order_acquire));
  if (role == StreamOrder::kUnknown) {
    if (given) {
      role = resolve(device, s);
    } else {
      adopt_stream(device, s, /*is_default=*/true);
      role = StreamOrder::kDefault;
    }
  }
  if (role == StreamOrder::kDefault) {
    if (order.created_work.load(std::memory_order_acquire) !=
        order.created_joined.load(std::memory_order_acquire))
      join_created(device, *s);
    return s;
  }
  uint64_t seen = order.default_work.load(std::memory_order_acquire);
  if (seen != s->ordering.seen_default.load(std::memory_order_relaxed))
    join_default(device, *s, seen);
  return s;
}

void count_enqueued(DeviceImpl& device, StreamImpl& stream) noexcept {
  if (stream.ordering.role.load(std::memory_order_relaxed) == StreamOrder::kCreated) {
    stream.ordering.work.fetch_add(1, std::memory_order_release);
    device.ordering.created_work.fetch_add(1, std::memory_order_release);
  } else {
    device.ordering.default_work.fetch_add(1, std::memory_order_release);
  }
}

}  // namespace tessera::rt
