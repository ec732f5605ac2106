/// \file The CUDA device's memory: the caching allocator (freed blocks kept per rounded size for
/// reuse, up to a limit, and dropped when an allocation runs out) and the pinned staging pool.
#include <string>

#include "core/support/error.h"
#include "runtime/cuda/device.h"

namespace tessera::rt::cuda {
namespace {

constexpr size_t kSmallBlock = 512;              // allocations up to 1 MiB round to this
constexpr size_t kLargeBlock = 2u << 20;         // larger ones to 2 MiB
constexpr size_t kCacheLimit = size_t{4} << 30;  // freed blocks kept for reuse, at most

size_t capacity_for(size_t bytes) {
  size_t b = bytes == 0 ? 1 : bytes;
  size_t unit = b <= (1u << 20) ? kSmallBlock : kLargeBlock;
  return (b + unit - 1) / unit * unit;
}

}  // namespace

CudaAllocation::~CudaAllocation() {
  static_cast<CudaDevice*>(device())->release(ctx_, address(), capacity_);
}

void CudaDevice::check_alive(const Allocation& a, const char* what) const {
  auto* c = dynamic_cast<const CudaAllocation*>(&a);
  if (!c || c->context()->alive) return;
  fail(ErrorKind::Runtime, what, ": the buffer was allocated on ", info_.name,
       " before a device fault (or Device::reset) ended its context, so its memory is gone (",
       fault_message(c->context()->generation), ")");
}

std::shared_ptr<Allocation> CudaDevice::allocate(size_t bytes) {
  size_t cap = capacity_for(bytes);
  std::shared_ptr<Context> ctx = context();
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(cap);
    if (it != free_.end() && !it->second.empty()) {
      CUdeviceptr p = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= cap;
      return std::make_shared<CudaAllocation>(this, ctx, p, bytes, cap);
    }
  }
  ContextScope scope(d_, *ctx);
  CUdeviceptr p = 0;
  CUresult r = d_.cuMemAlloc(&p, cap);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    drop_caches();
    r = d_.cuMemAlloc(&p, cap);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free = 0, total = 0;
    d_.cuMemGetInfo(&free, &total);
    fail(ErrorKind::OutOfMemory, info_.name, ": cannot allocate ", bytes,
         " bytes (cuMemAlloc failed: ", error_name(r), "; ", free, " of ", total, " bytes free)");
  }
  check_call(ctx, r, "cuMemAlloc", {}, std::to_string(bytes) + " bytes on " + info_.name);
  return std::make_shared<CudaAllocation>(this, ctx, p, bytes, cap);
}

void CudaDevice::release(const std::shared_ptr<Context>& ctx, CUdeviceptr ptr, size_t capacity) {
  if (!ctx->alive) return;  // freed with its context
  {
    std::lock_guard lock(mutex_);
    if (ctx == ctx_ && cached_bytes_ + capacity <= kCacheLimit) {
      free_[capacity].push_back(ptr);
      cached_bytes_ += capacity;
      return;
    }
  }
  ContextScope scope(d_, *ctx, std::nothrow);  // from a destructor: never throws
  if (scope.entered()) d_.cuMemFree(ptr);
}

void CudaDevice::drop_caches() {
  std::lock_guard lock(mutex_);
  if (!ctx_ || !ctx_->alive) return;
  ContextScope scope(d_, *ctx_);
  for (auto& [cap, blocks] : free_)
    for (CUdeviceptr p : blocks) d_.cuMemFree(p);
  free_.clear();
  cached_bytes_ = 0;
}

CudaDevice::Pinned CudaDevice::take_pinned(size_t bytes) {
  size_t size = size_t{4} << 20;
  while (size < bytes) size *= 2;
  std::shared_ptr<Context> ctx = context();
  {
    std::lock_guard lock(mutex_);
    auto it = pinned_.find(size);
    if (it != pinned_.end() && !it->second.empty() && ctx == ctx_) {
      void* p = it->second.back();
      it->second.pop_back();
      return {p, size, ctx};
    }
  }
  ContextScope scope(d_, *ctx);
  void* p = nullptr;
  check_call(ctx, d_.cuMemHostAlloc(&p, size, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc", {},
             std::to_string(size) + " bytes of staging memory");
  return {p, size, ctx};
}

void CudaDevice::give_back(Pinned p) {
  if (!p.host || !p.ctx->alive) return;
  std::lock_guard lock(mutex_);
  pinned_[p.bytes].push_back(p.host);
}

}  // namespace tessera::rt::cuda
