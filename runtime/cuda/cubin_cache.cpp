/// \file The cubin disk cache: a small header (magic, length, checksum) before the cubin.
#include "runtime/cuda/cubin_cache.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/cache.h"

namespace tessera::rt::cuda {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'C', 'U', 'B', '1', '\n'};
constexpr const char* kFormat = "tessera-cubin-cache-1";

uint64_t fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::filesystem::path path_of(const std::string& key) {
  return std::filesystem::path(cubin_cache_dir()) / (key + ".cubin");
}

}  // namespace

std::string cubin_cache_dir() {
  return tessera::cache_dir("cuda");
}

std::string cubin_key(const std::string& ptx, const std::string& device_name, int driver_version) {
  std::string all = std::string(kFormat) + '\0' + device_name + '\0' +
                    std::to_string(driver_version) + '\0' + ptx;
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(all, 0)),
                static_cast<unsigned long long>(fnv1a(all, 0x9e3779b97f4a7c15ull)));
  return out;
}

std::optional<std::string> cubin_read(const std::string& key) {
  if (cubin_cache_dir().empty()) return std::nullopt;
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  constexpr size_t kHeader = sizeof kMagic + 16;
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  uint64_t size = 0, sum = 0;
  std::memcpy(&size, data.data() + sizeof kMagic, 8);
  std::memcpy(&sum, data.data() + sizeof kMagic + 8, 8);
  std::string cubin = data.substr(kHeader);
  if (cubin.size() != size || fnv1a(cubin, 0) != sum) return std::nullopt;
  return cubin;
}

void cubin_write(const std::string& key, const std::string& cubin) {
  std::string dir = cubin_cache_dir();
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  std::filesystem::path final_path = path_of(key);
  std::filesystem::path tmp = final_path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(fnv1a(cubin, 7) & 0xffff);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    uint64_t size = cubin.size(), sum = fnv1a(cubin, 0);
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(&sum), 8);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

void cubin_remove(const std::string& key) {
  if (cubin_cache_dir().empty()) return;
  std::error_code ec;
  std::filesystem::remove(path_of(key), ec);
}

}  // namespace tessera::rt::cuda
