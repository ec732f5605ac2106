// \file runtime/cache.h: where the disk caches are (TESSERA_CACHE_DIR, else ~/.cache/tessera),
// and DeviceInfo::memory_bytes, which `tessera devices` prints.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "runtime/cache.h"
#include "runtime/tessera.h"
#include "tests/support/env.h"

using tessera::test::ScopedEnv;

TEST_CASE("cache: the root is TESSERA_CACHE_DIR, else $HOME/.cache/tessera, else none") {
  SUBCASE("TESSERA_CACHE_DIR") {
    ScopedEnv dir("TESSERA_CACHE_DIR", "/tmp/some cache");
    CHECK(tessera::cache_root() == "/tmp/some cache");
    CHECK(tessera::cache_dir("cuda") == "/tmp/some cache/cuda");
  }
  SUBCASE("HOME") {
    ScopedEnv dir("TESSERA_CACHE_DIR", std::nullopt), home("HOME", "/home/u");
    CHECK(tessera::cache_root() == "/home/u/.cache/tessera");
    CHECK(tessera::cache_dir("vulkan") == "/home/u/.cache/tessera/vulkan");
  }
  SUBCASE("an empty TESSERA_CACHE_DIR is unset") {
    ScopedEnv dir("TESSERA_CACHE_DIR", ""), home("HOME", "/home/u");
    CHECK(tessera::cache_root() == "/home/u/.cache/tessera");
  }
  SUBCASE("neither") {
    ScopedEnv dir("TESSERA_CACHE_DIR", std::nullopt), home("HOME", std::nullopt);
    CHECK(tessera::cache_root() == "");
    CHECK(tessera::cache_dir("cuda") == "");
    for (const tessera::DiskCache& c : tessera::disk_caches()) CHECK(c.path == "");
  }
}

TEST_CASE("cache: disk_caches lists the cuda, vulkan and artifacts folders below the root") {
  ScopedEnv dir("TESSERA_CACHE_DIR", "/c");
  const std::vector<tessera::DiskCache> caches = tessera::disk_caches();
  REQUIRE(caches.size() == 3);
  CHECK(caches[0].name == "cuda");
  CHECK(caches[0].path == "/c/cuda");
  CHECK(caches[1].name == "vulkan");
  CHECK(caches[1].path == "/c/vulkan");
  CHECK(caches[2].name == "artifacts");
  CHECK(caches[2].path == "/c/artifacts");
  for (const tessera::DiskCache& c : caches) CHECK_FALSE(c.what.empty());
}

TEST_CASE("devices: memory_bytes is the machine's memory on host and simt, set on every device") {
  const uint64_t ram = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                       static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  CHECK(tessera::Device::open("host").info().memory_bytes == ram);
  CHECK(tessera::Device::open("simt:8").info().memory_bytes == ram);
  for (const tessera::DeviceInfo& d : tessera::Device::enumerate().devices) {
    CAPTURE(d.name);
    CHECK(d.memory_bytes > 0);
  }
}
