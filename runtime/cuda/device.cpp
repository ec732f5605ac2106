/// \file The CUDA device: enumeration, the target description read from the device, context
/// generations and fault recovery, streams and events (its memory: memory.cpp).
#include "runtime/artifact_cache.h"
#include "runtime/cuda/device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>
#include <string_view>
#include <thread>

#include "core/support/error.h"
#include "core/support/fault_text.h"
#include "runtime/cuda/stream.h"
#include "runtime/timeout.h"

namespace tessera::rt::cuda {
namespace {

int attribute(const Driver& d, CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  check(d.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
  return v;
}

/// The newest known profile this device runs (PTX for an older sm runs on newer parts); sm_90a
/// (wgmma) on compute capability 9.0 exactly, the only parts its arch-specific code runs on.
target::Target target_for(int sm) {
  int chosen = sm >= 90 ? 90 : sm >= 89 ? 89 : sm >= 86 ? 86 : 80;
  const std::string suffix = sm == 90 ? "a" : "";
  std::optional<target::Target> t = target::profile("cuda-sm_" + std::to_string(chosen) + suffix);
  TESSERA_CHECK(t, "no profile cuda-sm_", chosen);
  if (sm < 80) t->sm = sm;  // listed, but the PTX target refuses it (it needs sm_80)
  return *t;
}

/// "device assert failed in kernel k at f.cpp:3: msg (program (x, y, z), thread t, index (i);"
/// (the caller closes the parenthesis after the driver's words).
std::string describe_assert(const ptx::FaultRecord& rec) {
  ptx::FaultRecord r;
  std::memcpy(&r, &rec, sizeof r);
  r.message[sizeof r.message - 1] = '\0';
  const size_t n = std::min<size_t>(r.num_values, std::size(r.values));
  return format_assert_message(r.message, std::span<const uint64_t>(r.values, n)) + " (" +
         describe_invocation(r.program, r.thread, r.rank, r.index) + ";";
}

}  // namespace

ContextScope::ContextScope(const Driver& d, const Context& ctx) : d_(d) {
  check(d.cuCtxPushCurrent(ctx.handle), "cuCtxPushCurrent");
  entered_ = true;
}

ContextScope::ContextScope(const Driver& d, const Context& ctx, std::nothrow_t) : d_(d) {
  entered_ = d.cuCtxPushCurrent(ctx.handle) == CUDA_SUCCESS;
}

ContextScope::~ContextScope() {
  if (!entered_) return;
  CUcontext popped = nullptr;
  d_.cuCtxPopCurrent(&popped);
}

CudaAllocation::CudaAllocation(CudaDevice* device, std::shared_ptr<Context> ctx, CUdeviceptr ptr,
                               size_t bytes, size_t capacity)
    : Allocation(device, ptr, bytes), ctx_(std::move(ctx)), capacity_(capacity) {}

namespace {

/// TESSERA_DEPENDENT_LAUNCH: "0" turns dependent launches off; unset, "" or "1" leaves them on
/// where the GPU and driver have them. Another value is an Argument error.
bool dependent_launch_from_env() {
  const char* v = std::getenv("TESSERA_DEPENDENT_LAUNCH");
  if (!v || !*v || std::string_view(v) == "1") return true;
  if (std::string_view(v) == "0") return false;
  fail(ErrorKind::Argument, "TESSERA_DEPENDENT_LAUNCH must be 0 or 1, got '", v, "'");
}

}  // namespace

CudaDevice::CudaDevice(const Driver& driver, int ordinal, CUdevice device)
    : d_(driver), ordinal_(ordinal), device_(device) {
  char name[256] = {};
  check(d_.cuDeviceGetName(name, sizeof name, device_), "cuDeviceGetName");
  int major = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  int minor = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  int sm = major * 10 + minor;
  multiprocessors_ = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  size_t memory = 0;
  check(d_.cuDeviceTotalMem(&memory, device_), "cuDeviceTotalMem");
  target_ = target_for(sm);
  target_.max_threads = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  target_.max_shared_bytes =
      attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  target_.max_grid[0] = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  target_.max_grid[1] = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  target_.max_grid[2] = attribute(d_, device_, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  // Dependent launches need cuLaunchKernelEx and programmatic edges in captured graphs (CUDA
  // 12.3); TESSERA_DEPENDENT_LAUNCH=0 turns them off (kernels then compile without griddepcontrol
  // and launch in plain stream order, as on earlier GPUs).
  if (!d_.cuLaunchKernelEx || d_.version < 12030 || !dependent_launch_from_env())
    target_.set(target::Cap::DependentLaunch, false);
  info_.name = "cuda:" + std::to_string(ordinal_);
  info_.kind = "cuda";
  info_.description = std::string(name) + " (sm_" + std::to_string(sm) + ", " +
                      std::to_string(multiprocessors_) + " SMs, " + std::to_string(memory >> 20) +
                      " MiB, driver " + std::to_string(d_.version / 1000) + "." +
                      std::to_string(d_.version % 1000 / 10) + ")";
  info_.target = target_.str();
  info_.memory_bytes = memory;
  info_.multiprocessors = multiprocessors_;
  info_.rank = 40;
}

CudaDevice::~CudaDevice() {
  close();
}

void CudaDevice::close() {
  // Streams first (they hold pinned blocks and buffers), then the cached memory.
  std::shared_ptr<CudaStream> stream;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    stream = std::move(default_stream_);
  }
  stream.reset();
  std::lock_guard lock(mutex_);
  if (!ctx_ || !ctx_->alive) return;
  {
    ContextScope scope(d_, *ctx_, std::nothrow);
    if (scope.entered()) {
      for (auto& [cap, blocks] : free_)
        for (CUdeviceptr p : blocks) d_.cuMemFree(p);
      for (auto& [bytes, blocks] : pinned_)
        for (void* p : blocks) d_.cuMemFreeHost(p);
      if (ctx_->fault_host) d_.cuMemFreeHost(ctx_->fault_host);
    }
  }
  free_.clear();
  pinned_.clear();
  d_.cuDevicePrimaryCtxRelease(device_);
  // Modules, events, streams and memory made in the context went with it (or stay with the
  // other users of the primary context until their exit): their destructors touch nothing now.
  ctx_->alive = false;
}

std::shared_ptr<Context> CudaDevice::make_context() {
  if (!lost_.empty()) fail(ErrorKind::DeviceFault, lost_);
  auto ctx = std::make_shared<Context>();
  CUresult r = d_.cuDevicePrimaryCtxRetain(&ctx->handle, device_);
  if (is_sticky(r) && !faults_.empty()) {
    lost_ = info_.name +
            " cannot be used again in this process: the CUDA driver keeps its fault (" +
            faults_.rbegin()->second + "); restart the process";
    fail(ErrorKind::DeviceFault, lost_);
  }
  check(r, "cuDevicePrimaryCtxRetain", {}, info_.name);
  ctx->generation = ++generations_;
  void* host = nullptr;
  {
    ContextScope scope(d_, *ctx);
    r = d_.cuMemHostAlloc(&host, sizeof(ptx::FaultRecord),
                          CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
  }
  if (is_sticky(r) && !faults_.empty()) {
    d_.cuDevicePrimaryCtxRelease(device_);
    if (reset_since_fault_) {  // a fresh context that still faults: the driver keeps the fault
      lost_ = info_.name +
              " cannot be used again in this process: the CUDA driver keeps its fault (" +
              faults_.rbegin()->second + "); restart the process";
      fail(ErrorKind::DeviceFault, lost_);
    }
    // The faulted context lives on because another user holds it.
    fail(ErrorKind::DeviceFault, info_.name, "'s primary context still holds the fault (",
         faults_.rbegin()->second,
         "); Tessera does not reset a context that other users in the "
         "process hold: call Device::reset() (cuDevicePrimaryCtxReset, which frees every "
         "allocation in it, other libraries' too) or restart the process");
  }
  check(r, "cuMemHostAlloc", {}, "the fault record of " + info_.name);
  ContextScope scope(d_, *ctx);
  std::memset(host, 0, sizeof(ptx::FaultRecord));
  ctx->fault_host = static_cast<ptx::FaultRecord*>(host);
  check(d_.cuMemHostGetDevicePointer(&ctx->fault_device, host, 0), "cuMemHostGetDevicePointer");
  return ctx;
}

std::shared_ptr<Context> CudaDevice::context() {
  std::lock_guard lock(mutex_);
  if (closed_)
    fail(ErrorKind::Runtime, info_.name,
         " was closed when the device registry was destroyed at process exit; nothing can run on "
         "it now (a static kernel, buffer or stream used during exit?)");
  if (!ctx_ || !ctx_->alive) ctx_ = make_context();
  return ctx_;
}

namespace {

/// TESSERA_CUDA_RESET_ON_FAULT=1: reset the primary context at a fault, as Tessera did before.
bool reset_on_fault() {
  const char* v = std::getenv("TESSERA_CUDA_RESET_ON_FAULT");
  return v && *v && std::string_view(v) != "0";
}

}  // namespace

void CudaDevice::fault(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
                       const std::string& kernels) {
  std::string msg = std::string(call) + " failed: " + error_name(r) +
                    (kernels.empty() ? "" : " in kernel " + kernels);
  if (ctx->fault_host && static_cast<const volatile uint32_t&>(ctx->fault_host->claimed))
    msg = describe_assert(*ctx->fault_host) + " " + msg + ")";
  {
    std::lock_guard lock(mutex_);
    if (!ctx->alive) {
      msg = faults_[ctx->generation];  // already reported by another call
    } else {
      ctx->alive = false;
      free_.clear();  // the context's memory is gone with it (or unusable in it)
      cached_bytes_ = 0;
      pinned_.clear();
      d_.cuDevicePrimaryCtxRelease(device_);
      reset_since_fault_ = false;
      if (reset_on_fault()) {
        d_.cuDevicePrimaryCtxReset(device_);
        reset_since_fault_ = true;
        msg += "; " + info_.name +
               " was reset (TESSERA_CUDA_RESET_ON_FAULT=1): buffers allocated before the fault "
               "are invalid";
      } else {
        unsigned flags = 0;
        int active = 0;
        CUresult s = d_.cuDevicePrimaryCtxGetState(device_, &flags, &active);
        msg += "; buffers allocated on " + info_.name +
               " before the fault are invalid; Tessera did not reset the primary context (" +
               (s != CUDA_SUCCESS ? "Device::reset() resets it"
                : active ? "other users in this process still hold it: it stays unusable until "
                           "Device::reset() or their own cuDevicePrimaryCtxReset"
                         : "no other user held it, so the driver discarded it") +
               ")";
      }
      faults_[ctx->generation] = msg;
      if (ctx_ == ctx) ctx_.reset();
    }
  }
  fail(ErrorKind::DeviceFault, msg);
}

void CudaDevice::reset() {
  std::lock_guard lock(mutex_);
  if (!lost_.empty()) fail(ErrorKind::DeviceFault, "Device::reset: ", lost_);
  if (ctx_ && ctx_->alive) {  // a live context: Tessera's own memory in it goes too
    ctx_->alive = false;
    faults_[ctx_->generation] = info_.name + " was reset by Device::reset()";
    free_.clear();
    cached_bytes_ = 0;
    pinned_.clear();
    d_.cuDevicePrimaryCtxRelease(device_);
  }
  ctx_.reset();
  CUresult r = d_.cuDevicePrimaryCtxReset(device_);
  if (is_sticky(r) && !faults_.empty()) {  // the driver keeps the fault for the process
    lost_ = info_.name +
            " cannot be used again in this process: the CUDA driver keeps its fault (" +
            faults_.rbegin()->second + "); restart the process";
    fail(ErrorKind::DeviceFault, "Device::reset: ", lost_);
  }
  check(r, "cuDevicePrimaryCtxReset", {}, info_.name);
  reset_since_fault_ = true;
}

std::shared_ptr<Allocation> CudaDevice::wrap(uint64_t address, size_t bytes,
                                             std::shared_ptr<void> keep) {
  std::shared_ptr<Context> ctx = context();
  const std::string where = "wrap on " + info_.name + ": " + hex_address(address);
  const auto p = static_cast<CUdeviceptr>(address);
  CUcontext owner = nullptr;
  if (CUresult r = d_.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p);
      r != CUDA_SUCCESS)
    fail(ErrorKind::Argument, where,
         " is not memory the CUDA driver knows (cuPointerGetAttribute "
         "failed: ",
         error_name(r), "): pass a CUdeviceptr from cuMemAlloc or a CUDA library");
  int ordinal = -1;
  if (d_.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) == CUDA_SUCCESS &&
      ordinal != ordinal_)
    fail(ErrorKind::Argument, where, " is memory of cuda:", ordinal, ", not of ", info_.name);
  // Memory tied to no context (cuMemMap, memory pools) is usable from every context.
  if (owner && owner != ctx->handle)
    fail(ErrorKind::Argument, where, " belongs to another CUDA context (",
         hex_address(reinterpret_cast<uint64_t>(owner)), "), not to ", info_.name,
         "'s primary context (", hex_address(reinterpret_cast<uint64_t>(ctx->handle)),
         ") that Tessera launches in");
  CUdeviceptr start = 0;
  size_t size = 0;
  if (d_.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) == CUDA_SUCCESS &&
      d_.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) == CUDA_SUCCESS &&
      bytes > start + size - address)
    fail(ErrorKind::Argument, where, ": ", bytes, " bytes run past the end of its allocation (",
         size, " bytes from ", hex_address(start), ")");
  return std::make_shared<ExternalAllocation>(this, address, bytes, std::move(keep));
}

std::shared_ptr<StreamImpl> CudaDevice::wrap_stream(uint64_t handle) {
  const std::string where = "wrap_cu_stream on " + info_.name;
  if (handle <= 2)  // 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
    fail(ErrorKind::Argument, where, ": the CUstream ", hex_address(handle),
         " is null or a special stream (legacy or per-thread default): wrap a created CUstream");
  std::shared_ptr<Context> ctx = context();
  auto s = reinterpret_cast<CUstream>(handle);
  CUcontext owner = ctx->handle;  // a driver without cuStreamGetCtx: trusted to be the context's
  if (d_.cuStreamGetCtx) {
    if (CUresult r = d_.cuStreamGetCtx(s, &owner); r != CUDA_SUCCESS)
      fail(ErrorKind::Argument, where, ": cuStreamGetCtx failed for the CUstream ",
           hex_address(handle), ": ", error_name(r), " (not a live CUstream?)");
  }
  if (owner != ctx->handle)
    fail(ErrorKind::Argument, where, ": the CUstream belongs to another CUDA context (",
         hex_address(reinterpret_cast<uint64_t>(owner)), "), not to ", info_.name,
         "'s primary context (", hex_address(reinterpret_cast<uint64_t>(ctx->handle)), ")");
  auto stream = std::make_shared<CudaStream>(this, s, ctx);
  std::lock_guard lock(mutex_);
  streams_.push_back(stream);
  return stream;
}

uint64_t CudaDevice::native_handle(NativeHandle which) {
  if (which == NativeHandle::CuContext) return reinterpret_cast<uint64_t>(context()->handle);
  if (which == NativeHandle::CuDevice) return static_cast<uint64_t>(device_);
  return DeviceImpl::native_handle(which);
}

void poll_pause(std::chrono::steady_clock::duration waited) {
  using std::chrono::microseconds;
  if (waited < std::chrono::milliseconds(2)) return std::this_thread::yield();
  const auto us = std::chrono::duration_cast<microseconds>(waited).count() / 10;
  std::this_thread::sleep_for(microseconds(std::min<int64_t>(us, 1000)));
}

double poll_timeout_seconds() {
  return timeout_seconds();
}

void CudaDevice::hung(const std::shared_ptr<Context>& ctx, const char* call,
                      const std::string& kernels, double seconds) {
  std::string msg = info_.name + " was lost: it stopped answering (" + call + " timed out after " +
                    timeout_text(seconds) +
                    (kernels.empty() ? std::string() : " waiting for kernel " + kernels) +
                    "); it cannot be used again in this process";
  {
    std::lock_guard lock(mutex_);
    if (lost_.empty())
      lost_ = msg;
    else
      msg = lost_;
    // Dead to every later call, but neither reset nor released: its work may still be running.
    ctx->alive = false;
    faults_[ctx->generation] = msg;
    free_.clear();
    cached_bytes_ = 0;
    pinned_.clear();
    if (ctx_ == ctx) ctx_.reset();
  }
  fail(ErrorKind::DeviceFault, msg);
}

void CudaDevice::check_call(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
                            const std::string& kernels, const std::string& detail) {
  if (r == CUDA_SUCCESS) return;
  if (is_sticky(r)) fault(ctx, r, call, kernels);
  check(r, call, kernels, detail);
}

std::string CudaDevice::fault_message(uint64_t generation) const {
  std::lock_guard lock(mutex_);
  auto it = faults_.find(generation);
  return it == faults_.end() ? std::string() : it->second;
}

std::shared_ptr<StreamImpl> CudaDevice::default_stream() {
  std::lock_guard lock(mutex_);
  if (!default_stream_) {
    default_stream_ = std::make_shared<CudaStream>(this, true);
    streams_.push_back(default_stream_);
  }
  return default_stream_;
}

std::shared_ptr<StreamImpl> CudaDevice::create_stream() {
  auto s = std::make_shared<CudaStream>(this, false);
  std::lock_guard lock(mutex_);
  streams_.push_back(s);
  return s;
}

std::shared_ptr<EventImpl> CudaDevice::create_event() {
  return std::make_shared<CudaEvent>(this);
}

double CudaDevice::elapsed_ms(const EventImpl& start, const EventImpl& end) {
  auto& s = dynamic_cast<const CudaEvent&>(start);
  auto& e = dynamic_cast<const CudaEvent&>(end);
  CUevent a = s.recorded("elapsed_ms (start event)"), b = e.recorded("elapsed_ms (end event)");
  std::shared_ptr<Context> ctx = context();
  ContextScope scope(d_, *ctx);
  CUresult r = await(
      ctx, [&] { return d_.cuEventQuery(b); }, "cuEventSynchronize", [] { return std::string(); });
  if (r == CUDA_SUCCESS) r = d_.cuEventSynchronize(b);  // done: returns at once, flushes printf
  check_call(ctx, r, "cuEventSynchronize");
  float ms = 0;
  check_call(ctx, d_.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  return ms;
}

void CudaDevice::synchronize() {
  std::vector<std::shared_ptr<CudaStream>> streams;
  {
    std::lock_guard lock(mutex_);
    for (auto& w : streams_)
      if (auto s = w.lock()) streams.push_back(s);
  }
  for (auto& s : streams) s->synchronize();
}

std::shared_ptr<const CompiledKernel> CudaDevice::compile(const ir::Module& module,
                                                          const LaunchOptions& options) {
  return load(jit_compile(module, target_, options));
}

}  // namespace tessera::rt::cuda

namespace tessera::rt {

DriverReport enumerate_cuda() {
  DriverReport report;
  report.kind = "cuda";
  const cuda::Driver* d = cuda::driver(&report.unavailable);
  if (!d) return report;
  int count = 0;
  if (CUresult r = d->cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    report.unavailable = "cuda unavailable: cuDeviceGetCount failed: " + cuda::error_name(r);
    return report;
  }
  if (count == 0) report.unavailable = "cuda unavailable: the driver reports no CUDA devices";
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS) continue;
    report.devices.push_back(std::make_shared<cuda::CudaDevice>(*d, i, dev));
  }
  return report;
}

}  // namespace tessera::rt
