/// \file A fresh cache folder for one test: TESSERA_CACHE_DIR points at it, caching is on
/// (TESSERA_CACHE and TESSERA_DUMP unset), and the folder is removed afterwards.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/env.h"

namespace tessera::test {

class TempCache {
 public:
  /// The folder tessera-<what>-test-<pid>-<n> in the temporary directory, n counting the
  /// caches this process made.
  explicit TempCache(const std::string& what)
      : path_(std::filesystem::temp_directory_path() /
              ("tessera-" + what + "-test-" + std::to_string(getpid()) + "-" +
               std::to_string(next()))),
        env_("TESSERA_CACHE_DIR", path_.string()),
        on_("TESSERA_CACHE", std::nullopt),
        dump_("TESSERA_DUMP", std::nullopt) {
    std::filesystem::remove_all(path_);
  }
  ~TempCache() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempCache(const TempCache&) = delete;
  TempCache& operator=(const TempCache&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// The files in the cache's subfolder `sub` ("artifacts", "autotune"), none if it is absent.
  std::vector<std::filesystem::path> files(const std::string& sub) const {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(path_ / sub, ec), end; !ec && it != end;
         it.increment(ec))
      out.push_back(it->path());
    return out;
  }

 private:
  static int next() {
    static int n = 0;
    return n++;
  }
  std::filesystem::path path_;
  ScopedEnv env_, on_, dump_;
};

}  // namespace tessera::test
