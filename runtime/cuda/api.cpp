/// \file runtime/cuda/api.h over CudaDevice.
#include "runtime/cuda/api.h"

#include <type_traits>

#include "core/support/error.h"
#include "runtime/cuda/cubin_cache.h"
#include "runtime/cuda/device.h"

namespace tessera::rt::cuda {
namespace {

/// `device` as a CudaDevice, const where `device` is (D: DeviceImpl or const DeviceImpl).
template <class D>
auto& cuda_device(D& device, const char* what) {
  using C = std::conditional_t<std::is_const_v<D>, const CudaDevice, CudaDevice>;
  auto* d = dynamic_cast<C*>(&device);
  if (!d)
    fail(ErrorKind::Argument, what, ": device '", device.info().name, "' is not a CUDA device");
  return *d;
}

}  // namespace

bool is_cuda(const DeviceImpl& device) {
  return dynamic_cast<const CudaDevice*>(&device) != nullptr;
}

std::shared_ptr<const CompiledKernel> load(DeviceImpl& device, const target::Artifact& artifact) {
  return cuda_device(device, "cuda::load").load(artifact);
}

int multiprocessors(const DeviceImpl& device) {
  return cuda_device(device, "cuda::multiprocessors").multiprocessors();
}

std::string cache_dir() {
  return cubin_cache_dir();
}

size_t tensor_maps_cached(const DeviceImpl& device) {
  return cuda_device(device, "cuda::tensor_maps_cached").tensor_map_cache().size();
}

void in_context(DeviceImpl& device, const std::function<void()>& f) {
  CudaDevice& d = cuda_device(device, "cuda::in_context");
  const std::shared_ptr<Context> ctx = d.context();
  ContextScope scope(d.driver(), *ctx);
  f();
}

}  // namespace tessera::rt::cuda
