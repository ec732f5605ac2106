/// \file What the CUDA backend offers beyond runtime/backend.h, for tests and users who bring
/// their own compiled kernels (no cuda.h needed): loading a PTX artifact, and device facts.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "core/target/artifact.h"
#include "runtime/backend.h"

namespace tessera::rt::cuda {

/// True if `device` is a CUDA device (`cuda:N`).
bool is_cuda(const DeviceImpl& device);
/// JIT-compiles (or takes from the disk cache) and loads a PTX artifact on a CUDA device;
/// ErrorKind::Argument for a device of another kind.
std::shared_ptr<const CompiledKernel> load(DeviceImpl& device, const target::Artifact& artifact);
/// The device's multiprocessor count.
int multiprocessors(const DeviceImpl& device);
/// The folder of the cubin disk cache ("" when there is none).
std::string cache_dir();
/// How many TMA tensor maps the device holds encoded (its cache, per argument set).
size_t tensor_maps_cached(const DeviceImpl& device);
/// Runs `f` with the device's context current on this thread (driver calls outside a launch that
/// need one, such as cuTensorMapEncodeTiled).
void in_context(DeviceImpl& device, const std::function<void()>& f);

}  // namespace tessera::rt::cuda
