/// \file The CUDA driver API, opened at run time (libcuda.so.1 is never linked): every entry point
/// Tessera calls is one row of one table, resolved once and checked in one place. cuda.h supplies
/// only the types (and, through its macros, the ABI version of each symbol: cuMemAlloc is
/// cuMemAlloc_v2, and so on).
#pragma once

#include <cuda.h>

#include <string>

#include "runtime/cuda/tensor_map.h"

namespace tessera::rt::cuda {

// X(function, "exported symbol"): the symbol names the ABI version the cuda.h types describe.
#define TESSERA_CUDA_DRIVER(X)                                 \
  X(cuInit, "cuInit")                                          \
  X(cuDriverGetVersion, "cuDriverGetVersion")                  \
  X(cuGetErrorName, "cuGetErrorName")                          \
  X(cuGetErrorString, "cuGetErrorString")                      \
  X(cuDeviceGetCount, "cuDeviceGetCount")                      \
  X(cuDeviceGet, "cuDeviceGet")                                \
  X(cuDeviceGetName, "cuDeviceGetName")                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")              \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2")                   \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")      \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2") \
  X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2")     \
  X(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState")  \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2")                   \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2")                     \
  X(cuCtxSynchronize, "cuCtxSynchronize")                      \
  X(cuMemAlloc, "cuMemAlloc_v2")                               \
  X(cuMemFree, "cuMemFree_v2")                                 \
  X(cuMemGetInfo, "cuMemGetInfo_v2")                           \
  X(cuMemHostAlloc, "cuMemHostAlloc")                          \
  X(cuMemFreeHost, "cuMemFreeHost")                            \
  X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2") \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                           \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")                 \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")                 \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")                 \
  X(cuMemsetD8Async, "cuMemsetD8Async")                        \
  X(cuMemsetD16Async, "cuMemsetD16Async")                      \
  X(cuMemsetD32Async, "cuMemsetD32Async")                      \
  X(cuMemsetD2D8Async, "cuMemsetD2D8Async")                    \
  X(cuMemsetD2D32Async, "cuMemsetD2D32Async")                  \
  X(cuStreamCreate, "cuStreamCreate")                          \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                     \
  X(cuStreamSynchronize, "cuStreamSynchronize")                \
  X(cuStreamQuery, "cuStreamQuery")                            \
  X(cuStreamWaitEvent, "cuStreamWaitEvent")                    \
  X(cuPointerGetAttribute, "cuPointerGetAttribute")            \
  X(cuEventCreate, "cuEventCreate")                            \
  X(cuEventDestroy, "cuEventDestroy_v2")                       \
  X(cuEventRecord, "cuEventRecord")                            \
  X(cuEventSynchronize, "cuEventSynchronize")                  \
  X(cuEventQuery, "cuEventQuery")                              \
  X(cuEventElapsedTime, "cuEventElapsedTime")                  \
  X(cuLinkCreate, "cuLinkCreate_v2")                           \
  X(cuLinkAddData, "cuLinkAddData_v2")                         \
  X(cuLinkComplete, "cuLinkComplete")                          \
  X(cuLinkDestroy, "cuLinkDestroy")                            \
  X(cuModuleLoadData, "cuModuleLoadData")                      \
  X(cuModuleUnload, "cuModuleUnload")                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2")                 \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                  \
  X(cuFuncGetAttribute, "cuFuncGetAttribute")                  \
  X(cuLaunchKernel, "cuLaunchKernel")

// Entry points that older drivers lack (null when absent).
#define TESSERA_CUDA_DRIVER_OPTIONAL(X)                                                        \
  X(cuFuncGetParamInfo, "cuFuncGetParamInfo") /* CUDA 12.4 */                                  \
  X(cuStreamGetCtx, "cuStreamGetCtx")         /* 9.2; optional: only wrap_cu_stream's check */ \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2") /* 10.1: graphs (Stream::capture) */      \
  X(cuStreamEndCapture, "cuStreamEndCapture")                                                  \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags") /* 11.4 */                              \
  X(cuGraphLaunch, "cuGraphLaunch")                                                            \
  X(cuGraphExecDestroy, "cuGraphExecDestroy")                                                  \
  X(cuGraphDestroy, "cuGraphDestroy")                                                          \
  X(cuLaunchKernelEx, "cuLaunchKernelEx") /* 11.8: clustered kernels */                        \
  X(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters")

struct Driver {
#define TESSERA_CUDA_MEMBER(fn, symbol) decltype(&::fn) fn = nullptr;
  TESSERA_CUDA_DRIVER(TESSERA_CUDA_MEMBER)
  TESSERA_CUDA_DRIVER_OPTIONAL(TESSERA_CUDA_MEMBER)
#undef TESSERA_CUDA_MEMBER
  int version = 0;  ///< cuDriverGetVersion: 12040 for 12.4
  /// cuTensorMapEncodeTiled (CUDA 12.0; null when absent), typed by tensor_map.h rather than
  /// cuda.h so that the build needs no header that knows tensor maps.
  EncodeTiledFn cuTensorMapEncodeTiled = nullptr;
};

/// The driver, loaded and initialized (cuInit) once; null with `why` set ("cuda unavailable:
/// libcuda.so.1 not found (no NVIDIA driver)") when it cannot be used.
const Driver* driver(std::string* why);

/// "CUDA_ERROR_INVALID_PTX (218)".
std::string error_name(CUresult r);

/// Device faults after which the context is unusable (sticky errors).
bool is_sticky(CUresult r);

/// Throws tessera::Error when `r` is not CUDA_SUCCESS: "<call> failed: <name> (<code>)" plus
/// " in kernel <kernel>" and ": <detail>" when given. Out-of-memory errors are OutOfMemory,
/// sticky faults DeviceFault, the rest Runtime.
void check(CUresult r, const char* call, const std::string& kernel = {},
           const std::string& detail = {});

}  // namespace tessera::rt::cuda
