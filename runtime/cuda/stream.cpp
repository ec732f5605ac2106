/// \file CUDA streams and events: launches with the packed parameter block, copies (uploads
/// through pinned staging), fills, and error reporting at synchronization.
#include "runtime/cuda/stream.h"

#include <cstring>

#include "core/support/error.h"

namespace tessera::rt::cuda {
namespace {

constexpr size_t kStagingMax = size_t{64} << 20;     // larger uploads copy from pageable memory
constexpr size_t kStagingLimit = size_t{256} << 20;  // pinned bytes held before a stream syncs

}  // namespace

CudaEvent::~CudaEvent() {
  std::lock_guard lock(mutex_);
  if (!event_ || !ctx_->alive) return;
  ContextScope scope(device_->driver(), *ctx_, std::nothrow);
  if (scope.entered()) device_->driver().cuEventDestroy(event_);
}

CUevent CudaEvent::handle(const std::shared_ptr<Context>& ctx) {
  std::lock_guard lock(mutex_);
  if (ctx_ == ctx && event_) return event_;
  event_ = nullptr;  // one of a dead context went with it
  recorded_ = false;
  ContextScope scope(device_->driver(), *ctx);
  device_->check_call(ctx, device_->driver().cuEventCreate(&event_, CU_EVENT_DEFAULT),
                      "cuEventCreate");
  ctx_ = ctx;
  return event_;
}

CUevent CudaEvent::recorded(const char* what) const {
  std::lock_guard lock(mutex_);
  if (!event_ || !recorded_) fail(ErrorKind::Argument, what, ": the event was never recorded");
  if (!ctx_->alive)
    fail(ErrorKind::Runtime, what, ": the event was recorded before ", device_->info().name,
         "'s context ended (a fault or Device::reset: ", device_->fault_message(ctx_->generation),
         ")");
  return event_;
}

CudaStream::CudaStream(CudaDevice* device, bool is_default)
    : device_(device), d_(device->driver()), is_default_(is_default) {}

CudaStream::CudaStream(CudaDevice* device, CUstream external, std::shared_ptr<Context> ctx)
    : device_(device),
      d_(device->driver()),
      is_default_(false),
      ctx_(std::move(ctx)),
      stream_(external),
      external_(external) {}

CudaStream::~CudaStream() {
  std::lock_guard lock(mutex_);
  if (!stream_ || !ctx_->alive) return;
  ContextScope scope(d_, *ctx_, std::nothrow);
  if (!scope.entered()) return;
  try {
    device_->await(
        ctx_, [&] { return d_.cuStreamQuery(stream_); }, "cuStreamSynchronize",
        [&] { return pending_kernels(); });
  } catch (const Error&) {
    return;  // the device stopped answering: nothing of its context is touched again
  }
  if (!external_) d_.cuStreamDestroy(stream_);
  for (auto& p : staging_) device_->give_back(p);
}

std::string CudaStream::pending_kernels() const {
  std::string out;
  for (size_t i = 0; i < kernels_.size(); ++i) {
    if (i) out += i + 1 == kernels_.size() ? " or " : ", ";
    out += kernels_[i];
  }
  if (kernels_.size() > 1) out = "one of " + out + " (launched since the last synchronization)";
  return out;
}

void CudaStream::checked(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
                         const std::string& kernel, const std::string& detail) {
  if (r == CUDA_SUCCESS) return;
  if (is_sticky(r)) {
    std::string pending = kernels_.empty() ? kernel : pending_kernels();
    kernels_.clear();
    keep_.clear();
    staging_.clear();
    pending_ = false;
    device_->fault(ctx, r, call, pending);
  }
  check(r, call, kernel, detail);
}

CUstream CudaStream::ensure(std::shared_ptr<Context>* ctx) {
  // The launch path's case, without the device's lock: a context still alive is the device's
  // live one (the device makes a new context only after the old one ended, and an ended one
  // never comes back).
  if (stream_ && ctx_ && ctx_->alive.load(std::memory_order_acquire)) {
    if (ctx) *ctx = ctx_;
    return stream_;
  }
  std::shared_ptr<Context> live = device_->context();
  if (ctx_ != live && external_) {
    fail(ErrorKind::Runtime, "the CUstream given to wrap_cu_stream belonged to ",
         device_->info().name,
         "'s context before a fault or reset ended it; wrap a stream of the new context (",
         device_->fault_message(ctx_->generation), ")");
  }
  if (ctx_ != live) {
    if (ctx_ && pending_) {
      std::string why = device_->fault_message(ctx_->generation);
      lost_ = "work on this stream was lost" +
              (kernels_.empty() ? std::string() : " (kernel " + pending_kernels() + ")") +
              " when the device faulted: " + why;
    }
    kernels_.clear();
    keep_.clear();
    graphs_.clear();
    staging_.clear();  // pinned memory went with the old context
    pending_ = false;
    stream_ = nullptr;
    ContextScope scope(d_, *live);
    device_->check_call(live, d_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING),
                        "cuStreamCreate");
    ctx_ = live;
  }
  if (ctx) *ctx = ctx_;
  return stream_;
}

uint64_t CudaStream::native_handle() {
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  return reinterpret_cast<uint64_t>(ensure(&ctx));
}

void CudaStream::validate(const Allocation& a, const char* what) const {
  if (a.device() != device_)
    fail(ErrorKind::Argument, what, ": a buffer of device '", a.device()->info().name,
         "' used on '", device_->info().name, "'");
  device_->check_alive(a, what);
}

void CudaStream::launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
                        std::vector<std::byte> params,
                        std::vector<std::shared_ptr<Allocation>> keep_alive) {
  launch_packed(kernel, grid, params, keep_alive);
}

void CudaStream::launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                               std::span<const std::byte> params,
                               std::span<std::shared_ptr<Allocation>> keep_alive) {
  auto* k = dynamic_cast<const CudaKernel*>(kernel.get());
  if (!k)
    fail(ErrorKind::Argument, "kernel '", kernel->name, "' was not compiled for ",
         device_->info().name);
  const target::Target& t = device_->target();
  if (grid.x > t.max_grid[0] || grid.y > t.max_grid[1] || grid.z > t.max_grid[2])
    fail(ErrorKind::Argument, "kernel '", k->name, "': grid (", grid.x, ", ", grid.y, ", ", grid.z,
         ") exceeds ", device_->info().name, "'s limit (", t.max_grid[0], ", ", t.max_grid[1], ", ",
         t.max_grid[2], ")");
  // Also checked by KernelBase::launch; launches of loaded artifacts come here directly.
  if (k->cluster > 1 && grid.x % k->cluster != 0)
    fail(ErrorKind::Argument, "kernel '", k->name, "': cluster = ", k->cluster,
         " groups the grid's x into clusters of ", k->cluster, " programs, but grid x = ", grid.x,
         " is not a multiple of it");
  TESSERA_CHECK(params.size() >= k->param_bytes(), "kernel '", k->name, "': parameter block of ",
                params.size(), " bytes, the kernel reads ", k->param_bytes());
  for (const auto& a : keep_alive) validate(*a, k->who().c_str());
  std::lock_guard lock(mutex_);
  CUstream h = ensure(nullptr);
  const std::shared_ptr<Context>& ctx = ctx_;  // the live context (ensure made it so)
  ContextScope scope(d_, *ctx);
  // A kernel with TMA tensor maps gets them encoded (or taken from the device's cache) into a
  // copy of the block; any other kernel's block goes as it is. cuTensorMapEncodeTiled needs a
  // current context (error 201, CUDA_ERROR_INVALID_CONTEXT, without one on the H200's driver).
  std::vector<std::byte> with_maps;
  params = block_with_tensor_maps(k->tensor_maps(), params, k->params, with_maps,
                                  device_->tensor_map_cache(), d_.cuTensorMapEncodeTiled);
  const bool capturing = this->capturing();
  if (capturing && ctx != capture_ctx_)
    fail(ErrorKind::Runtime, "kernel '", k->name, "': ", device_->info().name,
         "'s context ended during the capture (", device_->fault_message(capture_ctx_->generation),
         ")");
  CUfunction f = k->function(ctx);
  size_t size = k->param_bytes();
  // cuLaunchKernel's `extra` and `kernelParams` are arrays of `void*` (the C API has no const
  // form); the driver only reads the parameters, so the casts below drop a const it keeps.
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<std::byte*>(params.data()),
                   CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  // Where the driver lays the parameters out otherwise (a tensor map's alignment), each goes by
  // pointer into the block and the driver places it.
  std::vector<void*> by_pointer;
  if (k->params_by_pointer())
    for (const ir::ParamSlot& s : k->params.slots)
      by_pointer.push_back(const_cast<std::byte*>(params.data()) + s.offset);
  // While capturing, the driver records the launch (and copies the parameters) instead of
  // running it. A clustered kernel (sm_90+) launches with its cluster dimension, a kernel that
  // waits for its predecessor at entry (sm_90+) with programmatic stream serialization (in a
  // capture: a programmatic edge), both through cuLaunchKernelEx, which CudaDevice::load and the
  // device's target made sure the driver has.
  void** kernel_params = by_pointer.empty() ? nullptr : by_pointer.data();
  void** launch_extra = by_pointer.empty() && size ? extra : nullptr;
  const bool ex = k->cluster > 1 || k->dependent_launch;
  CUresult r;
  if (!ex) {
    r = d_.cuLaunchKernel(f, grid.x, grid.y, grid.z, k->threads_per_program, 1, 1, k->shared_bytes,
                          h, kernel_params, launch_extra);
  } else {
    CudaKernel::LaunchAttributes attributes;
    const CUlaunchConfig config = k->launch_config(grid, h, attributes, /*dependent=*/true);
    r = d_.cuLaunchKernelEx(&config, f, kernel_params, launch_extra);
  }
  if (r != CUDA_SUCCESS)  // the detail is built only when needed: this is the launch's hot path
    checked(
        ctx, r,
        !ex ? (capturing ? "cuLaunchKernel (capturing a graph)" : "cuLaunchKernel")
            : (capturing ? "cuLaunchKernelEx (capturing a graph)" : "cuLaunchKernelEx"),
        k->name,
        "grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
            std::to_string(grid.z) + "), " + std::to_string(k->threads_per_program) + " threads, " +
            std::to_string(k->shared_bytes) + " bytes of shared memory" +
            (k->cluster == 1 ? "" : ", clusters of " + std::to_string(k->cluster) + " programs"));
  std::vector<std::shared_ptr<Allocation>>& keep = capturing ? capture_keep_ : keep_;
  for (auto& a : keep_alive) keep.push_back(std::move(a));
  if (capturing) {
    capture_kernels_.push_back(k->name);
    ++capture_launches_;
    return;
  }
  if (kernels_.empty() || kernels_.back() != k->name) kernels_.push_back(k->name);
  pending_ = true;
}

namespace {

/// Fails (Unsupported) when the driver lacks the graph entry points.
void require_graphs(const Driver& d, const std::string& device) {
  if (!d.cuStreamBeginCapture || !d.cuStreamEndCapture || !d.cuGraphInstantiate ||
      !d.cuGraphLaunch || !d.cuGraphExecDestroy || !d.cuGraphDestroy)
    fail(ErrorKind::Unsupported, "graph capture on ", device,
         ": the CUDA driver lacks cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags or "
         "cuGraphLaunch (CUDA 11.4 or newer is needed)");
}

}  // namespace

void CudaStream::begin_capture() {
  require_graphs(d_, device_->info().name);
  std::lock_guard lock(mutex_);
  // The stream's earlier work finishes first, so that a Device::synchronize during the capture
  // (which must not wait on a capturing stream) leaves nothing of this stream unfinished.
  sync_locked();
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  ContextScope scope(d_, *ctx);
  // Relaxed: a first launch inside the capture may load its module (not allowed in the default
  // global mode).
  checked(ctx, d_.cuStreamBeginCapture(h, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  capture_ctx_ = ctx;
  capture_keep_.clear();
  capture_kernels_.clear();
  capture_launches_ = 0;
  capturing_.store(true, std::memory_order_release);
}

std::shared_ptr<GraphImpl> CudaStream::end_capture() {
  std::lock_guard lock(mutex_);
  capturing_.store(false, std::memory_order_release);
  std::shared_ptr<Context> ctx = std::move(capture_ctx_);
  std::vector<std::shared_ptr<Allocation>> keep = std::move(capture_keep_);
  std::vector<std::string> kernels = std::move(capture_kernels_);
  capture_keep_.clear();
  capture_kernels_.clear();
  if (ctx != ctx_ || !ctx->alive)
    fail(ErrorKind::Runtime, "end_capture on ", device_->info().name,
         ": the device's context ended during the capture (",
         device_->fault_message(ctx->generation), ")");
  ContextScope scope(d_, *ctx);
  CUgraph graph = nullptr;
  checked(ctx, d_.cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = d_.cuGraphInstantiate(&exec, graph, 0);
  d_.cuGraphDestroy(graph);  // the executable graph does not need it
  checked(ctx, r, "cuGraphInstantiate");
  return std::make_shared<CudaGraph>(device_, ctx, exec, std::move(keep), std::move(kernels),
                                     capture_launches_);
}

void CudaStream::abandon_capture() {
  std::lock_guard lock(mutex_);
  capturing_.store(false, std::memory_order_release);
  std::shared_ptr<Context> ctx = std::move(capture_ctx_);
  capture_keep_.clear();
  capture_kernels_.clear();
  if (!ctx || ctx != ctx_ || !ctx->alive) return;
  ContextScope scope(d_, *ctx);
  CUgraph graph = nullptr;
  if (d_.cuStreamEndCapture(stream_, &graph) == CUDA_SUCCESS && graph) d_.cuGraphDestroy(graph);
}

CudaGraph::~CudaGraph() {
  if (!exec_ || !ctx_->alive) return;
  ContextScope scope(device_->driver(), *ctx_, std::nothrow);
  if (scope.entered()) device_->driver().cuGraphExecDestroy(exec_);
}

void CudaStream::replay_graph(const std::shared_ptr<CudaGraph>& graph) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  if (graph->context() != ctx)
    fail(ErrorKind::Runtime, "replay on ", device_->info().name,
         ": the graph was captured before a fault or Device::reset ended the device's context (",
         device_->fault_message(graph->context()->generation), "); capture it again");
  ContextScope scope(d_, *ctx);
  const std::string& label = graph->label();
  checked(ctx, d_.cuGraphLaunch(graph->exec(), h), "cuGraphLaunch", label);
  graphs_.push_back(graph);
  if (!label.empty() && (kernels_.empty() || kernels_.back() != label)) kernels_.push_back(label);
  pending_ = true;
}

void CudaStream::upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
                        size_t bytes) {
  validate(*dst, "upload");
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  keep_.push_back(dst);
  ContextScope scope(d_, *ctx);
  const void* from = src;
  if (bytes <= kStagingMax) {  // copy to pinned memory now: the caller may reuse src at once
    size_t held = 0;
    for (const auto& p : staging_) held += p.bytes;
    if (held + bytes > kStagingLimit) sync_locked();
    CudaDevice::Pinned p = device_->take_pinned(bytes);
    std::memcpy(p.host, src, bytes);
    staging_.push_back(p);
    from = p.host;
  }
  checked(ctx, d_.cuMemcpyHtoDAsync(dst->address() + offset, from, bytes, h), "cuMemcpyHtoDAsync");
  pending_ = true;
}

void CudaStream::download(std::shared_ptr<Allocation> src, size_t offset, void* dst, size_t bytes) {
  validate(*src, "download");
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  keep_.push_back(src);
  {
    ContextScope scope(d_, *ctx);
    checked(ctx, d_.cuMemcpyDtoHAsync(dst, src->address() + offset, bytes, h), "cuMemcpyDtoHAsync");
  }
  pending_ = true;
  sync_locked();
}

void CudaStream::fill_pattern(CUstream h, CUdeviceptr p, size_t count, const unsigned char* pat,
                              size_t n) {
  auto run = [&](CUresult r) { checked(ctx_, r, "cuMemset"); };
  bool uniform = true;
  for (size_t i = 1; i < n; ++i) uniform = uniform && pat[i] == pat[0];
  if (uniform) return run(d_.cuMemsetD8Async(p, pat[0], count * n, h));
  if (n == 2 && p % 2 == 0) {
    uint16_t v;
    std::memcpy(&v, pat, 2);
    return run(d_.cuMemsetD16Async(p, v, count, h));
  }
  if (n == 4 && p % 4 == 0) {
    uint32_t v;
    std::memcpy(&v, pat, 4);
    return run(d_.cuMemsetD32Async(p, v, count, h));
  }
  if (n % 4 == 0 && p % 4 == 0) {  // each 32-bit word of the pattern down a pitch of n bytes
    for (size_t w = 0; w < n; w += 4) {
      uint32_t v;
      std::memcpy(&v, pat + w, 4);
      run(d_.cuMemsetD2D32Async(p + w, n, v, 1, count, h));
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) run(d_.cuMemsetD2D8Async(p + i, n, pat[i], 1, count, h));
}

void CudaStream::fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes,
                      const void* pattern, size_t pattern_bytes) {
  if (pattern_bytes == 0 || bytes < pattern_bytes) return;
  validate(*dst, "fill");
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  keep_.push_back(dst);
  ContextScope scope(d_, *ctx);
  fill_pattern(h, dst->address() + offset, bytes / pattern_bytes,
               static_cast<const unsigned char*>(pattern), pattern_bytes);
  pending_ = true;
}

void CudaStream::copy(std::shared_ptr<Allocation> dst, size_t dst_offset,
                      std::shared_ptr<Allocation> src, size_t src_offset, size_t bytes) {
  validate(*dst, "copy");
  validate(*src, "copy");
  std::shared_ptr<Allocation> bounce;
  uint64_t to = dst->address() + dst_offset, from = src->address() + src_offset;
  if (from < to + bytes && to < from + bytes && from != to)  // overlapping: through a copy
    bounce = device_->allocate(bytes);
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  keep_.push_back(dst);
  keep_.push_back(src);
  ContextScope scope(d_, *ctx);
  if (from == to) return;
  if (bounce) {
    keep_.push_back(bounce);
    checked(ctx, d_.cuMemcpyDtoDAsync(bounce->address(), from, bytes, h), "cuMemcpyDtoDAsync");
    from = bounce->address();
  }
  checked(ctx, d_.cuMemcpyDtoDAsync(to, from, bytes, h), "cuMemcpyDtoDAsync");
  pending_ = true;
}

void CudaStream::record(std::shared_ptr<EventImpl> event) {
  auto e = std::dynamic_pointer_cast<CudaEvent>(event);
  if (!e) fail(ErrorKind::Argument, "record: the event belongs to another kind of device");
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  CUevent ev = e->handle(ctx);
  ContextScope scope(d_, *ctx);
  checked(ctx, d_.cuEventRecord(ev, h), "cuEventRecord");
  e->mark_recorded();
}

void CudaStream::wait(std::shared_ptr<EventImpl> event) {
  auto e = std::dynamic_pointer_cast<CudaEvent>(event);
  if (!e) fail(ErrorKind::Argument, "wait: the event belongs to another kind of device");
  CUevent ev = e->recorded("wait");
  std::lock_guard lock(mutex_);
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  ContextScope scope(d_, *ctx);
  checked(ctx, d_.cuStreamWaitEvent(h, ev, 0), "cuStreamWaitEvent");
}

void CudaStream::sync_locked() {
  if (!lost_.empty()) {
    std::string why = std::move(lost_);
    lost_.clear();
    fail(ErrorKind::DeviceFault, why);
  }
  if (!stream_) return;
  std::shared_ptr<Context> ctx;
  CUstream h = ensure(&ctx);
  if (!lost_.empty()) return sync_locked();
  ContextScope scope(d_, *ctx);
  CUresult r = device_->await(
      ctx, [&] { return d_.cuStreamQuery(h); }, "cuStreamSynchronize",
      [&] { return pending_kernels(); });
  // The work is done, so this returns at once; it is what delivers device printf output.
  if (r == CUDA_SUCCESS) r = d_.cuStreamSynchronize(h);
  checked(ctx, r, "cuStreamSynchronize");
  kernels_.clear();
  keep_.clear();
  graphs_.clear();
  for (auto& p : staging_) device_->give_back(p);
  staging_.clear();
  pending_ = false;
}

void CudaStream::synchronize() {
  std::lock_guard lock(mutex_);
  // A capturing stream runs nothing (its earlier work finished when the capture began), and a
  // synchronize would end the capture: Device::synchronize passes it by.
  if (capturing()) return;
  sync_locked();
}

}  // namespace tessera::rt::cuda
