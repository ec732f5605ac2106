/// \file Where Tessera keeps compiled code on disk, in one place: each backend's cache is a folder
/// below one root, so `tessera cache` can list and clear every cache without knowing a backend.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

/// One on-disk cache.
struct DiskCache {
  std::string name;  ///< "cuda", "vulkan": the folder's name below the root
  std::string what;  ///< what it holds, one line
  std::string path;  ///< the folder ("" when there is no root)
};

/// The root of every disk cache: $TESSERA_CACHE_DIR, else $HOME/.cache/tessera; "" when neither
/// is set or TESSERA_CACHE=0 (then nothing is cached on disk). Read at every call.
std::string cache_root();

/// Why there is no cache root ("TESSERA_CACHE=0", "neither TESSERA_CACHE_DIR nor HOME is set"),
/// or "" when there is one.
std::string cache_off_reason();

/// The folder of the cache named `name` ("cuda", "vulkan"): cache_root()/name, or "".
std::string cache_dir(std::string_view name);

/// Every disk cache a backend may write, whether or not it exists yet.
std::vector<DiskCache> disk_caches();

/// The bytes of the cache file `path`, or nullopt when it is missing, unreadable or not a regular
/// file (a FIFO or a device under a cache's name is never opened for long or read without end).
std::optional<std::string> read_cache_file(const std::string& path);

/// Writes `bytes` to `path` atomically: to a temporary file beside it, then renamed over it, so
/// concurrent writers (threads or processes) and readers never see half a file. Creates the
/// folder. False, with `error` set to the reason, when it cannot.
bool write_cache_file(const std::string& path, std::string_view bytes, std::string* error);

}  // namespace tessera
