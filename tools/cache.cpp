/// \file `tessera cache`: lists runtime/cache.h's caches (the CUDA cubins, the Vulkan pipeline
/// caches, the compiled artifacts) and the autotuning choices (runtime/autotune.h) with what
/// each holds, and clears them.
/// Clearing removes what a cache folder holds but keeps the folder, which may be a link the user
/// made to another disk.
#include "tools/cache.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/support/error.h"
#include "runtime/autotune.h"
#include "runtime/cache.h"
#include "tools/cli.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

/// What a cache folder holds now.
struct Contents {
  std::string state;  ///< "" (a folder), "missing", "not a directory", "unreadable: ..."
  uint64_t files = 0;
  uint64_t bytes = 0;
};

Contents contents(const std::string& folder) {
  Contents c;
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::exists(status)) return {"missing"};
  if (!fs::is_directory(status)) return {"not a directory"};
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec)) continue;
    const uintmax_t size = it->file_size(size_ec);
    ++c.files;
    if (!size_ec) c.bytes += size;
  }
  if (ec) c.state = "unreadable: " + ec.message();
  return c;
}

/// Removes everything in `folder`; the first failure is an error naming the path.
void clear(const std::string& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code remove_ec;
    fs::remove_all(it->path(), remove_ec);
    if (remove_ec)
      fail(ErrorKind::Runtime, "cannot remove ", it->path().string(), ": ", remove_ec.message());
  }
  if (ec) fail(ErrorKind::Runtime, "cannot read ", folder, ": ", ec.message());
}

/// The root, where its path comes from, and whether anything can be cached there.
void print_root() {
  const std::string root = cache_root();
  const char* env = std::getenv("TESSERA_CACHE_DIR");
  std::error_code ec;
  const fs::file_status status = fs::status(root, ec);
  std::printf(
      "cache root: %s (%s)%s\n", root.c_str(),
      env && *env ? "TESSERA_CACHE_DIR" : "$HOME/.cache/tessera; TESSERA_CACHE_DIR moves it",
      fs::exists(status) && !fs::is_directory(status)
          ? ": not a directory, so nothing is cached on disk"
          : "");
}

}  // namespace

int cache_main(const std::vector<std::string>& args) {
  bool clearing = false;
  for (const std::string& a : args) {
    if (a != "--clear" && a != "clear") return usage_error("cache", "unknown argument '" + a + "'");
    clearing = true;
  }
  if (cache_root().empty()) {
    std::printf("no disk caches: %s\n", cache_off_reason().c_str());
    return 0;
  }
  print_root();
  std::vector<std::vector<std::string>> rows = {{"cache", "files", "size", "folder"}};
  uint64_t total_files = 0, total_bytes = 0;
  std::vector<DiskCache> caches = disk_caches();
  caches.push_back({"autotune",
                    "autotuning choices, one file per kernel, device, configurations, key value "
                    "and compiler build",
                    autotune_cache_dir()});
  for (const DiskCache& cache : caches) {
    const Contents c = contents(cache.path);
    if (clearing && c.state.empty()) clear(cache.path);
    total_files += c.files;
    total_bytes += c.bytes;
    rows.push_back({cache.name, std::to_string(c.files), bytes_text(c.bytes),
                    cache.path + (c.state.empty() ? "" : " (" + c.state + ")")});
  }
  rows.push_back({"total", std::to_string(total_files), bytes_text(total_bytes), ""});
  const std::vector<size_t> widths = column_widths(rows);
  for (const auto& row : rows) std::printf("%s\n", table_row(row, widths).c_str());
  if (clearing)
    std::printf("removed %llu file%s (%s)\n", static_cast<unsigned long long>(total_files),
                total_files == 1 ? "" : "s", bytes_text(total_bytes).c_str());
  return 0;
}

}  // namespace tessera::tools
