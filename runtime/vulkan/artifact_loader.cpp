/// \file The artifact cache (runtime/artifact_cache.h) loads SPIR-V artifacts into Vulkan devices
/// through this backend's loader, registered when the library loads.
#include "runtime/artifact_cache.h"
#include "runtime/vulkan/device.h"

namespace tessera::rt::vk {
namespace {

[[maybe_unused]] const bool kLoaderRegistered = register_artifact_loader(
    [](DeviceImpl& device, const target::Artifact& artifact) -> std::shared_ptr<const CompiledKernel> {
      auto* vulkan = dynamic_cast<VulkanDevice*>(&device);
      return vulkan ? vulkan->load(artifact) : nullptr;
    });

}  // namespace
}  // namespace tessera::rt::vk
