/// \file Loads libcuda.so.1 with dlopen, resolves the driver table once, and turns CUresults into
/// tessera::Errors.
#include "runtime/cuda/driver.h"

#include <dlfcn.h>

#include "core/support/error.h"

namespace tessera::rt::cuda {
namespace {

struct Loaded {
  Driver driver;
  std::string why;  // empty when usable
};

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.why = "cuda unavailable: libcuda.so.1 not found (no NVIDIA driver)";
    return l;
  }
  Driver& d = l.driver;
  std::string missing;
#define TESSERA_CUDA_RESOLVE(fn, symbol)                       \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(lib, symbol)); \
  if (!d.fn) missing += std::string(missing.empty() ? "" : ", ") + symbol;
  TESSERA_CUDA_DRIVER(TESSERA_CUDA_RESOLVE)
#undef TESSERA_CUDA_RESOLVE
#define TESSERA_CUDA_RESOLVE_OPTIONAL(fn, symbol) \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(lib, symbol));
  TESSERA_CUDA_DRIVER_OPTIONAL(TESSERA_CUDA_RESOLVE_OPTIONAL)
#undef TESSERA_CUDA_RESOLVE_OPTIONAL
  d.cuTensorMapEncodeTiled = reinterpret_cast<EncodeTiledFn>(dlsym(lib, "cuTensorMapEncodeTiled"));
  if (!missing.empty()) {
    l.why = "cuda unavailable: libcuda.so.1 lacks " + missing + " (driver too old)";
    return l;
  }
  d.cuDriverGetVersion(&d.version);
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(r, &name);
    l.why = "cuda unavailable: cuInit failed: " + std::string(name ? name : "?") + " (" +
            std::to_string(static_cast<int>(r)) + ")";
  }
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Driver* driver(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.why;
  return l.why.empty() ? &l.driver : nullptr;
}

std::string error_name(CUresult r) {
  const char* name = nullptr;
  const Driver* d = driver(nullptr);
  if (d) d->cuGetErrorName(r, &name);
  return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + " (" +
         std::to_string(static_cast<int>(r)) + ")";
}

bool is_sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

void check(CUresult r, const char* call, const std::string& kernel, const std::string& detail) {
  if (r == CUDA_SUCCESS) return;
  ErrorKind kind = r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorKind::OutOfMemory
                   : is_sticky(r)                ? ErrorKind::DeviceFault
                                                 : ErrorKind::Runtime;
  fail(kind, call, " failed: ", error_name(r), kernel.empty() ? "" : " in kernel " + kernel,
       detail.empty() ? "" : ": " + detail);
}

}  // namespace tessera::rt::cuda
