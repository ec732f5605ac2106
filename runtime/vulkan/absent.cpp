/// \file The Vulkan backend's entry point when the backend is left out at build time
/// (TESSERA_VULKAN=OFF, or AUTO without the Vulkan headers or glslc): runtime/CMakeLists.txt
/// compiles this file instead of the others in runtime/vulkan/. There are no vulkan devices,
/// and Device::enumerate()'s `unavailable` list (so `tessera devices`) says why.
#include <string>

#include "runtime/backend.h"

#ifndef TESSERA_VULKAN_ABSENT_WHY
#error "TESSERA_VULKAN_ABSENT_WHY is set by runtime/CMakeLists.txt"
#endif

namespace tessera::rt {

DriverReport enumerate_vulkan() {
  DriverReport report;
  report.kind = "vulkan";
  report.unavailable =
      "vulkan unavailable: the Vulkan backend was not built into this "
      "libtessera (" +
      std::string(TESSERA_VULKAN_ABSENT_WHY) + ")";
  return report;
}

}  // namespace tessera::rt
