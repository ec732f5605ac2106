/// \file The internal fill and copy kernels, from the SPIR-V that glslc made of
/// runtime/vulkan/shaders/ at build time (see runtime/vulkan/shaders.cmake).
#include "runtime/vulkan/device.h"

namespace tessera::rt::vk {
namespace {

constexpr uint32_t kFill[] = {
#include "vulkan_shaders/fill.inc"
};
constexpr uint32_t kCopyVec4[] = {
#include "vulkan_shaders/copy_vec4.inc"
};
constexpr uint32_t kCopyU32[] = {
#include "vulkan_shaders/copy_u32.inc"
};

std::shared_ptr<VulkanKernel> make(const std::shared_ptr<Context>& ctx, VkPipelineCache cache,
                                   const char* name, std::span<const uint32_t> words,
                                   uint32_t param_bytes) {
  target::Artifact a;
  a.kernel = "main";  // glslc's entry point
  a.isa = "spirv";
  a.spirv.assign(words.begin(), words.end());
  a.param_bytes = param_bytes;
  a.threads = 256;
  a.subgroup = 0;  // any subgroup size
  auto k = std::make_shared<VulkanKernel>(ctx, cache, a);
  k->name = name;
  return k;
}

}  // namespace

std::shared_ptr<const UtilityKernels> make_utility_kernels(const std::shared_ptr<Context>& ctx,
                                                           VkPipelineCache cache) {
  auto u = std::make_shared<UtilityKernels>();
  u->fill = make(ctx, cache, "tessera.fill", kFill, 80);
  u->copy_vec4 = make(ctx, cache, "tessera.copy", kCopyVec4, 24);
  u->copy_u32 = make(ctx, cache, "tessera.copy", kCopyU32, 24);
  return u;
}

}  // namespace tessera::rt::vk
