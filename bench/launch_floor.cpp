/// \file The CUDA driver's own launch cost, the floor of Tessera's launch path: an empty kernel
/// launched straight through cuLaunchKernel (libcuda.so.1 opened here, as the runtime does, so
/// the figure holds no Tessera code), its parameters passed three ways: as kernelParams, as one
/// packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, as Tessera passes them), and packed with the
/// context pushed and popped around the call (as Tessera's CudaStream::launch did).
#include "bench/launch_floor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>

namespace tessera::bench {
namespace {

// The few driver types and entry points needed, declared by ABI (cuda.h is not on bench's path).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;

struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext*);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**);
};

template <class F>
bool bind(void* lib, F*& fn, const char* symbol) {
  fn = reinterpret_cast<F*>(dlsym(lib, symbol));
  return fn != nullptr;
}

const char* kPtx =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry floor_kernel(.param .u64 p, .param .u32 n) { ret; }\n";

}  // namespace

std::optional<LaunchFloor> cuda_launch_floor(int ordinal, int burst, int bursts) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  Api a{};
  bool ok = bind(lib, a.cuInit, "cuInit") && bind(lib, a.cuDeviceGet, "cuDeviceGet") &&
            bind(lib, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
            bind(lib, a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") &&
            bind(lib, a.cuCtxPushCurrent, "cuCtxPushCurrent_v2") &&
            bind(lib, a.cuCtxPopCurrent, "cuCtxPopCurrent_v2") &&
            bind(lib, a.cuModuleLoadData, "cuModuleLoadData") &&
            bind(lib, a.cuModuleUnload, "cuModuleUnload") &&
            bind(lib, a.cuModuleGetFunction, "cuModuleGetFunction") &&
            bind(lib, a.cuStreamCreate, "cuStreamCreate") &&
            bind(lib, a.cuStreamDestroy, "cuStreamDestroy_v2") &&
            bind(lib, a.cuStreamSynchronize, "cuStreamSynchronize") &&
            bind(lib, a.cuLaunchKernel, "cuLaunchKernel");
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (!ok || a.cuInit(0) != 0 || a.cuDeviceGet(&dev, ordinal) != 0 ||
      a.cuDevicePrimaryCtxRetain(&ctx, dev) != 0) {
    dlclose(lib);
    return std::nullopt;
  }
  std::optional<LaunchFloor> out;
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  CUstream stream = nullptr;
  if (a.cuCtxPushCurrent(ctx) == 0) {
    if (a.cuModuleLoadData(&module, kPtx) == 0 &&
        a.cuModuleGetFunction(&fn, module, "floor_kernel") == 0 &&
        a.cuStreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */) == 0) {
      struct {
        uint64_t p = 0;
        uint32_t n = 0, pad = 0;
      } packed;
      size_t size = 12;
      void* params[] = {&packed.p, &packed.n};
      void* extra[] = {reinterpret_cast<void*>(1), &packed, reinterpret_cast<void*>(2), &size,
                       nullptr};  // BUFFER_POINTER, BUFFER_SIZE, END
      bool failed = false;
      auto launch = [&](void** kp, void** ex) {
        failed |= a.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, kp, ex) != 0;
      };
      std::function<void()> ways[] = {
          [&] { launch(params, nullptr); },
          [&] { launch(nullptr, extra); },
          [&] {
            CUcontext popped = nullptr;
            a.cuCtxPushCurrent(ctx);
            launch(nullptr, extra);
            a.cuCtxPopCurrent(&popped);
          }};
      double medians[3] = {};
      for (int w = 0; w < 3; ++w) {
        std::vector<double> per;
        for (int i = 0; i < 4 * burst; ++i) ways[w]();  // warm-up
        a.cuStreamSynchronize(stream);
        for (int rep = 0; rep < bursts; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < burst; ++i) ways[w]();
          per.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                                  t0)
                            .count() /
                        burst);
          a.cuStreamSynchronize(stream);
        }
        std::sort(per.begin(), per.end());
        medians[w] = per[per.size() / 2];
      }
      if (!failed) out = LaunchFloor{medians[0], medians[1], medians[2]};
    }
    if (stream) a.cuStreamDestroy(stream);
    if (module) a.cuModuleUnload(module);
    CUcontext popped = nullptr;
    a.cuCtxPopCurrent(&popped);
  }
  a.cuDevicePrimaryCtxRelease(dev);
  dlclose(lib);
  return out;
}

}  // namespace tessera::bench
