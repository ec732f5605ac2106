/// \file The disk caches' locations, read by the CUDA cubin cache, the Vulkan pipeline cache and
/// `tessera cache`.
#include "runtime/cache.h"

#include <cstdlib>
#include <filesystem>

namespace tessera {
namespace {

/// Every backend's cache, in one table: its folder name and what it holds.
constexpr struct {
  const char* name;
  const char* what;
} kCaches[] = {
    {"cuda", "cubins the CUDA driver compiled from PTX, one file per kernel, device and driver"},
    {"vulkan", "Vulkan pipeline caches, one file per device and driver"},
};

}  // namespace

std::string cache_root() {
  if (const char* dir = std::getenv("TESSERA_CACHE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "tessera").string();
  return "";
}

std::string cache_dir(std::string_view name) {
  const std::string root = cache_root();
  if (root.empty()) return "";
  return (std::filesystem::path(root) / name).string();
}

std::vector<DiskCache> disk_caches() {
  std::vector<DiskCache> caches;
  for (const auto& c : kCaches) caches.push_back({c.name, c.what, cache_dir(c.name)});
  return caches;
}

}  // namespace tessera
