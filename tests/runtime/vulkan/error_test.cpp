// \file Errors: kernels over the device's limits, VkResult messages, validation messages failing
// the next synchronizing call, and a lost device failing its pending work while others go on.
#include "runtime/vulkan/loader.h"
#include "vk_test.h"

using tessera::Buffer;
using tessera::ErrorKind;
using tessera::Grid;
using vktest::ParamBlock;

namespace {

/// Runs `fn`, expecting a tessera::Error of `kind` whose message contains every one of `parts`.
template <class Fn>
void expect_error(Fn fn, ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    fn();
    FAIL("expected an error");
  } catch (const tessera::Error& e) {
    std::string what = e.what();
    CAPTURE(what);
    CHECK(e.kind() == kind);
    for (const std::string& p : parts) CHECK(what.find(p) != std::string::npos);
  }
}

std::string empty_kernel_glsl(uint32_t threads, const std::string& extra = "") {
  return std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(threads) +
         ") in;\n" + extra + "void main() {}\n";
}

}  // namespace

TEST_CASE("vulkan: a kernel needing more shared memory than the device has is Unsupported") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t threads = static_cast<uint32_t>(vk.target().subgroup_size);
  const int64_t limit = vk.target().max_shared_bytes;
  const int64_t floats = limit / 4 + 16;
  std::string glsl = std::string(vktest::kPrelude) +
                     "layout(local_size_x = " + std::to_string(threads) +
                     ") in;\nshared float tile[" + std::to_string(floats) +
                     "];\nlayout(push_constant) uniform P { uvec2 out_; } p;\n"
                     "void main() { tile[gl_LocalInvocationID.x] = 1.0; barrier(); "
                     "Floats(p.out_).v[0] = tile[0]; }\n";
  ParamBlock block;
  block.u32(0).u32(0);
  auto artifact =
      vktest::make_artifact(vk, glsl, "softmax_kernel", block, threads, /*with_grid=*/false);
  artifact.shared_bytes = static_cast<uint64_t>(floats) * 4;
  expect_error(
      [&] { vk.load(artifact); }, ErrorKind::Unsupported,
      {"softmax_kernel", std::to_string(floats * 4), std::to_string(limit), "shared memory"});
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE(
    "vulkan: artifacts beyond the device's threads, subgroups or push constants are Unsupported") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const uint32_t sg = static_cast<uint32_t>(vk.target().subgroup_size);
  ParamBlock block;
  block.u32(1);
  auto base = vktest::make_artifact(vk, empty_kernel_glsl(sg), "limits_kernel", block, sg, false);

  auto too_many_threads = base;
  too_many_threads.threads = static_cast<uint32_t>(vk.target().max_threads) * 2;
  expect_error([&] { vk.load(too_many_threads); }, ErrorKind::Unsupported,
               {"limits_kernel", "threads"});

  auto odd_subgroup = base;
  odd_subgroup.subgroup = 3;
  expect_error([&] { vk.load(odd_subgroup); }, ErrorKind::Unsupported,
               {"limits_kernel", "subgroup size 3"});

  auto big_block = base;
  big_block.param_bytes = static_cast<uint32_t>(vk.target().push_constant_bytes) + 8;
  expect_error([&] { vk.load(big_block); }, ErrorKind::Unsupported,
               {"limits_kernel", "push constants"});

  auto ptx = base;
  ptx.isa = "ptx";
  expect_error([&] { vk.load(ptx); }, ErrorKind::Unsupported, {"limits_kernel", "ptx"});

  // A grid over the workgroup counts, for a kernel without grid words to fold it.
  auto kernel = vk.load(base);
  const uint32_t max_x = vk.facts().props.limits.maxComputeWorkGroupCount[0];
  expect_error([&] { vktest::launch(vk, kernel, Grid(uint64_t{max_x} + 1), block, {}); },
               ErrorKind::Unsupported, {"limits_kernel", "exceeds the workgroup counts"});
  dev.synchronize();
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: a failed call names the call, the VkResult and the kernel") {
  std::string m = tessera::rt::vk::describe_failure(
      "vkCreateComputePipelines", VK_ERROR_OUT_OF_DEVICE_MEMORY, "softmax_kernel");
  CHECK(m ==
        "vkCreateComputePipelines failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2) in kernel "
        "softmax_kernel");
  CHECK(tessera::rt::vk::error_kind(VK_ERROR_DEVICE_LOST) == ErrorKind::DeviceFault);
  CHECK(tessera::rt::vk::error_kind(VK_ERROR_OUT_OF_HOST_MEMORY) == ErrorKind::OutOfMemory);
  CHECK(tessera::rt::vk::error_kind(VK_ERROR_INITIALIZATION_FAILED) == ErrorKind::Runtime);
  expect_error([] { tessera::rt::vk::check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit2", "k"); },
               ErrorKind::DeviceFault,
               {"vkQueueSubmit2 failed: VK_ERROR_DEVICE_LOST (-4) in kernel k"});
}

TEST_CASE("vulkan: a validation message fails the next synchronizing call, then can be cleared") {
  VKTEST_DEVICE(dev);
  auto vk = tessera::rt::vk::open_device(0);
  REQUIRE(vk->validation_enabled());
  vk->clear_validation_messages();
  const uint32_t sg = static_cast<uint32_t>(vk->target().subgroup_size);
  // The shader reads 16 bytes of push constants; the artifact declares a 4-byte block, so the
  // pipeline layout's range does not cover the shader's: the layer reports it.
  ParamBlock block;
  block.u32(0);
  std::string glsl =
      std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(sg) + R"() in;
layout(push_constant) uniform P { uvec4 v; } p;
void main() { Uints(p.v.xy).v[0] = p.v.w; }  // never launched
)";
  auto artifact = vktest::make_artifact(*vk, glsl, "bad_layout", block, sg, false);
  vk->load(artifact);
  auto messages = vk->validation_messages();
  REQUIRE(!messages.empty());
  expect_error([&] { vk->synchronize(); }, ErrorKind::Internal,
               {"Vulkan validation", "VkComputePipelineCreateInfo-layout"});
  // Reported once: the next synchronize is clean; the messages stay readable until cleared.
  vk->synchronize();
  CHECK(vk->validation_messages() == messages);
  vk->clear_validation_messages();
  CHECK(vk->validation_messages().empty());
}

TEST_CASE("vulkan: a lost device fails its pending work naming the kernels, other devices go on") {
  VKTEST_DEVICE(dev);
  auto lost = tessera::rt::vk::open_device(0);
  const uint32_t sg = static_cast<uint32_t>(lost->target().subgroup_size);
  ParamBlock block;
  block.u32(0);
  auto kernel = lost->load(
      vktest::make_artifact(*lost, empty_kernel_glsl(sg), "doomed_kernel", block, sg, false));
  auto alloc = lost->allocate(1024);
  auto stream = lost->default_stream();
  stream->launch(kernel, Grid(4), block.user_bytes(), {alloc});
  lost->inject_device_lost();
  expect_error([&] { stream->synchronize(); }, ErrorKind::DeviceFault,
               {"VK_ERROR_DEVICE_LOST", "doomed_kernel", "vulkan:0"});
  // Every later call on that device fails with the same cause.
  expect_error([&] { lost->allocate(16); }, ErrorKind::DeviceFault, {"lost", "doomed_kernel"});
  expect_error([&] { stream->launch(kernel, Grid(1), block.user_bytes(), {}); },
               ErrorKind::DeviceFault, {"lost"});
  std::vector<std::byte> host(16);
  expect_error([&] { stream->download(alloc, 0, host.data(), 16); }, ErrorKind::DeviceFault,
               {"lost"});
  expect_error([&] { lost->synchronize(); }, ErrorKind::DeviceFault, {"lost"});
  // The registry's vulkan:0 (another VkDevice) and the host keep working.
  Buffer<int> b = dev.upload(std::vector<int>{4, 5, 6});
  CHECK(b.download() == std::vector<int>{4, 5, 6});
  auto host_dev = tessera::Device::open("host");
  CHECK(host_dev.upload(std::vector<int>{7}).download() == std::vector<int>{7});
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
