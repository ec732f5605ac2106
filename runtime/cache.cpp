/// \file The disk caches' locations, read by the CUDA cubin cache, the Vulkan pipeline cache, the
/// artifact cache and `tessera cache`, and the file reads and atomic writes they share.
#include "runtime/cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

namespace tessera {
namespace {

/// Every backend's cache, in one table: its folder name and what it holds.
constexpr struct {
  const char* name;
  const char* what;
} kCaches[] = {
    {"cuda", "cubins the CUDA driver compiled from PTX, one file per kernel, device and driver"},
    {"vulkan", "Vulkan pipeline caches, one file per device and driver"},
    {"artifacts",
     "compiled kernels (PTX or SPIR-V) with their launch facts, one file per traced "
     "kernel, target, options and compiler build"},
};

/// TESSERA_CACHE: "0" turns every disk cache off; unset, "" or "1" leaves them on. Another value
/// warns once and leaves them on (the variable is read where a destructor may write a cache, so
/// it must not throw).
bool caching_on() {
  const char* text = std::getenv("TESSERA_CACHE");
  if (!text || !*text || std::strcmp(text, "1") == 0) return true;
  if (std::strcmp(text, "0") == 0) return false;
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr,
                 "tessera: warning: TESSERA_CACHE='%s' is neither 0 nor 1; caching stays on\n",
                 text);
  return true;
}

}  // namespace

std::string cache_root() {
  if (!caching_on()) return "";
  if (const char* dir = std::getenv("TESSERA_CACHE_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "tessera").string();
  return "";
}

std::string cache_off_reason() {
  if (!caching_on()) return "TESSERA_CACHE=0";
  return cache_root().empty() ? "neither TESSERA_CACHE_DIR nor HOME is set" : "";
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

std::optional<std::string> read_cache_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> out;
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (done == bytes.size()) out = std::move(bytes);
  }
  ::close(fd);
  return out;
}

bool write_cache_file(const std::string& path, std::string_view bytes, std::string* error) {
  namespace fs = std::filesystem;
  auto failed = [&](std::string why) {
    if (error) *error = std::move(why);
    return false;
  };
  std::error_code ec;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) return failed("cannot create " + target.parent_path().string() + ": " + ec.message());
  // A name no other writer uses: the process, the thread and a counter.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." +
      std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffff) + "." +
      std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return failed("cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  int write_errno = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_errno = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && !write_errno) write_errno = errno;
  if (write_errno) {
    ::unlink(tmp.c_str());
    return failed("cannot write " + tmp + ": " + std::strerror(write_errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return failed("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
  }
  return true;
}

}  // namespace tessera
