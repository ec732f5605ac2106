/// \file The cubin disk cache: a small header (magic, length, checksum) before the cubin.
#include "runtime/cuda/cubin_cache.h"

#include <cstdint>
#include <cstring>
#include <filesystem>

#include "runtime/cache.h"
#include "runtime/hash.h"

namespace tessera::rt::cuda {
namespace {

// Format 2: the key and checksum are hash128 (format 1's byte-at-a-time FNV took ~1 ns per byte
// of PTX at every warm launch).
constexpr char kMagic[8] = {'T', 'S', 'R', 'C', 'U', 'B', '2', '\n'};
constexpr const char* kFormat = "tessera-cubin-cache-2";
constexpr size_t kHeader = sizeof kMagic + 24;  // magic, size, checksum (lo, hi)

std::filesystem::path path_of(const std::string& key) {
  return std::filesystem::path(cubin_cache_dir()) / (key + ".cubin");
}

}  // namespace

std::string cubin_cache_dir() {
  return tessera::cache_dir("cuda");
}

std::string cubin_key(const std::string& ptx, const std::string& device_name, int driver_version) {
  const std::string prefix =
      std::string(kFormat) + '\0' + device_name + '\0' + std::to_string(driver_version) + '\0';
  const Hash128 head = hash128(prefix);
  return hash128(ptx, head.lo ^ head.hi).hex();
}

std::optional<std::string> cubin_read(const std::string& key) {
  if (cubin_cache_dir().empty()) return std::nullopt;
  std::optional<std::string> data = read_cache_file(path_of(key).string());
  if (!data || data->size() < kHeader || std::memcmp(data->data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  uint64_t size = 0;
  Hash128 sum;
  std::memcpy(&size, data->data() + sizeof kMagic, 8);
  std::memcpy(&sum.lo, data->data() + sizeof kMagic + 8, 8);
  std::memcpy(&sum.hi, data->data() + sizeof kMagic + 16, 8);
  if (data->size() - kHeader != size) return std::nullopt;
  data->erase(0, kHeader);
  if (hash128(*data) != sum) return std::nullopt;
  return data;
}

void cubin_write(const std::string& key, const std::string& cubin) {
  std::string dir = cubin_cache_dir();
  if (dir.empty()) return;
  const Hash128 sum = hash128(cubin);
  std::string file(kMagic, sizeof kMagic);
  for (uint64_t v : {uint64_t{cubin.size()}, sum.lo, sum.hi})
    file.append(reinterpret_cast<const char*>(&v), 8);
  file += cubin;
  // A failure (read-only or missing home) only means no caching.
  write_cache_file(path_of(key).string(), file, nullptr);
}

void cubin_remove(const std::string& key) {
  if (cubin_cache_dir().empty()) return;
  std::error_code ec;
  std::filesystem::remove(path_of(key), ec);
}

}  // namespace tessera::rt::cuda
