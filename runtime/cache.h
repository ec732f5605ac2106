/// \file Where Tessera keeps compiled code on disk, in one place: each backend's cache is a folder
/// below one root, so `tessera cache` can list and clear every cache without knowing a backend.
#pragma once

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
/// is set (then nothing is cached on disk). Read at every call.
std::string cache_root();

/// The folder of the cache named `name` ("cuda", "vulkan"): cache_root()/name, or "".
std::string cache_dir(std::string_view name);

/// Every disk cache a backend may write, whether or not it exists yet.
std::vector<DiskCache> disk_caches();

}  // namespace tessera
