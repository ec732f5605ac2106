// \file Vulkan devices in the device list: names, ranks, order, and the target description filled
// from the live device (lavapipe's known limits when it is the device).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "core/target/target.h"
#include "vk_test.h"

using tessera::Device;
using tessera::target::Cap;

namespace {

/// When this test binary runs with TESSERA_VKTEST_LIST_DEVICES=1 it prints the device list and
/// exits before doctest starts: the child process of the driver-less test below.
const bool kListDevicesAndExit = [] {
  if (!std::getenv("TESSERA_VKTEST_LIST_DEVICES")) return false;
  auto listing = Device::enumerate();
  for (const auto& d : listing.devices) std::printf("device %s\n", d.name.c_str());
  for (const auto& u : listing.unavailable) std::printf("%s\n", u.c_str());
  std::fflush(stdout);
  _exit(0);
}();

}  // namespace

TEST_CASE("vulkan: without a Vulkan driver no vulkan device is listed and the list says why") {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  self[n] = '\0';
  // Both spellings of the loader's driver list, pointing at a driver that does not exist.
  std::string cmd =
      std::string("TESSERA_VKTEST_LIST_DEVICES=1 VK_DRIVER_FILES=/nonexistent/icd.json ") +
      "VK_ICD_FILENAMES=/nonexistent/icd.json '" + self + "' 2>/dev/null";
  FILE* child = popen(cmd.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string out;
  std::array<char, 512> buf;
  while (size_t got = std::fread(buf.data(), 1, buf.size(), child)) out.append(buf.data(), got);
  CHECK(pclose(child) == 0);
  CAPTURE(out);
  CHECK(out.find("device host") != std::string::npos);
  CHECK(out.find("device vulkan:") == std::string::npos);
  CHECK(out.find("vulkan unavailable: ") != std::string::npos);
}

TEST_CASE("vulkan: devices are listed as vulkan:N, best first, with a target description") {
  VKTEST_DEVICE(dev);
  auto listing = Device::enumerate();
  std::vector<tessera::DeviceInfo> vulkan;
  for (const auto& d : listing.devices)
    if (d.kind == "vulkan") vulkan.push_back(d);
  REQUIRE(!vulkan.empty());
  for (size_t i = 0; i < vulkan.size(); ++i) {
    CAPTURE(vulkan[i].name);
    CHECK(vulkan[i].name == "vulkan:" + std::to_string(i));
    CHECK((vulkan[i].rank == 30 || vulkan[i].rank == 20 || vulkan[i].rank == 15 ||
           vulkan[i].rank == 10));
    if (i) CHECK(vulkan[i - 1].rank >= vulkan[i].rank);
    std::string error;
    auto t = tessera::target::parse_target(vulkan[i].target, &error);
    INFO(error);
    REQUIRE(t.has_value());
    CHECK(t->name == vulkan[i].name);
    CHECK(t->isa == "spirv1.6");
    CHECK(t->str() == vulkan[i].target);
  }
  // The best device is the highest-ranked one, and every Vulkan device ranks above the host.
  CHECK(Device::best().info().rank == listing.devices.front().rank);
  CHECK(Device::best().info().rank >= vulkan.front().rank);
  CHECK(vulkan.back().rank > 0);
}

TEST_CASE("vulkan: the target description matches the live device's limits and features") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  const auto& t = vk.target();
  const auto& f = vk.facts();
  const VkPhysicalDeviceLimits& l = f.props.limits;
  CHECK(t.max_shared_bytes == l.maxComputeSharedMemorySize);
  CHECK(t.push_constant_bytes == static_cast<int>(l.maxPushConstantsSize));
  CHECK(t.max_threads ==
        static_cast<int>(std::min({l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0],
                                   f.p13.maxComputeWorkgroupSubgroups * f.p13.maxSubgroupSize})));
  for (int i = 0; i < 3; ++i) CHECK(t.max_grid[i] == l.maxComputeWorkGroupCount[i]);
  CHECK(t.subgroup_size == static_cast<int>(f.p13.maxSubgroupSize));
  CHECK((t.subgroup_size & (t.subgroup_size - 1)) == 0);
  CHECK(t.has(Cap::BufferDeviceAddress));
  CHECK(t.has(Cap::Int64) == bool(f.supported.core.features.shaderInt64));
  CHECK(t.has(Cap::Fp64) == bool(f.supported.core.features.shaderFloat64));
  CHECK(t.has(Cap::SubgroupShuffle) ==
        bool((f.p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
             (f.p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT)));
  CHECK(!t.has(Cap::MmaSync));
  CHECK(!t.has(Cap::Wgmma));
  CHECK(t.has(Cap::CooperativeMatrix) == !t.matrix_shapes.empty());
  CHECK(dev.info().target == t.str());
}

TEST_CASE("vulkan: multiprocessors come from the vendor's extension, 0 without one") {
  VKTEST_DEVICE(dev);
  const auto& f = vktest::impl(dev).facts();
  const bool nvidia = f.has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  const bool amd = f.has_extension(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME);
  CHECK(dev.info().multiprocessors == static_cast<int>(f.multiprocessors));
  if (nvidia || amd) {
    CHECK(dev.info().multiprocessors > 0);
    CHECK(dev.info().description.find(nvidia ? " SMs" : " compute units") != std::string::npos);
  } else {
    CHECK(dev.info().multiprocessors == 0);  // lavapipe among them
  }
}

TEST_CASE("vulkan: lavapipe reports subgroup 8, 32 KiB shared memory, 128-byte push constants") {
  VKTEST_DEVICE(dev);
  if (dev.info().description.find("llvmpipe") == std::string::npos) {
    vktest::report_skip("vulkan:0 is not lavapipe (" + dev.info().description + ")");
    return;
  }
  const auto& t = vktest::impl(dev).target();
  CHECK(dev.info().rank == 10);
  CHECK(t.subgroup_size == 8);
  CHECK(t.max_shared_bytes == 32768);
  CHECK(t.push_constant_bytes == 128);
  CHECK(!t.has(Cap::FusedFma));  // lavapipe rounds GLSL.std.450 Fma twice
  CHECK(!t.has(Cap::IeeeMinMax));
  CHECK(t.max_threads == 256);  // 32 subgroups of 8 with a required subgroup size
  for (int i = 0; i < 3; ++i) CHECK(t.max_grid[i] == 65535);
  for (Cap c : {Cap::Int64, Cap::Int8, Cap::Int16, Cap::Fp16, Cap::Fp64, Cap::SubgroupShuffle,
                Cap::FloatAtomicAdd, Cap::Int64Atomics, Cap::BufferDeviceAddress}) {
    CAPTURE(tessera::target::cap_name(c));
    CHECK(t.has(c));
  }
  CHECK(!t.has(Cap::CooperativeMatrix));
  // The same limits as the named profile the compiler uses without a device.
  auto profile = tessera::target::profile("vulkan-lavapipe");
  REQUIRE(profile.has_value());
  CHECK(t.subgroup_size == profile->subgroup_size);
  CHECK(t.max_shared_bytes == profile->max_shared_bytes);
  CHECK(t.caps == profile->caps);
}

TEST_CASE("vulkan: opening an unknown device names the devices that exist") {
  VKTEST_DEVICE(dev);
  try {
    Device::open("vulkan:99");
    FAIL("opening vulkan:99 should fail");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Runtime);
    std::string what = e.what();
    CHECK(what.find("vulkan:99") != std::string::npos);
    CHECK(what.find("vulkan:0") != std::string::npos);
    CHECK(what.find("host") != std::string::npos);
  }
  CHECK_THROWS_AS(tessera::rt::vk::open_device(99), tessera::Error);
}

namespace {

/// The facts of a device like the H200 under NVIDIA's driver, as far as VK_NV_cooperative_matrix2
/// goes, made by hand: no device needed (lavapipe lacks the extension).
tessera::rt::vk::PhysicalFacts coopmat2_device() {
  using tessera::ir::DType;
  tessera::rt::vk::PhysicalFacts f;
  f.props.apiVersion = VK_API_VERSION_1_3;
  f.props.limits.maxComputeSharedMemorySize = 49152;
  f.props.limits.maxComputeWorkGroupInvocations = 1024;
  f.props.limits.maxComputeWorkGroupSize[0] = 1024;
  f.p13.maxComputeWorkgroupSubgroups = 32;
  f.p13.maxSubgroupSize = 32;
  f.p11.subgroupSize = 32;
  f.extensions = {"VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2"};
  f.supported.with_coopmat = true;
  f.supported.coopmat.cooperativeMatrix = VK_TRUE;
  f.supported.with_coopmat2 = true;
  auto& c = f.supported.coopmat2;
  c.cooperativeMatrixWorkgroupScope = c.cooperativeMatrixFlexibleDimensions = VK_TRUE;
  c.cooperativeMatrixTensorAddressing = c.cooperativeMatrixReductions = VK_TRUE;
  f.p_coopmat2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize = 256;
  f.p_coopmat2.cooperativeMatrixFlexibleDimensionsMaxDimension = 1024;
  f.p_coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory = 8192;
  f.matrix_shapes = {{16, 16, 16, DType::f16, DType::f16, DType::f32}};
  f.flexible_shapes = {{{16, 16, 16, DType::f16, DType::f16, DType::f32}, false, 0},
                       {{32, 16, 16, DType::f16, DType::f16, DType::f32}, true, 128}};
  return f;
}

bool lists(const std::vector<const char*>& names, const std::string& name) {
  return std::find_if(names.begin(), names.end(), [&](const char* n) { return name == n; }) !=
         names.end();
}

}  // namespace

TEST_CASE("vulkan: VK_NV_cooperative_matrix2 stays off unless asked, even where offered") {
  auto f = coopmat2_device();
  REQUIRE(f.coopmat2_usable());
  CHECK(!f.coopmat2_enabled());
  const auto t = f.target("vulkan:0");
  CHECK(t.has(Cap::CooperativeMatrix));
  CHECK(!t.has(Cap::CooperativeMatrix2));
  CHECK(t.max_shared_bytes == 49152);
  CHECK(f.shared_bytes_limit() == 49152);
  CHECK(!f.enabled_features().with_coopmat2);
  CHECK(!lists(f.enabled_extensions(), "VK_NV_cooperative_matrix2"));
  CHECK(lists(f.enabled_extensions(), "VK_KHR_cooperative_matrix"));
  CHECK(f.coopmat2_report().starts_with(
      "VK_NV_cooperative_matrix2: off (TESSERA_COOPMAT2=1 enables it)\n"));
}

TEST_CASE("vulkan: asked for, VK_NV_cooperative_matrix2 is enabled and the shared limit drops") {
  auto f = coopmat2_device();
  f.coopmat2_requested = true;
  REQUIRE(f.coopmat2_enabled());
  const auto t = f.target("vulkan:0");
  CHECK(t.has(Cap::CooperativeMatrix2));
  CHECK(t.max_shared_bytes == 49152 - 8192);  // the driver's reservation for workgroup scope
  CHECK(f.shared_bytes_limit() == 40960);
  CHECK(t.str().find("coopmat2") != std::string::npos);
  auto parsed = tessera::target::parse_target(t.str());
  REQUIRE(parsed.has_value());
  CHECK(parsed->has(Cap::CooperativeMatrix2));
  auto e = f.enabled_features();
  CHECK(e.with_coopmat2);
  CHECK(e.coopmat2.cooperativeMatrixWorkgroupScope == VK_TRUE);
  CHECK(e.coopmat2.cooperativeMatrixFlexibleDimensions == VK_TRUE);
  CHECK(e.coopmat2.cooperativeMatrixTensorAddressing == VK_TRUE);
  CHECK(e.coopmat2.cooperativeMatrixReductions == VK_FALSE);  // supported, but nothing uses it
  CHECK(lists(f.enabled_extensions(), "VK_NV_cooperative_matrix2"));
  // The struct is chained into device creation only now.
  bool chained = false;
  for (auto* s = static_cast<VkBaseOutStructure*>(static_cast<void*>(e.chain())); s; s = s->pNext)
    chained |= s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV;
  CHECK(chained);
  CHECK(f.coopmat2_report() ==
        "VK_NV_cooperative_matrix2: on\n"
        "  features: workgroup_scope flexible_dimensions reductions tensor_addressing\n"
        "  workgroup scope up to 256 invocations, dimensions up to 1024, 8192 bytes of shared "
        "memory reserved\n"
        "  flexible shape 16x16x16:f16*f16+f32 subgroup\n"
        "  flexible shape 32x16x16:f16*f16+f32 workgroup@128");
}

TEST_CASE("vulkan: VK_NV_cooperative_matrix2 without tensor addressing is not enabled") {
  auto f = coopmat2_device();
  f.coopmat2_requested = true;
  f.supported.coopmat2.cooperativeMatrixTensorAddressing = VK_FALSE;
  CHECK(!f.coopmat2_enabled());
  CHECK(!f.target("vulkan:0").has(Cap::CooperativeMatrix2));
  CHECK(f.target("vulkan:0").max_shared_bytes == 49152);
  CHECK(!lists(f.enabled_extensions(), "VK_NV_cooperative_matrix2"));
  CHECK(f.coopmat2_report().starts_with("VK_NV_cooperative_matrix2: off (lacks "));
  f.extensions = {"VK_KHR_cooperative_matrix"};
  CHECK(f.coopmat2_report().empty());  // nothing to say about an extension the device lacks
}

TEST_CASE("vulkan: TESSERA_COOPMAT2 is 1 (on), 0 or unset (off), anything else an error") {
  const char* saved = std::getenv("TESSERA_COOPMAT2");
  const std::string old = saved ? saved : "";
  unsetenv("TESSERA_COOPMAT2");
  CHECK(!tessera::rt::vk::coopmat2_requested_by_env());
  setenv("TESSERA_COOPMAT2", "0", 1);
  CHECK(!tessera::rt::vk::coopmat2_requested_by_env());
  setenv("TESSERA_COOPMAT2", "1", 1);
  CHECK(tessera::rt::vk::coopmat2_requested_by_env());
  setenv("TESSERA_COOPMAT2", "yes", 1);
  try {
    tessera::rt::vk::coopmat2_requested_by_env();
    FAIL("TESSERA_COOPMAT2=yes should be refused");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Argument);
    CHECK(std::string(e.what()).find("TESSERA_COOPMAT2='yes'") != std::string::npos);
  }
  if (saved)
    setenv("TESSERA_COOPMAT2", old.c_str(), 1);
  else
    unsetenv("TESSERA_COOPMAT2");
}

TEST_CASE("vulkan: a device opened with coopmat2 asked for enables it where the device has it") {
  VKTEST_DEVICE(dev);
  tessera::rt::vk::VulkanOptions options;
  options.coopmat2 = true;
  auto asked = tessera::rt::vk::open_device(0, options);
  const auto& f = asked->facts();
  CHECK(f.coopmat2_requested);
  if (!f.coopmat2_usable()) {
    // lavapipe: asking changes nothing, and the device still opens and runs.
    CHECK(asked->target() == vktest::impl(dev).target());
    CHECK(asked->info().details == f.coopmat2_report());
    CHECK_NOTHROW(asked->allocate(256));
    vktest::report_skip(dev.info().description +
                        " lacks a usable VK_NV_cooperative_matrix2: its enabled path is checked "
                        "only on such a device (NVIDIA's driver)");
    return;
  }
  CHECK(asked->target().has(Cap::CooperativeMatrix2));
  CHECK(asked->target().max_shared_bytes ==
        f.props.limits.maxComputeSharedMemorySize -
            f.p_coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory);
  CHECK(asked->info().details.starts_with("VK_NV_cooperative_matrix2: on"));
  CHECK_NOTHROW(asked->allocate(256));  // the VkDevice is made with the extension enabled
}
