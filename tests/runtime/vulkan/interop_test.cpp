// \file Interop on a Vulkan device: a VkBuffer the test makes itself on Tessera's VkDevice (with
// its own Vulkan calls, as another library would) wrapped with wrap_vk_buffer, used by a kernel
// and by transfers; native handles out; the errors for a buffer without a device address.
#include <dlfcn.h>

#include "runtime/dlpack.h"
#include "vk_test.h"
#include "tests/support/errors.h"

namespace tl = tessera::tl;
using tessera::ErrorKind;

namespace {

using tessera::test::error_of;

void scale_add(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, 2.0f * tl::load(x + offs, mask) + 1.0f, mask);
}

/// A host-visible VkBuffer with a device address, made through the loader as a user would.
struct UserBuffer {
  PFN_vkDestroyBuffer destroy_buffer = nullptr;
  PFN_vkFreeMemory free_memory = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceAddress address = 0;
  float* host = nullptr;

  UserBuffer(const tessera::Device& dev, VkDeviceSize bytes) {
    void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    auto instance = reinterpret_cast<VkInstance>(dev.vk_instance());
    auto physical = reinterpret_cast<VkPhysicalDevice>(dev.vk_physical_device());
    device = reinterpret_cast<VkDevice>(dev.vk_device());
    REQUIRE(instance);
    REQUIRE(physical);
    REQUIRE(device);
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
    auto memory_props = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
        gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
#define LOAD(fn) auto fn = reinterpret_cast<PFN_##fn>(gdpa(device, #fn))
    LOAD(vkCreateBuffer);
    LOAD(vkGetBufferMemoryRequirements);
    LOAD(vkAllocateMemory);
    LOAD(vkBindBufferMemory);
    LOAD(vkMapMemory);
    LOAD(vkGetBufferDeviceAddress);
#undef LOAD
    destroy_buffer = reinterpret_cast<PFN_vkDestroyBuffer>(gdpa(device, "vkDestroyBuffer"));
    free_memory = reinterpret_cast<PFN_vkFreeMemory>(gdpa(device, "vkFreeMemory"));

    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = bytes;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    REQUIRE(vkCreateBuffer(device, &info, nullptr, &buffer) == VK_SUCCESS);
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device, buffer, &req);
    VkPhysicalDeviceMemoryProperties props{};
    memory_props(physical, &props);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < props.memoryTypeCount && type == UINT32_MAX; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want)
        type = i;
    REQUIRE(type != UINT32_MAX);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    REQUIRE(vkAllocateMemory(device, &alloc, nullptr, &memory) == VK_SUCCESS);
    REQUIRE(vkBindBufferMemory(device, buffer, memory, 0) == VK_SUCCESS);
    void* mapped = nullptr;
    REQUIRE(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped) == VK_SUCCESS);
    host = static_cast<float*>(mapped);
    VkBufferDeviceAddressInfo where{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    where.buffer = buffer;
    address = vkGetBufferDeviceAddress(device, &where);
  }
  ~UserBuffer() {
    destroy_buffer(device, buffer, nullptr);
    free_memory(device, memory, nullptr);  // unmaps too
  }
  uint64_t handle() const { return reinterpret_cast<uint64_t>(buffer); }
};

}  // namespace

TEST_CASE("vulkan interop: a kernel and transfers use a wrapped VkBuffer the caller made") {
  VKTEST_DEVICE(dev);
  const int n = 200;
  UserBuffer user(dev, 2 * n * sizeof(float));
  REQUIRE(user.address != 0);
  for (int i = 0; i < 2 * n; ++i) user.host[i] = static_cast<float>(i);
  {
    // x is the first half of the VkBuffer, out the second (wrapped at a byte offset).
    auto x = dev.wrap_vk_buffer<float>(user.handle(), user.address, n);
    auto out = dev.wrap_vk_buffer<float>(user.handle(), user.address, n, n * sizeof(float));
    CHECK(x.address() == user.address);
    CHECK(out.address() == user.address + n * sizeof(float));
    CHECK(out.vk_buffer() == user.handle());
    CHECK(out.vk_buffer_offset() == n * sizeof(float));
    auto k = TESSERA_KERNEL(scale_add, x, out, n, BLOCK);
    k[{tessera::cdiv(n, 64)}](x, out, n, 64);
    auto got = out.download();  // vkCmdCopyBuffer from the caller's VkBuffer
    CHECK(got[0] == 1.0f);
    CHECK(got[199] == 399.0f);
    dev.synchronize();
    CHECK(user.host[n + 7] == 15.0f);  // the caller sees it in its own mapping
    x.slice(1, 2).upload(std::vector<float>{-1.0f, -2.0f});
    x.slice(3, 1).fill(9.0f);
    out.slice(0, 4).copy_from(x.slice(0, 4));
    CHECK(out.slice(0, 5).download() == std::vector<float>{0.0f, -1.0f, -2.0f, 9.0f, 9.0f});
    dev.synchronize();
  }  // Tessera's buffers go before the caller destroys the VkBuffer
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan interop: native handles, and errors for what a vulkan device lacks") {
  VKTEST_DEVICE(dev);
  CHECK(dev.vk_instance() != 0);
  CHECK(dev.vk_physical_device() != 0);
  CHECK(dev.vk_device() != 0);
  CHECK(dev.vk_queue() != 0);
  auto b = dev.alloc<float>(16);
  CHECK(b.vk_buffer() != 0);
  CHECK(b.vk_buffer_offset() % 256 == 0);  // the suballocator's alignment
  CHECK(b.slice(2, 4).vk_buffer_offset() == b.vk_buffer_offset() + 8);
  CHECK(error_of([&] { dev.cu_context(); }, ErrorKind::Argument) ==
        "CUcontext: device 'vulkan:0' (vulkan) has none; it belongs to cuda devices");
  CHECK(error_of([&] { b.cu_deviceptr(); }, ErrorKind::Argument) ==
        "cu_deviceptr: the buffer is on device 'vulkan:0' (vulkan), not a cuda device");
  CHECK(error_of([&] { dev.create_stream().cu_stream(); }, ErrorKind::Argument) ==
        "native stream handle: device 'vulkan:0' (vulkan) has no native stream (CUstream belongs "
        "to cuda devices)");
  CHECK(error_of([&] { dev.wrap_vk_buffer<float>(0, 0x1000, 4); }, ErrorKind::Argument) ==
        "wrap_vk_buffer on vulkan:0: the VkBuffer is null");
  CHECK(error_of([&] { dev.wrap_vk_buffer<float>(0x42, 0, 4); }, ErrorKind::Argument) ==
        "wrap_vk_buffer on vulkan:0: VkBuffer 0x42 has no device address (0): create it with "
        "VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT and pass vkGetBufferDeviceAddress's result");
  CHECK(error_of([&] { dev.wrap_vk_buffer<float>(0x42, ~uint64_t{0} - 8, 4); }, ErrorKind::Argument)
            .find("overflow the address space") != std::string::npos);
  CHECK(error_of([&] { dev.wrap_cu_stream(0x1234); }, ErrorKind::Argument) ==
        "wrap_cu_stream: device 'vulkan:0' (vulkan) is not a cuda device");
#ifdef TESSERA_HAS_DLPACK
  CHECK(error_of([&] { tessera::to_dlpack(b); }, ErrorKind::Unsupported)
            .find("DLPack's kDLVulkan gives no buffer device address") != std::string::npos);
#endif
  dev.reset();  // nothing to reset on Vulkan
  b.fill(2.0f);
  CHECK(b.download() == std::vector<float>(16, 2.0f));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
