// \file The artifact cache on vulkan:0 (lavapipe): a fresh Kernel object, as in a new process,
// launches from the entry an earlier one wrote (proved by planting another kernel's artifact
// under its key); a damaged entry is compiled again with correct results and rewritten; other
// options miss.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "runtime/artifact_cache.h"
#include "samples/kernels/gelu.h"
#include "tests/support/env.h"
#include "tests/support/temp_cache.h"
#include "vk_test.h"

namespace fs = std::filesystem;
namespace rt = tessera::rt;
using tessera::test::ScopedEnv;

namespace {

class TempCache : public tessera::test::TempCache {
 public:
  TempCache() : tessera::test::TempCache("vk-artifacts") {}
  fs::path artifacts() const { return path() / "artifacts"; }
  size_t entries() const { return files("artifacts").size(); }
};

constexpr int kN = 3000, kBlock = 256;

/// gelu's parameters, another body: y = 2x.
void twice_kernel(tessera::tl::ptr<float> x_ptr, tessera::tl::ptr<float> y_ptr, tessera::tl::i32 n,
                  int BLOCK) {
  namespace tl = tessera::tl;
  auto offsets = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offsets < n;
  tl::store(y_ptr + offsets, 2.0f * tl::load(x_ptr + offsets, mask), mask);
}

float gelu_ref(float x) {
  const float a = 0.79788456f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(a));
}

/// Launches gelu with a fresh Kernel object (empty in-memory caches, as in a new process) and
/// returns the output.
std::vector<float> run_gelu(tessera::Device& dev, const tessera::Buffer<float>& x,
                            tessera::LaunchOptions options = {}) {
  auto y = dev.alloc<float>(kN);
  auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
  gelu[{tessera::cdiv(kN, kBlock), options}](x, y, kN, kBlock);
  return y.download();
}

void check_gelu(const std::vector<float>& hx, const std::vector<float>& got) {
  REQUIRE(got.size() == hx.size());
  for (size_t i = 0; i < hx.size(); ++i)
    REQUIRE(got[i] == doctest::Approx(gelu_ref(hx[i])).epsilon(1e-4));
}

/// The entry's key for gelu launched as run_gelu launches it.
std::string gelu_key(tessera::Device& dev, const tessera::Buffer<float>& x,
                     tessera::LaunchOptions options = {}) {
  auto y = dev.alloc<float>(kN);
  auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
  return rt::artifact_key(*gelu.traced(x, y, kN, kBlock), dev.info().target, options);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("vulkan artifact cache: a fresh kernel launches from the entry an earlier one wrote") {
  VKTEST_DEVICE(dev);
  TempCache cache;
  std::vector<float> hx(kN);
  for (int i = 0; i < kN; ++i) hx[i] = -3.0f + 0.002f * i;
  auto x = dev.upload(hx);

  check_gelu(hx, run_gelu(dev, x));  // compiled, written
  REQUIRE(cache.entries() == 1);
  const std::string key = gelu_key(dev, x);
  REQUIRE(fs::exists(rt::artifact_path(key)));
  std::optional<tessera::target::Artifact> gelu = rt::artifact_read(key);
  REQUIRE(gelu);
  CHECK(gelu->isa == "spirv");
  CHECK(gelu->kernel == "gelu_kernel");
  check_gelu(hx, run_gelu(dev, x));  // a hit: same results, no new entry
  CHECK(cache.entries() == 1);

  // Proof that a fresh kernel trusts the entry of its key: plant twice_kernel's artifact (the
  // same parameters) under gelu's key; a fresh gelu kernel now doubles. Then the real one again.
  auto y = dev.alloc<float>(kN);
  auto twice = TESSERA_KERNEL(twice_kernel, x_ptr, y_ptr, n, BLOCK);
  twice[{tessera::cdiv(kN, kBlock)}](x, y, kN, kBlock);
  std::optional<tessera::target::Artifact> doubled =
      rt::artifact_read(rt::artifact_key(*twice.traced(x, y, kN, kBlock), dev.info().target, {}));
  REQUIRE(doubled);
  rt::artifact_write(key, *doubled);
  std::vector<float> got = run_gelu(dev, x);
  for (int i = 0; i < kN; ++i) REQUIRE(got[i] == 2.0f * hx[i]);
  rt::artifact_write(key, *gelu);
  check_gelu(hx, run_gelu(dev, x));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan artifact cache: a damaged entry is compiled again, correctly, and rewritten") {
  VKTEST_DEVICE(dev);
  TempCache cache;
  std::vector<float> hx(kN);
  for (int i = 0; i < kN; ++i) hx[i] = 0.001f * i;
  auto x = dev.upload(hx);
  check_gelu(hx, run_gelu(dev, x));
  const std::string key = gelu_key(dev, x);
  const fs::path path = rt::artifact_path(key);
  const std::string good = slurp(path);
  REQUIRE(good.size() > 40 + key.size());
  const char* damages[] = {"a flipped bit in the SPIR-V", "truncated", "a foreign format version",
                           "another key in this file", "empty"};
  for (int damage = 0; damage < 5; ++damage) {
    CAPTURE(damages[damage]);
    std::string bad = good;
    if (damage == 0) bad[bad.size() - 9] ^= 0x40;
    if (damage == 1) bad.resize(bad.size() / 2);
    if (damage == 2) bad[6] = '9';  // "TSRART9\n"
    if (damage == 3) bad[40 + key.find("\ntarget") + 3] ^= 1;
    if (damage == 4) bad.clear();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    check_gelu(hx, run_gelu(dev, x));
    CHECK(slurp(path) == good);  // written again, whole
  }
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE(
    "vulkan artifact cache: other options miss and TESSERA_CACHE=0 reads and writes nothing") {
  VKTEST_DEVICE(dev);
  TempCache cache;
  std::vector<float> hx(kN, 0.5f);
  auto x = dev.upload(hx);
  check_gelu(hx, run_gelu(dev, x));
  CHECK(cache.entries() == 1);
  check_gelu(hx, run_gelu(dev, x, {.num_warps = 8}));
  CHECK(cache.entries() == 2);
  check_gelu(hx, run_gelu(dev, x, {.debug = true}));
  CHECK(cache.entries() == 3);
  CHECK(rt::artifact_read(gelu_key(dev, x, {.num_warps = 8})));
  CHECK(rt::artifact_read(gelu_key(dev, x, {.debug = true})));
  CHECK(rt::artifact_read(gelu_key(dev, x, {.num_stages = 2})) == std::nullopt);

  fs::remove_all(cache.artifacts());
  {
    ScopedEnv off("TESSERA_CACHE", "0");
    check_gelu(hx, run_gelu(dev, x));
    CHECK_FALSE(fs::exists(cache.artifacts()));
  }
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
