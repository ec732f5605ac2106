/// \file The CUDA driver's own launch cost without Tessera, the floor `tessera bench` reports
/// beside Tessera's launch rows (measured in runtime/cuda/launch_floor.cpp).
#pragma once

#include <optional>

namespace tessera::rt {

/// Host microseconds per cuLaunchKernel of an empty kernel, median over bursts from an idle
/// device: parameters as kernelParams, as one packed buffer, and packed with the context pushed
/// and popped around each launch.
struct LaunchFloor {
  double kernel_params_us = 0, packed_us = 0, packed_push_pop_us = 0;
};

/// Measures on CUDA device `ordinal` (`cuda:N`), `bursts` bursts of `burst` launches each;
/// nullopt when the CUDA driver or the device cannot be used.
std::optional<LaunchFloor> cuda_launch_floor(int ordinal, int burst, int bursts);

}  // namespace tessera::rt
