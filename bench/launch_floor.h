/// \file The CUDA driver's launch cost without Tessera (bench/launch_floor.cpp).
#pragma once

#include <optional>

namespace tessera::bench {

/// Host microseconds per cuLaunchKernel of an empty kernel, median over bursts from an idle
/// device: parameters as kernelParams, as one packed buffer, and packed with the context pushed
/// and popped around each launch.
struct LaunchFloor {
  double kernel_params_us = 0, packed_us = 0, packed_push_pop_us = 0;
};

/// Measures on CUDA device `ordinal`; nullopt when the driver or the device cannot be used.
std::optional<LaunchFloor> cuda_launch_floor(int ordinal, int burst, int bursts);

}  // namespace tessera::bench
