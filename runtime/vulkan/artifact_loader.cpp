/// \file The artifact cache (runtime/artifact_cache.h) compiles and loads SPIR-V for Vulkan
/// devices through this backend, registered when the library loads.
#include "runtime/artifact_cache.h"
#include "runtime/vulkan/device.h"

namespace tessera::rt::vk {
namespace {

[[maybe_unused]] const bool kArtifactBackend = register_artifact_backend({
    .owns =
        [](const DeviceImpl& device) {
          return dynamic_cast<const VulkanDevice*>(&device) != nullptr;
        },
    .load =
        [](DeviceImpl& device, const target::Artifact& artifact) {
          return static_cast<VulkanDevice&>(device).load(artifact);
        },
});

}  // namespace
}  // namespace tessera::rt::vk
