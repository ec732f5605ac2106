/// \file The CUDA backend's entry points when the backend is left out at build time
/// (TESSERA_CUDA=OFF, or AUTO without cuda.h): runtime/CMakeLists.txt compiles this file instead
/// of the others in runtime/cuda/. There are no cuda devices, and Device::enumerate()'s
/// `unavailable` list (so `tessera devices`) says why.
#include "core/support/error.h"
#include "runtime/backend.h"
#include "runtime/cuda/api.h"
#include "runtime/launch_floor.h"

#ifndef TESSERA_CUDA_ABSENT_WHY
#error "TESSERA_CUDA_ABSENT_WHY is set by runtime/CMakeLists.txt"
#endif

namespace tessera::rt {

DriverReport enumerate_cuda() {
  DriverReport report;
  report.kind = "cuda";
  report.unavailable = "cuda unavailable: the CUDA backend was not built into this libtessera (" +
                       std::string(TESSERA_CUDA_ABSENT_WHY) + ")";
  return report;
}

std::optional<LaunchFloor> cuda_launch_floor(int, int, int) {
  return std::nullopt;
}

namespace cuda {

bool is_cuda(const DeviceImpl&) {
  return false;
}

std::shared_ptr<const CompiledKernel> load(DeviceImpl& device, const target::Artifact&) {
  fail(ErrorKind::Argument, "cuda::load: device '", device.info().name,
       "' is not a CUDA device (the CUDA backend was not built)");
}

int multiprocessors(const DeviceImpl& device) {
  fail(ErrorKind::Argument, "cuda::multiprocessors: device '", device.info().name,
       "' is not a CUDA device (the CUDA backend was not built)");
}

std::string cache_dir() {
  return "";
}

}  // namespace cuda
}  // namespace tessera::rt
