/// \file Graphs (capture and replay): the public checks and ordering of Stream::begin_capture,
/// end_capture and Graph::replay, and the default capture of StreamImpl, which records each
/// launch and replays them one by one (the host and simt devices; CUDA and Vulkan override it).
#include <iterator>
#include <mutex>

#include "core/support/error.h"
#include "runtime/stream.h"

namespace tessera {
namespace rt {

/// The default capture's graph: the launches as packed, enqueued again at each replay.
class RecordedGraph final : public GraphImpl {
 public:
  explicit RecordedGraph(DeviceImpl* device) : device_(device) {}

  /// Records one launch (the buffers' allocations are held by the graph).
  void add(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
           std::span<const std::byte> params, std::span<std::shared_ptr<Allocation>> keep) {
    std::lock_guard lock(mutex_);
    launches_.push_back(
        {kernel, grid, std::vector<std::byte>(params.begin(), params.end()),
         std::vector<std::shared_ptr<Allocation>>(std::make_move_iterator(keep.begin()),
                                                  std::make_move_iterator(keep.end()))});
  }

  DeviceImpl* device() const override { return device_; }
  size_t launches() const override {
    std::lock_guard lock(mutex_);
    return launches_.size();
  }
  void replay(StreamImpl& stream) override {
    std::lock_guard lock(mutex_);
    for (const Launch& l : launches_) stream.launch(l.kernel, l.grid, l.params, l.keep);
  }

 private:
  struct Launch {
    std::shared_ptr<const CompiledKernel> kernel;
    Grid grid;
    std::vector<std::byte> params;
    std::vector<std::shared_ptr<Allocation>> keep;
  };
  DeviceImpl* device_;
  mutable std::mutex mutex_;
  std::vector<Launch> launches_;
};

void StreamImpl::launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                               std::span<const std::byte> params,
                               std::span<std::shared_ptr<Allocation>> keep_alive) {
  if (recording_ && capturing()) return recording_->add(kernel, grid, params, keep_alive);
  launch(kernel, grid, std::vector<std::byte>(params.begin(), params.end()),
         std::vector<std::shared_ptr<Allocation>>(std::make_move_iterator(keep_alive.begin()),
                                                  std::make_move_iterator(keep_alive.end())));
}

void StreamImpl::begin_capture() {
  recording_ = std::make_shared<RecordedGraph>(device());
  capturing_.store(true, std::memory_order_release);
}

std::shared_ptr<GraphImpl> StreamImpl::end_capture() {
  capturing_.store(false, std::memory_order_release);
  return std::move(recording_);
}

void StreamImpl::abandon_capture() {
  capturing_.store(false, std::memory_order_release);
  recording_.reset();
}

}  // namespace rt

void refuse_in_capture(const rt::StreamImpl& stream, const char* what) {
  if (stream.capturing())
    fail(ErrorKind::Argument, what, " on ", stream.device()->info().name,
         ": the stream is capturing a graph, and only kernel launches can be captured (end the "
         "capture first, or use another stream)");
}

void Stream::begin_capture() const {
  rt::DeviceImpl& device = *impl_->device();
  const std::string& name = device.info().name;
  if (impl_->capturing())
    fail(ErrorKind::Argument, "begin_capture on ", name,
         ": the stream is already capturing a graph (captures do not nest)");
  if (device.default_stream() == impl_)
    fail(ErrorKind::Argument, "begin_capture on ", name,
         "'s default stream: it orders every other stream's work, so it cannot capture; capture "
         "on a stream from Device::create_stream() and launch with k[{grid, {}, &stream}](...)");
  // The default stream waits now for this stream's earlier work, so that no later operation on
  // the default stream needs to join this stream while it captures (its launches are not
  // counted until a replay enqueues them).
  rt::ordered_stream(device, nullptr);
  rt::ordered_stream(device, &impl_);
  impl_->begin_capture();
}

Graph Stream::end_capture() const {
  if (!impl_->capturing())
    fail(ErrorKind::Argument, "end_capture on ", impl_->device()->info().name,
         ": the stream is not capturing (begin_capture first)");
  return Graph(impl_->end_capture());
}

void Stream::abandon_capture() const {
  if (impl_->capturing()) impl_->abandon_capture();
}

void Graph::replay(const Stream& stream) const {
  if (!impl_)
    fail(ErrorKind::Argument, "replay of an empty graph (made by Graph(), not by a capture)");
  rt::DeviceImpl& device = *stream.impl()->device();
  if (impl_->device() != &device)
    fail(ErrorKind::Argument, "replay of a graph captured on ", impl_->device()->info().name,
         " on a stream of ", device.info().name, ": a graph replays only on its own device");
  if (stream.impl()->capturing())
    fail(ErrorKind::Argument, "replay on ", device.info().name,
         ": the stream is capturing a graph (a replay cannot be captured)");
  std::shared_ptr<rt::StreamImpl> s = rt::ordered_stream(device, &stream.impl());
  rt::CountEnqueued counted(device, *s);
  impl_->replay(*s);
}

}  // namespace tessera
