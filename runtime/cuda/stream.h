/// \file CUDA streams (non-blocking) and events. A stream remembers the kernels launched since its
/// last synchronization (a fault names them), holds the buffers and pinned staging its pending
/// work uses until then, and remakes its CUstream in the device's next context after a fault.
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/cuda/device.h"

namespace tessera::rt::cuda {

class CudaEvent : public EventImpl {
 public:
  explicit CudaEvent(CudaDevice* device) : device_(device) {}
  ~CudaEvent() override;
  /// The CUevent in `ctx` (made, or remade after a reset).
  CUevent handle(const std::shared_ptr<Context>& ctx);
  /// The event as last recorded; throws if it was never recorded or its context died.
  CUevent recorded(const char* what) const;
  void mark_recorded() { recorded_ = true; }

 private:
  CudaDevice* device_;
  mutable std::mutex mutex_;
  std::shared_ptr<Context> ctx_;
  CUevent event_ = nullptr;
  bool recorded_ = false;
};

class CudaStream;

/// A CUDA graph captured on a CudaStream (Stream::capture) and instantiated in one context:
/// each replay is one cuGraphLaunch. Holds the captured launches' buffers.
class CudaGraph final : public BackendGraph<CudaGraph, CudaStream> {
 public:
  CudaGraph(CudaDevice* device, std::shared_ptr<Context> ctx, CUgraphExec exec,
            std::vector<std::shared_ptr<Allocation>> keep, std::vector<std::string> kernels,
            size_t launches)
      : device_(device),
        ctx_(std::move(ctx)),
        exec_(exec),
        keep_(std::move(keep)),
        launches_(launches) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (std::find(kernels.begin(), kernels.begin() + i, kernels[i]) == kernels.begin() + i)
        label_ += (label_.empty() ? "" : ", ") + kernels[i];
  }
  ~CudaGraph() override;
  DeviceImpl* device() const override { return device_; }
  size_t launches() const override { return launches_; }

  const std::shared_ptr<Context>& context() const { return ctx_; }
  CUgraphExec exec() const { return exec_; }
  /// The kernels captured, each once: "a, b" (named by faults of a replay).
  const std::string& label() const { return label_; }

 private:
  CudaDevice* device_;
  std::shared_ptr<Context> ctx_;
  CUgraphExec exec_;
  std::vector<std::shared_ptr<Allocation>> keep_;
  std::string label_;
  size_t launches_;
};

class CudaStream : public StreamImpl {
 public:
  CudaStream(CudaDevice* device, bool is_default);
  /// A stream over the caller's CUstream `external` in `ctx` (Device::wrap_cu_stream): never
  /// destroyed here, and unusable once `ctx` ends (a fault or a reset).
  CudaStream(CudaDevice* device, CUstream external, std::shared_ptr<Context> ctx);
  ~CudaStream() override;

  DeviceImpl* device() const override { return device_; }
  void launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
              std::vector<std::byte> params,
              std::vector<std::shared_ptr<Allocation>> keep_alive) override;
  void launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                     std::span<const std::byte> params,
                     std::span<std::shared_ptr<Allocation>> keep_alive) override;
  /// Stream capture (cuStreamBeginCapture, relaxed mode) into a CUDA graph.
  void begin_capture() override;
  std::shared_ptr<GraphImpl> end_capture() override;
  void abandon_capture() override;
  /// Enqueues `graph` (cuGraphLaunch); it is held until the stream next synchronizes.
  void replay_graph(const std::shared_ptr<CudaGraph>& graph);
  void upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
              size_t bytes) override;
  void download(std::shared_ptr<Allocation> src, size_t offset, void* dst, size_t bytes) override;
  void fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes, const void* pattern,
            size_t pattern_bytes) override;
  void copy(std::shared_ptr<Allocation> dst, size_t dst_offset, std::shared_ptr<Allocation> src,
            size_t src_offset, size_t bytes) override;
  void record(std::shared_ptr<EventImpl> event) override;
  void wait(std::shared_ptr<EventImpl> event) override;
  void synchronize() override;
  /// The CUstream in the live context (made there if needed).
  uint64_t native_handle() override;

 private:
  /// The stream's CUstream in the live context, which is then ctx_ (and *ctx, unless null); the
  /// caller holds mutex_. Notes work lost to a fault.
  CUstream ensure(std::shared_ptr<Context>* ctx);
  /// Throws if `a` is another device's or died with an earlier context.
  void validate(const Allocation& a, const char* what) const;
  void fill_pattern(CUstream h, CUdeviceptr p, size_t count, const unsigned char* pattern,
                    size_t pattern_bytes);
  std::string pending_kernels() const;
  /// Checks a driver result; a sticky fault ends the pending work here (reported once, by this
  /// call) and resets the device.
  void checked(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
               const std::string& kernel = {}, const std::string& detail = {});
  void sync_locked();

  CudaDevice* device_;
  const Driver& d_;
  [[maybe_unused]] bool is_default_;  // set, never read (Clang: -Wunused-private-field)
  std::mutex mutex_;
  std::shared_ptr<Context> ctx_;
  CUstream stream_ = nullptr;
  CUstream external_ = nullptr;       // the caller's CUstream (wrap_cu_stream), or null
  std::vector<std::string> kernels_;  // launched since the last synchronization
  std::vector<std::shared_ptr<Allocation>> keep_;
  std::vector<CudaDevice::Pinned> staging_;
  bool pending_ = false;
  std::vector<std::shared_ptr<const CudaGraph>> graphs_;  // replayed since the last sync
  // The open capture: its context, the buffers and kernels of its launches.
  std::shared_ptr<Context> capture_ctx_;
  std::vector<std::shared_ptr<Allocation>> capture_keep_;
  std::vector<std::string> capture_kernels_;
  size_t capture_launches_ = 0;
  std::string lost_;  // non-empty: pending work died with its context; thrown at synchronize
};

}  // namespace tessera::rt::cuda
