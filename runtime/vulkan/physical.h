/// \file What a physical device offers: its properties and features, whether it meets Tessera's
/// requirements (Vulkan 1.3, bufferDeviceAddress, subgroup size control with full subgroups, the
/// Vulkan memory model, timeline semaphores), the features to enable, and its target description.
#pragma once

#include <string>
#include <vector>

#include "core/target/target.h"
#include "runtime/vulkan/coopmat2_compat.h"
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
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  // Which extension structs take part (their extension is present / enabled).
  bool with_atomic_float = false;
  bool with_atomic_float2 = false;
  bool with_coopmat = false;
  bool with_executables = false;  ///< VK_KHR_pipeline_executable_properties (TESSERA_DUMP=vkstats)
  bool with_bfloat16 = false;     ///< VK_KHR_shader_bfloat16 (bf16 cooperative matrices)
  bool with_coopmat2 = false;     ///< VK_NV_cooperative_matrix2 (enabled only on request)

  /// Links the structs present (core -> 1.1 -> 1.2 -> 1.3 -> extensions) and returns the head.
  /// Call again after copying a FeatureSet: the links point into this object.
  VkPhysicalDeviceFeatures2* chain();
};

/// One of VK_NV_cooperative_matrix2's flexible-dimension shapes: matrices of any multiple of
/// the granularities (up to flexibleDimensionsMaxDimension) at subgroup or workgroup scope.
struct FlexibleShape {
  target::MatrixShape granularity;  ///< M, N and K granularities and the component types
  bool workgroup = false;           ///< workgroup scope (else subgroup scope)
  uint32_t invocations = 0;         ///< workgroup scope: the workgroup size it holds for
  std::string str() const;          ///< "32x16x16:f16*f16+f32 workgroup@128"
};

/// Whether TESSERA_COOPMAT2 asks for VK_NV_cooperative_matrix2 ("1"; unset, empty or "0": no;
/// anything else is an Argument error).
bool coopmat2_requested_by_env();

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
  /// VK_NV_cooperative_matrix2's limits and flexible shapes (zero and empty without it).
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV p_coopmat2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  std::vector<FlexibleShape> flexible_shapes;
  /// Asked to enable VK_NV_cooperative_matrix2 (VulkanOptions::coopmat2, TESSERA_COOPMAT2=1).
  /// Off by default: under it the driver reserves shared memory for workgroup-scope matrices, so
  /// the target's shared-memory limit drops and kernels that fit today may no longer load.
  bool coopmat2_requested = false;
  /// Multiprocessors (0: the driver does not say): VK_NV_shader_sm_builtins' shaderSMCount,
  /// VK_AMD_shader_core_properties2's activeComputeUnitCount. DeviceInfo::multiprocessors.
  uint32_t multiprocessors = 0;
  uint32_t queue_family = 0;
  uint32_t timestamp_valid_bits = 0;
  /// The requirements this device misses ("bufferDeviceAddress, timelineSemaphore"); empty when
  /// it is usable.
  std::string missing;

  std::string device_name() const { return props.deviceName; }
  bool has_extension(const char* name) const;
  /// The device offers what Tessera's coopmat2 plans use: the extension with workgroup scope,
  /// flexible dimensions and tensor addressing, on top of KHR cooperative matrices.
  bool coopmat2_usable() const;
  /// Requested and usable: the VkDevice enables it and the target has Cap::CooperativeMatrix2.
  bool coopmat2_enabled() const { return coopmat2_requested && coopmat2_usable(); }
  /// The shared memory a kernel may use: maxComputeSharedMemorySize, less the driver's
  /// reservation for workgroup-scope matrices while coopmat2 is enabled.
  uint32_t shared_bytes_limit() const;
  /// What `tessera devices --verbose` says about VK_NV_cooperative_matrix2: whether it is on,
  /// its features, limits and flexible shapes (empty when the device lacks the extension).
  std::string coopmat2_report() const;
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
