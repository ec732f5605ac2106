// \file The pipeline cache on disk: written when a device closes, read when one opens, and a
// corrupt file ignored (and replaced) rather than trusted.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "vk_test.h"

namespace fs = std::filesystem;
using vktest::ParamBlock;

namespace {

/// Points TESSERA_CACHE_DIR at a fresh directory for the test, and back when done.
class CacheDir {
 public:
  CacheDir() : path_(fs::temp_directory_path() / ("tessera-vk-cache-" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    const char* old = std::getenv("TESSERA_CACHE_DIR");
    if (old) old_ = old;
    setenv("TESSERA_CACHE_DIR", path_.c_str(), 1);
  }
  ~CacheDir() {
    if (old_.empty())
      unsetenv("TESSERA_CACHE_DIR");
    else
      setenv("TESSERA_CACHE_DIR", old_.c_str(), 1);
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::string old_;
};

/// Opens a device, makes one pipeline and runs it, closes the device; returns the bytes of cache
/// data the device accepted when it opened.
size_t open_use_close(const std::string& expect_path) {
  auto vk = tessera::rt::vk::open_device(0);
  CHECK(vk->pipeline_cache().path() == expect_path);
  size_t loaded = vk->pipeline_cache().loaded_bytes();
  const uint32_t sg = static_cast<uint32_t>(vk->target().subgroup_size);
  std::string glsl =
      std::string(vktest::kPrelude) + "layout(local_size_x = " + std::to_string(sg) + R"() in;
layout(push_constant, std430) uniform Params { uvec2 out_; } p;
void main() { if (gl_GlobalInvocationID.x == 0) Uints(p.out_).v[0] = 42u; }
)";
  auto out = vk->allocate(4);
  ParamBlock block;
  block.u64(out->address());
  auto kernel = vk->load(vktest::make_artifact(*vk, glsl, "cached_kernel", block, sg, false));
  auto stream = vk->default_stream();
  stream->launch(kernel, tessera::Grid(1), block.user_bytes(), {out});
  uint32_t got = 0;
  stream->download(out, 0, &got, 4);
  CHECK(got == 42u);
  vktest::expect_no_validation_messages(*vk);
  return loaded;
}

}  // namespace

TEST_CASE(
    "vulkan: the pipeline cache is saved on close, loaded on open, and a corrupt one ignored") {
  VKTEST_DEVICE(dev);
  CacheDir dir;
  auto probe = tessera::rt::vk::open_device(0);
  std::string path = probe->pipeline_cache().path();
  probe.reset();
  CHECK(fs::path(path).parent_path() == dir.path() / "vulkan");
  // The probe closed with an empty cache; start from nothing.
  fs::remove_all(dir.path());

  CHECK(open_use_close(path) == 0);  // nothing on disk yet
  REQUIRE(fs::exists(path));
  CHECK(fs::file_size(path) > 24);
  size_t loaded = open_use_close(path);
  CHECK(loaded > 0);  // the file written by the first device
  for (const auto& entry : fs::directory_iterator(dir.path() / "vulkan"))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);  // renamed into place

  // Corrupt the file in the middle: it is ignored, the device works, and a good file replaces it.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    f.put('\x5a').put('\xa5').put('\x00');
  }
  CHECK(open_use_close(path) == 0);
  CHECK(open_use_close(path) > 0);

  // A file that is not a cache at all, and an empty one.
  std::ofstream(path, std::ios::trunc) << "not a pipeline cache";
  CHECK(open_use_close(path) == 0);
  std::ofstream(path, std::ios::trunc);
  CHECK(open_use_close(path) == 0);
  CHECK(open_use_close(path) > 0);
}

namespace {

/// Sends stderr to a file while alive; text() is what was written.
class StderrCapture {
 public:
  StderrCapture()
      : path_(fs::temp_directory_path() / ("tessera-stderr-" + std::to_string(getpid()))) {
    std::fflush(stderr);
    saved_ = dup(2);
    FILE* f = std::fopen(path_.c_str(), "w");
    dup2(fileno(f), 2);
    std::fclose(f);
  }
  ~StderrCapture() {
    restore();
    fs::remove(path_);
  }
  std::string text() {
    restore();
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  fs::path path_;
  int saved_ = -1;
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Opens vulkan:0 twice with `make` having put something at the cache file's path; the device
/// works, loads nothing, warns once naming the path and `what`, and leaves the thing alone.
void check_unusable(const std::string& path, const std::string& what,
                    const std::function<void()>& check_untouched) {
  StderrCapture capture;
  CHECK(open_use_close(path) == 0);
  CHECK(open_use_close(path) == 0);
  std::string err = capture.text();
  CHECK(count(err, "tessera: warning: the Vulkan pipeline cache " + path + " is " + what +
                       "; the cache is neither read nor written") == 1);
  check_untouched();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path(), ec))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);
}

}  // namespace

TEST_CASE("vulkan: a pipeline cache path that is a directory, a FIFO or /dev/zero is ignored") {
  VKTEST_DEVICE(dev);
  CacheDir dir;
  std::string path = tessera::rt::vk::open_device(0)->pipeline_cache().path();
  fs::remove_all(dir.path());
  fs::create_directories(fs::path(path).parent_path());
  // Each case moves the cache folder, so that its path is new (one warning per path and process).
  auto fresh = [&](const std::string& tag) {
    fs::path d = dir.path() / tag;
    setenv("TESSERA_CACHE_DIR", d.c_str(), 1);
    fs::create_directories(d / "vulkan");
    return (d / "vulkan" / fs::path(path).filename()).string();
  };

  SUBCASE("a directory") {
    std::string p = fresh("dir");
    fs::create_directories(fs::path(p) / "inside");
    check_unusable(p, "a directory", [&] {
      CHECK(fs::is_directory(p));
      CHECK(std::distance(fs::directory_iterator(p), fs::directory_iterator()) == 1);
    });
  }
  SUBCASE("a FIFO (opening would block until a writer came)") {
    std::string p = fresh("fifo");
    REQUIRE(mkfifo(p.c_str(), 0600) == 0);
    check_unusable(p, "a FIFO", [&] { CHECK(fs::is_fifo(p)); });
  }
  SUBCASE("a link to /dev/zero (reading would never end)") {
    std::string p = fresh("zero");
    fs::create_symlink("/dev/zero", p);
    check_unusable(p, "a device", [&] {
      CHECK(fs::is_symlink(p));
      CHECK(fs::read_symlink(p) == "/dev/zero");
    });
  }
  SUBCASE("TESSERA_CACHE_DIR=/dev/zero") {
    setenv("TESSERA_CACHE_DIR", "/dev/zero", 1);
    std::string p = "/dev/zero/vulkan/" + fs::path(path).filename().string();
    check_unusable(p, "below something that is not a directory", [] {});
  }
}
