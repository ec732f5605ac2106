/// \file The CUDA driver's own launch cost, the floor of Tessera's launch path: an empty kernel
/// launched straight through cuLaunchKernel (the runtime's driver table, none of its launch
/// code), its parameters passed three ways: as kernelParams, as one packed buffer
/// (CU_LAUNCH_PARAM_BUFFER_POINTER, as Tessera passes them), and packed with the context pushed
/// and popped around the call (as Tessera's CudaStream::launch does). It lives in the backend,
/// the one folder that may see the driver table; `tessera bench` reports it (bench/overhead.cpp).
#include "runtime/launch_floor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda/driver.h"

namespace tessera::rt {
namespace {

const char* kPtx =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry floor_kernel(.param .u64 p, .param .u32 n) { ret; }\n";

/// Median host microseconds per call of `launch`, over `bursts` bursts from an idle stream.
double median_per_launch(const cuda::Driver& d, CUstream stream,
                         const std::function<void()>& launch, int burst, int bursts) {
  for (int i = 0; i < 4 * burst; ++i) launch();  // warm-up
  d.cuStreamSynchronize(stream);
  std::vector<double> per;
  for (int rep = 0; rep < bursts; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < burst; ++i) launch();
    std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - t0;
    per.push_back(took.count() / burst);
    d.cuStreamSynchronize(stream);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

}  // namespace

std::optional<LaunchFloor> cuda_launch_floor(int ordinal, int burst, int bursts) {
  std::string why;
  const cuda::Driver* d = cuda::driver(&why);
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (!d || d->cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
      d->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
    return std::nullopt;
  std::optional<LaunchFloor> out;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  CUstream stream = nullptr;
  if (d->cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
    if (d->cuModuleLoadData(&module, kPtx) == CUDA_SUCCESS &&
        d->cuModuleGetFunction(&fn, module, "floor_kernel") == CUDA_SUCCESS &&
        d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
      struct {
        uint64_t p = 0;
        uint32_t n = 0;
      } packed;
      size_t size = 12;
      void* params[] = {&packed.p, &packed.n};
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                       CU_LAUNCH_PARAM_END};
      bool failed = false;
      auto launch = [&](void** kp, void** ex) {
        failed |= d->cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, kp, ex) != CUDA_SUCCESS;
      };
      LaunchFloor f;
      f.kernel_params_us =
          median_per_launch(*d, stream, [&] { launch(params, nullptr); }, burst, bursts);
      f.packed_us = median_per_launch(*d, stream, [&] { launch(nullptr, extra); }, burst, bursts);
      f.packed_push_pop_us = median_per_launch(
          *d, stream,
          [&] {
            CUcontext popped = nullptr;
            d->cuCtxPushCurrent(ctx);
            launch(nullptr, extra);
            d->cuCtxPopCurrent(&popped);
          },
          burst, bursts);
      if (!failed) out = f;
    }
    if (stream) d->cuStreamDestroy(stream);
    if (module) d->cuModuleUnload(module);
    CUcontext popped = nullptr;
    d->cuCtxPopCurrent(&popped);
  }
  d->cuDevicePrimaryCtxRelease(dev);
  return out;
}

}  // namespace tessera::rt
