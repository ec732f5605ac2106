/// \file Probing physical devices: properties, features, the queue family, cooperative-matrix
/// shapes, the requirement check and the target description filled from the live device.
#include "runtime/vulkan/physical.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tessera::rt::vk {
namespace {

using target::Cap;

std::optional<ir::DType> component_dtype(uint32_t type) {
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_KHR:
      return ir::DType::f16;
    case VK_COMPONENT_TYPE_FLOAT32_KHR:
      return ir::DType::f32;
    case VK_COMPONENT_TYPE_FLOAT64_KHR:
      return ir::DType::f64;
    case VK_COMPONENT_TYPE_SINT8_KHR:
      return ir::DType::i8;
    case VK_COMPONENT_TYPE_SINT16_KHR:
      return ir::DType::i16;
    case VK_COMPONENT_TYPE_SINT32_KHR:
      return ir::DType::i32;
    case VK_COMPONENT_TYPE_SINT64_KHR:
      return ir::DType::i64;
    case VK_COMPONENT_TYPE_UINT8_KHR:
      return ir::DType::u8;
    case VK_COMPONENT_TYPE_UINT16_KHR:
      return ir::DType::u16;
    case VK_COMPONENT_TYPE_UINT32_KHR:
      return ir::DType::u32;
    case VK_COMPONENT_TYPE_UINT64_KHR:
      return ir::DType::u64;
    case TESSERA_VK_COMPONENT_TYPE_BFLOAT16:
      return ir::DType::bf16;
    default:
      return std::nullopt;
  }
}

/// Subgroup-scope, non-saturating shapes whose component types Tessera knows.
std::vector<target::MatrixShape> matrix_shapes(const Instance& instance, VkPhysicalDevice device) {
  auto query = instance.fns().vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  if (!query) return {};
  uint32_t count = 0;
  if (query(device, &count, nullptr) != VK_SUCCESS) return {};
  std::vector<VkCooperativeMatrixPropertiesKHR> props(
      count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
  if (query(device, &count, props.data()) < 0) return {};
  std::vector<target::MatrixShape> out;
  for (uint32_t i = 0; i < count; ++i) {
    const auto& p = props[i];
    auto a = component_dtype(p.AType), b = component_dtype(p.BType),
         c = component_dtype(p.ResultType);
    if (p.scope != VK_SCOPE_SUBGROUP_KHR || p.saturatingAccumulation || !a || !b || !c) continue;
    target::MatrixShape s{static_cast<int>(p.MSize),
                          static_cast<int>(p.NSize),
                          static_cast<int>(p.KSize),
                          *a,
                          *b,
                          *c};
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

/// VK_NV_cooperative_matrix2's flexible-dimension shapes whose component types Tessera knows
/// (non-saturating; subgroup or workgroup scope).
std::vector<FlexibleShape> flexible_shapes(const Instance& instance, VkPhysicalDevice device) {
  auto query = instance.fns().vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV;
  if (!query) return {};
  uint32_t count = 0;
  if (query(device, &count, nullptr) != VK_SUCCESS) return {};
  std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> props(
      count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
  if (query(device, &count, props.data()) < 0) return {};
  std::vector<FlexibleShape> out;
  for (uint32_t i = 0; i < count; ++i) {
    const auto& p = props[i];
    auto a = component_dtype(p.AType), b = component_dtype(p.BType),
         c = component_dtype(p.ResultType);
    const bool workgroup = p.scope == VK_SCOPE_WORKGROUP_KHR;
    if ((!workgroup && p.scope != VK_SCOPE_SUBGROUP_KHR) || p.saturatingAccumulation || !a || !b ||
        !c)
      continue;
    FlexibleShape f;
    f.granularity = {static_cast<int>(p.MGranularity),
                     static_cast<int>(p.NGranularity),
                     static_cast<int>(p.KGranularity),
                     *a,
                     *b,
                     *c};
    f.workgroup = workgroup;
    f.invocations = workgroup ? p.workgroupInvocations : 0;
    if (std::find_if(out.begin(), out.end(), [&](const FlexibleShape& o) {
          return o.granularity == f.granularity && o.workgroup == f.workgroup &&
                 o.invocations == f.invocations;
        }) == out.end())
      out.push_back(f);
  }
  return out;
}

/// The compute queue family with the most timestamp bits (the lowest index on a tie), or -1.
int pick_queue_family(const Instance& instance, VkPhysicalDevice device, uint32_t* valid_bits) {
  uint32_t count = 0;
  instance.fns().vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  instance.fns().vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  int best = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    if (best < 0 || families[i].timestampValidBits > families[best].timestampValidBits)
      best = static_cast<int>(i);
  }
  if (best >= 0) *valid_bits = families[best].timestampValidBits;
  return best;
}

void require(std::string* missing, bool ok, const char* what) {
  if (ok) return;
  if (!missing->empty()) *missing += ", ";
  *missing += what;
}

/// Buffer and workgroup-memory float atomics where supported (no image atomics: Tessera has no
/// images, and their features have further requirements).
void enable_float_atomics(const FeatureSet& s, FeatureSet& e) {
  e.with_atomic_float = s.with_atomic_float;
  auto& af = e.atomic_float;
  af.shaderBufferFloat32Atomics = s.atomic_float.shaderBufferFloat32Atomics;
  af.shaderBufferFloat32AtomicAdd = s.atomic_float.shaderBufferFloat32AtomicAdd;
  af.shaderBufferFloat64Atomics = s.atomic_float.shaderBufferFloat64Atomics;
  af.shaderBufferFloat64AtomicAdd = s.atomic_float.shaderBufferFloat64AtomicAdd;
  af.shaderSharedFloat32Atomics = s.atomic_float.shaderSharedFloat32Atomics;
  af.shaderSharedFloat32AtomicAdd = s.atomic_float.shaderSharedFloat32AtomicAdd;
  af.shaderSharedFloat64Atomics = s.atomic_float.shaderSharedFloat64Atomics;
  af.shaderSharedFloat64AtomicAdd = s.atomic_float.shaderSharedFloat64AtomicAdd;
  e.with_atomic_float2 = s.with_atomic_float2;
  auto& af2 = e.atomic_float2;
  af2.shaderBufferFloat16Atomics = s.atomic_float2.shaderBufferFloat16Atomics;
  af2.shaderBufferFloat16AtomicAdd = s.atomic_float2.shaderBufferFloat16AtomicAdd;
  af2.shaderBufferFloat16AtomicMinMax = s.atomic_float2.shaderBufferFloat16AtomicMinMax;
  af2.shaderBufferFloat32AtomicMinMax = s.atomic_float2.shaderBufferFloat32AtomicMinMax;
  af2.shaderBufferFloat64AtomicMinMax = s.atomic_float2.shaderBufferFloat64AtomicMinMax;
  af2.shaderSharedFloat16Atomics = s.atomic_float2.shaderSharedFloat16Atomics;
  af2.shaderSharedFloat16AtomicAdd = s.atomic_float2.shaderSharedFloat16AtomicAdd;
  af2.shaderSharedFloat16AtomicMinMax = s.atomic_float2.shaderSharedFloat16AtomicMinMax;
  af2.shaderSharedFloat32AtomicMinMax = s.atomic_float2.shaderSharedFloat32AtomicMinMax;
  af2.shaderSharedFloat64AtomicMinMax = s.atomic_float2.shaderSharedFloat64AtomicMinMax;
}

}  // namespace

VkPhysicalDeviceFeatures2* FeatureSet::chain() {
  core.pNext = &v11;
  v11.pNext = &v12;
  v12.pNext = &v13;
  void** tail = &v13.pNext;
  *tail = nullptr;
  auto link = [&](bool on, auto& s) {
    if (!on) return;
    *tail = &s;
    tail = &s.pNext;
    *tail = nullptr;
  };
  link(with_atomic_float, atomic_float);
  link(with_atomic_float2, atomic_float2);
  link(with_coopmat, coopmat);
  link(with_executables, executables);
  link(with_bfloat16, bfloat16);
  link(with_coopmat2, coopmat2);
  return &core;
}

std::string FlexibleShape::str() const {
  std::string s = granularity.str() + (workgroup ? " workgroup" : " subgroup");
  if (workgroup) s += "@" + std::to_string(invocations);
  return s;
}

bool coopmat2_requested_by_env() {
  const char* text = std::getenv("TESSERA_COOPMAT2");
  const std::string v = text ? text : "";
  if (v.empty() || v == "0") return false;
  if (v == "1") return true;
  fail(ErrorKind::Argument, "TESSERA_COOPMAT2='", v, "' is neither 0 nor 1");
}

bool PhysicalFacts::has_extension(const char* name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

int PhysicalFacts::rank() const {
  switch (props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 30;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 20;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 15;
    default:
      return 10;
  }
}

PhysicalFacts probe(const Instance& instance, VkPhysicalDevice device) {
  const InstanceFns& f = instance.fns();
  PhysicalFacts facts;
  facts.handle = device;

  uint32_t count = 0;
  f.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  f.vkEnumerateDeviceExtensionProperties(device, nullptr, &count, exts.data());
  for (uint32_t i = 0; i < count; ++i) facts.extensions.emplace_back(exts[i].extensionName);

  // VK_NV_cooperative_matrix2 came with the 1.4 headers (1.4.303 taken as the first): an older
  // validation layer reports its structs as unknown, so validated runs go without it.
  const bool coopmat2 = facts.has_extension(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME) &&
                        instance.validation_knows(VK_MAKE_API_VERSION(0, 1, 4, 303));
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &facts.p11;
  facts.p11.pNext = &facts.p12;
  facts.p12.pNext = &facts.p13;
  void** tail = &facts.p13.pNext;
  if (coopmat2) *tail = &facts.p_coopmat2, tail = &facts.p_coopmat2.pNext;
  // The multiprocessor count, where the vendor's extension tells it (a persistent kernel sizes
  // its grid by it): NVIDIA's SMs, AMD's active compute units.
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv_sms{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCoreProperties2AMD amd_cores{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  if (facts.has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME))
    *tail = &nv_sms, tail = &nv_sms.pNext;
  if (facts.has_extension(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME))
    *tail = &amd_cores, tail = &amd_cores.pNext;
  f.vkGetPhysicalDeviceProperties2(device, &props);
  facts.props = props.properties;
  facts.p11.pNext = facts.p12.pNext = facts.p13.pNext = facts.p_coopmat2.pNext = nullptr;
  facts.multiprocessors =
      nv_sms.shaderSMCount ? nv_sms.shaderSMCount : amd_cores.activeComputeUnitCount;

  std::string& missing = facts.missing;
  require(&missing, facts.props.apiVersion >= VK_API_VERSION_1_3, "Vulkan 1.3");
  if (!missing.empty()) return facts;  // the 1.2/1.3 structs below are not defined before 1.3

  FeatureSet& s = facts.supported;
  s.with_atomic_float = facts.has_extension(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  s.with_atomic_float2 = facts.has_extension(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  // VK_KHR_cooperative_matrix came with header 1.3.255: under an older validation layer (Debian
  // 12 ships 1.3.239) enabling it is itself an error, so validated runs go without it.
  s.with_coopmat = facts.has_extension(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) &&
                   instance.validation_knows(VK_MAKE_API_VERSION(0, 1, 3, 255));
  s.with_executables = facts.has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  s.with_bfloat16 = s.with_coopmat &&
                    facts.has_extension(TESSERA_VK_SHADER_BFLOAT16_EXTENSION_NAME) &&
                    instance.validation_knows(VK_MAKE_API_VERSION(0, 1, 4, 311));
  s.with_coopmat2 = s.with_coopmat && coopmat2;
  f.vkGetPhysicalDeviceFeatures2(device, s.chain());
  f.vkGetPhysicalDeviceMemoryProperties(device, &facts.memory);
  if (s.with_coopmat && s.coopmat.cooperativeMatrix) {
    facts.matrix_shapes = matrix_shapes(instance, device);
    // A bf16 shape is usable only with the shader feature that lets SPIR-V declare bf16 matrices.
    const bool bf16 = s.with_bfloat16 && s.bfloat16.shaderBFloat16Type &&
                      s.bfloat16.shaderBFloat16CooperativeMatrix;
    if (!bf16)
      std::erase_if(facts.matrix_shapes, [](const target::MatrixShape& m) {
        return m.a == ir::DType::bf16 || m.b == ir::DType::bf16;
      });
    if (s.with_coopmat2 && s.coopmat2.cooperativeMatrixFlexibleDimensions)
      facts.flexible_shapes = flexible_shapes(instance, device);
    if (!bf16)
      std::erase_if(facts.flexible_shapes, [](const FlexibleShape& m) {
        return m.granularity.a == ir::DType::bf16 || m.granularity.b == ir::DType::bf16;
      });
  }

  require(&missing, s.v12.bufferDeviceAddress, "bufferDeviceAddress");
  require(&missing, s.v13.subgroupSizeControl, "subgroupSizeControl");
  require(&missing, s.v13.computeFullSubgroups, "computeFullSubgroups");
  require(&missing, s.v12.vulkanMemoryModel, "vulkanMemoryModel");
  require(&missing, s.v12.timelineSemaphore, "timelineSemaphore");
  require(&missing, s.v13.synchronization2, "synchronization2");
  require(&missing, s.v13.maintenance4, "maintenance4");
  int family = pick_queue_family(instance, device, &facts.timestamp_valid_bits);
  require(&missing, family >= 0, "a compute queue");
  facts.queue_family = family < 0 ? 0 : static_cast<uint32_t>(family);
  return facts;
}

target::Target PhysicalFacts::target(const std::string& name) const {
  const VkPhysicalDeviceLimits& l = props.limits;
  const FeatureSet& s = supported;
  target::Target t;
  t.name = name;
  t.isa = "spirv1.6";
  // Pipelines require the subgroup size the code was lowered for; the largest one is the natural
  // warp width (32 on NVIDIA, 8 on lavapipe, 64 on AMD's wave64).
  bool required_size = (p13.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  t.subgroup_size = static_cast<int>(required_size ? p13.maxSubgroupSize : p11.subgroupSize);
  // A pipeline with a required subgroup size may use at most maxComputeWorkgroupSubgroups of
  // them (lavapipe: 32 subgroups of 8, so 256 threads).
  uint32_t by_subgroups = p13.maxComputeWorkgroupSubgroups * static_cast<uint32_t>(t.subgroup_size);
  t.max_threads = static_cast<int>(
      std::min({l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0], by_subgroups}));
  t.max_shared_bytes = shared_bytes_limit();
  t.push_constant_bytes = static_cast<int>(l.maxPushConstantsSize);
  for (int i = 0; i < 3; ++i) t.max_grid[i] = l.maxComputeWorkGroupCount[i];

  t.set(Cap::Int64, s.core.features.shaderInt64);
  t.set(Cap::Int16, s.core.features.shaderInt16 && s.v11.storageBuffer16BitAccess);
  t.set(Cap::Int8, s.v12.shaderInt8 && s.v12.storageBuffer8BitAccess);
  t.set(Cap::Fp16, s.v12.shaderFloat16 && s.v11.storageBuffer16BitAccess);
  t.set(Cap::Fp64, s.core.features.shaderFloat64);
  bool compute_ops = (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  VkSubgroupFeatureFlags ops = compute_ops ? p11.subgroupSupportedOperations : 0;
  t.set(Cap::SubgroupShuffle, (ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                                  (ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT));
  t.set(Cap::FloatAtomicAdd, s.with_atomic_float && s.atomic_float.shaderBufferFloat32AtomicAdd);
  t.set(Cap::Int64Atomics, s.v12.shaderBufferInt64Atomics);
  t.set(Cap::BufferDeviceAddress, s.v12.bufferDeviceAddress);
  t.set(Cap::CooperativeMatrix, !matrix_shapes.empty());
  t.set(Cap::CooperativeMatrix2, coopmat2_enabled());
  // Shaders keep inf, NaN and -0 of every float width the device computes in.
  t.set(Cap::InfNanPreserve, p12.shaderSignedZeroInfNanPreserveFloat32 &&
                                 (!t.has(Cap::Fp16) || p12.shaderSignedZeroInfNanPreserveFloat16) &&
                                 (!t.has(Cap::Fp64) || p12.shaderSignedZeroInfNanPreserveFloat64));
  t.set(Cap::DenormPreserve32, p12.shaderDenormPreserveFloat32);
  // GLSL.std.450 Fma may round twice (the Vulkan spec allows it): NVIDIA's driver was measured to
  // fuse it, Mesa's lavapipe to round twice.
  t.set(Cap::FusedFma, props.vendorID == 0x10DE);
  // GLSL.std.450 FMin/FMax leave NaN operands and the order of -0 and +0 undefined: NVIDIA's
  // driver was measured (conformance on an H200) to return the other operand for a NaN and to
  // order -0 below +0, so min/max need no compare-and-select sequence there.
  t.set(Cap::IeeeMinMax, props.vendorID == 0x10DE);
  // llvmpipe ends an invocation's loops after 65535 iterations in all (gallivm's
  // LP_MAX_TGSI_LOOP_ITERATIONS), silently: kernels count and report it instead.
  if (p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) t.loop_limit = 65535;
  // Driver bugs the SPIR-V works around (target.h says what each gets wrong and how it was found).
  t.set(target::Quirk::NarrowNegateUnwrapped, p12.driverID == VK_DRIVER_ID_NVIDIA_PROPRIETARY);
  t.set(target::Quirk::NarrowFloatUnrounded, p12.driverID == VK_DRIVER_ID_NVIDIA_PROPRIETARY);
  t.set(target::Quirk::SpecialConstantFolding, p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE);
  t.set(target::Quirk::WideCompareFolding, p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE);
  t.set(target::Quirk::WideRoundUnrounded, p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE);
  t.matrix_shapes = matrix_shapes;
  // The workgroup-scope flexible shapes, which only a coopmat2 target's dot plan may use.
  if (coopmat2_enabled())
    for (const FlexibleShape& f : flexible_shapes)
      if (f.workgroup)
        t.workgroup_shapes.push_back({f.granularity, static_cast<int>(f.invocations)});
  return t;
}

FeatureSet PhysicalFacts::enabled_features() const {
  const FeatureSet& s = supported;
  FeatureSet e;
  e.core.features.shaderInt64 = s.core.features.shaderInt64;
  e.core.features.shaderInt16 = s.core.features.shaderInt16;
  e.core.features.shaderFloat64 = s.core.features.shaderFloat64;
  e.v11.storageBuffer16BitAccess = s.v11.storageBuffer16BitAccess;
  e.v11.storagePushConstant16 = s.v11.storagePushConstant16;  // 16-bit scalars in the param block
  e.v12.bufferDeviceAddress = VK_TRUE;
  e.v12.timelineSemaphore = VK_TRUE;
  e.v12.hostQueryReset = s.v12.hostQueryReset;  // events reset their slots outside command buffers
  e.v12.vulkanMemoryModel = VK_TRUE;
  e.v12.vulkanMemoryModelDeviceScope = s.v12.vulkanMemoryModelDeviceScope;
  e.v12.shaderInt8 = s.v12.shaderInt8;
  e.v12.shaderFloat16 = s.v12.shaderFloat16;
  e.v12.storageBuffer8BitAccess = s.v12.storageBuffer8BitAccess;
  e.v12.storagePushConstant8 = s.v12.storagePushConstant8;
  e.v12.shaderSubgroupExtendedTypes =
      s.v12.shaderSubgroupExtendedTypes;  // 8/16/64-bit subgroup ops
  e.v12.shaderBufferInt64Atomics = s.v12.shaderBufferInt64Atomics;
  e.v12.shaderSharedInt64Atomics = s.v12.shaderSharedInt64Atomics;
  e.v13.subgroupSizeControl = VK_TRUE;
  e.v13.computeFullSubgroups = VK_TRUE;
  e.v13.synchronization2 = VK_TRUE;
  e.v13.maintenance4 = VK_TRUE;  // glslc's SPIR-V 1.6 uses LocalSizeId
  e.v13.shaderIntegerDotProduct = s.v13.shaderIntegerDotProduct;
  enable_float_atomics(s, e);
  e.with_coopmat = s.with_coopmat && s.coopmat.cooperativeMatrix;
  e.coopmat.cooperativeMatrix = e.with_coopmat;
  e.with_executables = s.with_executables && s.executables.pipelineExecutableInfo;
  e.executables.pipelineExecutableInfo = e.with_executables;
  e.with_bfloat16 = e.with_coopmat && s.with_bfloat16 && s.bfloat16.shaderBFloat16Type &&
                    s.bfloat16.shaderBFloat16CooperativeMatrix;
  e.bfloat16.shaderBFloat16Type = e.with_bfloat16;
  e.bfloat16.shaderBFloat16CooperativeMatrix = e.with_bfloat16;
  // Only the features the coopmat2 plans use: each one enabled may cost the driver something.
  e.with_coopmat2 = e.with_coopmat && coopmat2_enabled();
  e.coopmat2.cooperativeMatrixWorkgroupScope = e.with_coopmat2;
  e.coopmat2.cooperativeMatrixFlexibleDimensions = e.with_coopmat2;
  e.coopmat2.cooperativeMatrixTensorAddressing = e.with_coopmat2;
  return e;
}

bool PhysicalFacts::coopmat2_usable() const {
  const FeatureSet& s = supported;
  return s.with_coopmat && s.coopmat.cooperativeMatrix && s.with_coopmat2 &&
         s.coopmat2.cooperativeMatrixWorkgroupScope &&
         s.coopmat2.cooperativeMatrixFlexibleDimensions &&
         s.coopmat2.cooperativeMatrixTensorAddressing;
}

uint32_t PhysicalFacts::shared_bytes_limit() const {
  const uint32_t all = props.limits.maxComputeSharedMemorySize;
  if (!coopmat2_enabled()) return all;
  return all - std::min(all, p_coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory);
}

std::string PhysicalFacts::coopmat2_report() const {
  if (!has_extension(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) return "";
  const auto& c = supported.coopmat2;
  std::string out = "VK_NV_cooperative_matrix2: ";
  if (coopmat2_enabled())
    out += "on";
  else if (!supported.with_coopmat2)
    out +=
        "off (not queried: KHR cooperative matrices off, or a validation layer older than "
        "1.4.303)";
  else if (!coopmat2_usable())
    out += "off (lacks workgroup scope, flexible dimensions or tensor addressing)";
  else
    out += "off (TESSERA_COOPMAT2=1 enables it)";
  if (!supported.with_coopmat2) return out;
  std::string features;
  auto feature = [&](VkBool32 on, const char* name) {
    if (on) features += std::string(features.empty() ? "" : " ") + name;
  };
  feature(c.cooperativeMatrixWorkgroupScope, "workgroup_scope");
  feature(c.cooperativeMatrixFlexibleDimensions, "flexible_dimensions");
  feature(c.cooperativeMatrixReductions, "reductions");
  feature(c.cooperativeMatrixConversions, "conversions");
  feature(c.cooperativeMatrixPerElementOperations, "per_element_operations");
  feature(c.cooperativeMatrixTensorAddressing, "tensor_addressing");
  feature(c.cooperativeMatrixBlockLoads, "block_loads");
  const auto& p = p_coopmat2;
  out += "\n  features: " + (features.empty() ? std::string("none") : features);
  out += "\n  workgroup scope up to " +
         std::to_string(p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize) +
         " invocations, dimensions up to " +
         std::to_string(p.cooperativeMatrixFlexibleDimensionsMaxDimension) + ", " +
         std::to_string(p.cooperativeMatrixWorkgroupScopeReservedSharedMemory) +
         " bytes of shared memory reserved";
  for (const FlexibleShape& f : flexible_shapes) out += "\n  flexible shape " + f.str();
  return out;
}

std::vector<const char*> PhysicalFacts::enabled_extensions() const {
  std::vector<const char*> out;
  if (supported.with_atomic_float) out.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (supported.with_atomic_float2) out.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_2_EXTENSION_NAME);
  if (supported.with_coopmat && supported.coopmat.cooperativeMatrix)
    out.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (enabled_features().with_bfloat16) out.push_back(TESSERA_VK_SHADER_BFLOAT16_EXTENSION_NAME);
  if (coopmat2_enabled()) out.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  if (supported.with_executables && supported.executables.pipelineExecutableInfo)
    out.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  return out;
}

}  // namespace tessera::rt::vk
