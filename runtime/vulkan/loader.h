/// \file The Vulkan loader, opened at run time (dlopen("libvulkan.so.1"), never linked): every
/// entry point the backend calls is listed once in the tables below and loaded and checked in one
/// place, so a machine without Vulkan still runs Tessera and says why it has no Vulkan device.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan_core.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/support/error.h"
#include "runtime/vulkan/coopmat2_compat.h"
#include "runtime/vulkan/khr_compat.h"

/// Loader-level entry points (vkGetInstanceProcAddr(nullptr, name)).
#define TESSERA_VK_GLOBAL_FNS(X)            \
  X(vkEnumerateInstanceVersion)             \
  X(vkEnumerateInstanceLayerProperties)     \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkCreateInstance)

/// Instance-level entry points (vkGetInstanceProcAddr(instance, name)).
#define TESSERA_VK_INSTANCE_FNS(X)            \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

/// Instance-level entry points of optional extensions: loaded when the extension is enabled or
/// present, null otherwise (callers check).
#define TESSERA_VK_OPTIONAL_INSTANCE_FNS(X)            \
  X(vkCreateDebugUtilsMessengerEXT)                    \
  X(vkDestroyDebugUtilsMessengerEXT)                   \
  X(vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR) \
  X(vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)

/// Device-level entry points (vkGetDeviceProcAddr(device, name)); all core in Vulkan 1.3.
#define TESSERA_VK_DEVICE_FNS(X)   \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkQueueWaitIdle)               \
  X(vkQueueSubmit2)                \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkBindBufferMemory)            \
  X(vkGetBufferDeviceAddress)      \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkGetPipelineCacheData)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier2)         \
  X(vkCmdCopyBuffer)               \
  X(vkCmdResetQueryPool)           \
  X(vkResetQueryPool)              \
  X(vkCmdWriteTimestamp2)          \
  X(vkCreateSemaphore)             \
  X(vkDestroySemaphore)            \
  X(vkWaitSemaphores)              \
  X(vkSignalSemaphore)             \
  X(vkGetSemaphoreCounterValue)    \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkGetQueryPoolResults)

/// Device-level entry points of optional extensions: null when the extension is not enabled.
#define TESSERA_VK_OPTIONAL_DEVICE_FNS(X) \
  X(vkGetPipelineExecutablePropertiesKHR) \
  X(vkGetPipelineExecutableStatisticsKHR) \
  X(vkGetPipelineExecutableInternalRepresentationsKHR)

namespace tessera::rt::vk {

#define TESSERA_VK_MEMBER(name) PFN_##name name = nullptr;
struct GlobalFns {
  TESSERA_VK_GLOBAL_FNS(TESSERA_VK_MEMBER)
};
struct InstanceFns {
  TESSERA_VK_INSTANCE_FNS(TESSERA_VK_MEMBER)
  TESSERA_VK_OPTIONAL_INSTANCE_FNS(TESSERA_VK_MEMBER)
};
struct DeviceFns {
  TESSERA_VK_DEVICE_FNS(TESSERA_VK_MEMBER)
  TESSERA_VK_OPTIONAL_DEVICE_FNS(TESSERA_VK_MEMBER)
};
#undef TESSERA_VK_MEMBER

/// The opened libvulkan.so.1 and its loader-level entry points. Never unloaded while an
/// instance made from it lives (instances hold it by shared_ptr).
class Loader {
 public:
  /// Opens the loader; nullptr with `why` set ("libvulkan.so.1 not found (...)") when it cannot.
  static std::shared_ptr<Loader> open(std::string* why);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  const GlobalFns& fns() const { return fns_; }
  /// Loads the instance-level table; the message names every missing required entry point.
  InstanceFns load_instance(VkInstance instance, std::string* missing) const;
  /// Loads the device-level table; the message names every missing entry point.
  static DeviceFns load_device(const InstanceFns& ifns, VkDevice device, std::string* missing);

 private:
  Loader() = default;
  void* library_ = nullptr;
  PFN_vkGetInstanceProcAddr get_instance_proc_ = nullptr;
  GlobalFns fns_;
};

/// "VK_ERROR_DEVICE_LOST" for a VkResult (or "VkResult" for one we do not know).
std::string_view result_name(VkResult result);

/// "vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)[ in kernel k]".
std::string describe_failure(std::string_view call, VkResult result, std::string_view kernel = {});

/// The error kind a failed call maps to: out-of-memory results are OutOfMemory, a lost device is
/// DeviceFault, anything else Runtime.
ErrorKind error_kind(VkResult result);

/// Throws the tessera::Error for a failed call (result < 0); returns otherwise.
void check(VkResult result, std::string_view call, std::string_view kernel = {});

}  // namespace tessera::rt::vk
