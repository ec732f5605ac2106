/// \file What a physical device offers: its properties and features, whether it meets Tessera's
/// requirements (Vulkan 1.3, bufferDeviceAddress, subgroup size control with full subgroups, the
/// Vulkan memory model, timeline semaphores), the features to enable, and its target description.
#pragma once

#include <string>
#include <vector>

#include "core/target/target.h"
#include "runtime/vulkan/instance.h"

namespace tessera::rt::vk {

/// The feature structs Tessera reads and enables, chained on demand.
struct FeatureSet {
  VkPhysicalDeviceFeatures2 core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features v13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderAtomicFloat2FeaturesEXT atomic_float2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_2_FEATURES_EXT};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  TesseraPhysicalDeviceShaderBfloat16Features bfloat16{
      TESSERA_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES};
  // Which extension structs take part (their extension is present / enabled).
  bool with_atomic_float = false;
  bool with_atomic_float2 = false;
  bool with_coopmat = false;
  bool with_executables = false;  ///< VK_KHR_pipeline_executable_properties (TESSERA_DUMP=vkstats)
  bool with_bfloat16 = false;     ///< VK_KHR_shader_bfloat16 (bf16 cooperative matrices)

  /// Links the structs present (core -> 1.1 -> 1.2 -> 1.3 -> extensions) and returns the head.
  /// Call again after copying a FeatureSet: the links point into this object.
  VkPhysicalDeviceFeatures2* chain();
};

struct PhysicalFacts {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan13Properties p13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
  VkPhysicalDeviceMemoryProperties memory{};
  FeatureSet supported;
  std::vector<std::string> extensions;
  std::vector<target::MatrixShape> matrix_shapes;  ///< subgroup-scope cooperative-matrix shapes
  uint32_t queue_family = 0;
  uint32_t timestamp_valid_bits = 0;
  /// The requirements this device misses ("bufferDeviceAddress, timelineSemaphore"); empty when
  /// it is usable.
  std::string missing;

  std::string device_name() const { return props.deviceName; }
  bool has_extension(const char* name) const;
  /// Device::best() preference: discrete GPU 30, integrated 20, virtual 15, CPU (lavapipe) 10.
  int rank() const;
  /// The target description of this device, named `name` ("vulkan:0").
  target::Target target(const std::string& name) const;
  /// The features to enable: the required ones and everything the emitter may use, if supported.
  FeatureSet enabled_features() const;
  std::vector<const char*> enabled_extensions() const;
};

/// Reads everything Tessera needs to know about `device`.
PhysicalFacts probe(const Instance& instance, VkPhysicalDevice device);

}  // namespace tessera::rt::vk
