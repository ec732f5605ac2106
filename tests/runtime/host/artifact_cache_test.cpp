// \file runtime/artifact_cache.h without a GPU: the artifact's serialization, the entry's checks
// (magic, length, full key, checksum), the key's parts, atomic writes from many threads, an
// unwritable folder, TESSERA_CACHE=0, and the interpreters, which compile as before.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/ir/parser.h"
#include "runtime/artifact_cache.h"
#include "runtime/cache.h"
#include "runtime/hash.h"
#include "runtime/tessera.h"
#include "runtime/version.h"
#include "samples/kernels/gelu.h"
#include "tests/support/env.h"
#include "tests/support/temp_cache.h"

namespace fs = std::filesystem;
namespace rt = tessera::rt;
using tessera::test::ScopedEnv;

namespace {

/// A fresh folder as TESSERA_CACHE_DIR for one test, removed afterwards.
class TempCache : public tessera::test::TempCache {
 public:
  TempCache() : tessera::test::TempCache("artifact") {}
};

/// An artifact with every field away from its default.
tessera::target::Artifact full_artifact() {
  tessera::target::Artifact a;
  a.kernel = "k";
  a.symbol = "k_sym";
  a.isa = "spirv";
  a.spirv = {0x07230203u, 1, 2, 0xffffffffu};
  a.ptx = std::string("ptx\0text", 8);
  a.target = "vulkan-lavapipe{...}";
  a.params.slots = {{0, 8}, {8, 4}, {16, 8}};
  a.params.size = 24;
  a.param_bytes = 40;
  a.grid_offset = 24;
  a.params_by_address = true;
  a.fault_offset = 32;
  a.faults = {"k.cpp:3: assert failed", ""};
  a.print_offset = 16;
  a.prints = {{"x =", tessera::ir::DType::f16, false, true, 2, 7},
              {"", tessera::ir::DType::u64, true, false, 0, 0}};
  a.threads = 128;
  a.subgroup = 32;
  a.shared_bytes = 65536;
  a.cluster = 4;
  a.dependent_launch = true;
  a.tensor_maps = {{.base_param = 0,
                    .dtype = tessera::ir::DType::bf16,
                    .dims = {{1, 0}, {-1, 300}},
                    .strides = {{2, 0}, {-1, 1}},
                    .box = {64, 128},
                    .swizzle = 128,
                    .copies = 2},
                   {.base_param = 2,
                    .dtype = tessera::ir::DType::f32,
                    .dims = {{-1, 7}},
                    .strides = {{-1, 1}},
                    .box = {4},
                    .swizzle = 0}};
  a.param_names = {"a", "M", "b"};
  return a;
}

void check_equal(const tessera::target::Artifact& a, const tessera::target::Artifact& b) {
  CHECK(a.kernel == b.kernel);
  CHECK(a.symbol == b.symbol);
  CHECK(a.isa == b.isa);
  CHECK(a.spirv == b.spirv);
  CHECK(a.ptx == b.ptx);
  CHECK(a.target == b.target);
  REQUIRE(a.params.slots.size() == b.params.slots.size());
  for (size_t i = 0; i < a.params.slots.size(); ++i) {
    CHECK(a.params.slots[i].offset == b.params.slots[i].offset);
    CHECK(a.params.slots[i].size == b.params.slots[i].size);
  }
  CHECK(a.params.size == b.params.size);
  CHECK(a.param_bytes == b.param_bytes);
  CHECK(a.grid_offset == b.grid_offset);
  CHECK(a.params_by_address == b.params_by_address);
  CHECK(a.fault_offset == b.fault_offset);
  CHECK(a.faults == b.faults);
  CHECK(a.print_offset == b.print_offset);
  REQUIRE(a.prints.size() == b.prints.size());
  for (size_t i = 0; i < a.prints.size(); ++i) {
    CHECK(a.prints[i].prefix == b.prints[i].prefix);
    CHECK(a.prints[i].dtype == b.prints[i].dtype);
    CHECK(a.prints[i].is_ptr == b.prints[i].is_ptr);
    CHECK(a.prints[i].hex == b.prints[i].hex);
    CHECK(a.prints[i].rank == b.prints[i].rank);
    CHECK(a.prints[i].statement == b.prints[i].statement);
  }
  CHECK(a.threads == b.threads);
  CHECK(a.subgroup == b.subgroup);
  CHECK(a.shared_bytes == b.shared_bytes);
  CHECK(a.cluster == b.cluster);
  CHECK(a.dependent_launch == b.dependent_launch);
  CHECK(a.tensor_maps == b.tensor_maps);
  CHECK(a.param_names == b.param_names);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::unique_ptr<tessera::ir::Module> small_module(int constant) {
  return tessera::ir::parse("func @k(%p: ptr<i32>) {\n  %0 = constant {value = " +
                            std::to_string(constant) + "} : i32\n  store %p, %0\n}\n");
}

}  // namespace

TEST_CASE("artifact cache: an artifact serializes and reads back field for field") {
  const tessera::target::Artifact a = full_artifact();
  const std::string bytes = rt::serialize_artifact(a);
  std::optional<tessera::target::Artifact> b = rt::deserialize_artifact(bytes);
  REQUIRE(b);
  check_equal(a, *b);
  // Every truncation and one byte more are refused, never read as a shorter artifact.
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK_FALSE(rt::deserialize_artifact(std::string_view(bytes).substr(0, n)));
  CHECK_FALSE(rt::deserialize_artifact(bytes + "x"));
}

TEST_CASE("artifact cache: a cluster other than 1, 2, 4 or 8 does not read back") {
  tessera::target::Artifact a = full_artifact();
  for (uint32_t cluster : {1u, 2u, 8u}) {
    a.cluster = cluster;
    std::optional<tessera::target::Artifact> b =
        rt::deserialize_artifact(rt::serialize_artifact(a));
    REQUIRE(b);
    CHECK(b->cluster == cluster);
  }
  for (uint32_t cluster : {0u, 3u, 16u}) {
    CAPTURE(cluster);
    a.cluster = cluster;
    CHECK_FALSE(rt::deserialize_artifact(rt::serialize_artifact(a)));
  }
}

TEST_CASE("artifact cache: an entry is read back only for its own key and intact") {
  TempCache cache;
  const std::string key = "key one\nfunc @k() {}\n";
  const tessera::target::Artifact a = full_artifact();
  CHECK_FALSE(rt::artifact_read(key));
  rt::artifact_write(key, a);
  const fs::path path = rt::artifact_path(key);
  CHECK(path.parent_path() == cache.path() / "artifacts");
  REQUIRE(fs::exists(path));
  std::optional<tessera::target::Artifact> got = rt::artifact_read(key);
  REQUIRE(got);
  check_equal(a, *got);
  CHECK_FALSE(rt::artifact_read(key + " "));  // another key: another file, absent
  const std::string good = slurp(path);

  SUBCASE("a flipped byte anywhere in the payload or header") {
    // magic, key length, payload length, checksum, the key, the payload's start and end
    const size_t header = 40;
    for (size_t at : {size_t{3}, size_t{9}, size_t{20}, size_t{33}, header + key.size() / 2,
                      header + key.size() + 5, good.size() - 1}) {
      CAPTURE(at);
      std::string bad = good;
      bad[at] ^= 0x5a;
      spit(path, bad);
      CHECK_FALSE(rt::artifact_read(key));
    }
  }
  SUBCASE("truncated, extended, empty") {
    for (size_t n : {size_t{0}, size_t{7}, size_t{40}, good.size() / 2, good.size() - 1}) {
      spit(path, good.substr(0, n));
      CHECK_FALSE(rt::artifact_read(key));
    }
    spit(path, good + std::string(1, '\0'));
    CHECK_FALSE(rt::artifact_read(key));
  }
  SUBCASE("another format version") {
    std::string bad = good;
    bad[6] = '0';  // "TSRART0\n"
    spit(path, bad);
    CHECK_FALSE(rt::artifact_read(key));
  }
  SUBCASE("another key stored in the file of this key (a hash collision, another compiler)") {
    const std::string other = "key One\nfunc @k() {}\n";  // same length, one letter differs
    rt::artifact_write(other, a);
    spit(path, slurp(rt::artifact_path(other)));
    CHECK_FALSE(rt::artifact_read(key));
  }
  SUBCASE("a FIFO or a folder in the entry's place reads as absent without blocking") {
    fs::remove(path);
    REQUIRE(mkfifo(path.c_str(), 0600) == 0);
    CHECK_FALSE(rt::artifact_read(key));
    fs::remove(path);
    fs::create_directories(path);
    CHECK_FALSE(rt::artifact_read(key));
  }
  SUBCASE("rewriting an entry replaces it") {
    spit(path, "garbage");
    rt::artifact_write(key, a);
    REQUIRE(rt::artifact_read(key));
    rt::artifact_remove(key);
    CHECK_FALSE(fs::exists(path));
  }
}

TEST_CASE("artifact cache: the key holds the compiler build, the target, every option and the IR") {
  auto m = small_module(1);
  const tessera::CompileOptions base;
  const std::string key = rt::artifact_key(*m, "vulkan-lavapipe{x}", base);
  const std::string& compiler = rt::compiler_identity();
  CHECK(compiler.rfind(std::string(tessera::version()) + " ", 0) == 0);
  CHECK(compiler.size() > tessera::version().size() + 8);  // and the build's identity
  CHECK(key.find("\ncompiler " + compiler + "\n") != std::string::npos);
  CHECK(key.find("\ntarget vulkan-lavapipe{x}\n") != std::string::npos);
  CHECK(key.find("func @k(%p: ptr<i32>)") != std::string::npos);
  CHECK(rt::artifact_key(*small_module(1), "vulkan-lavapipe{x}", base) == key);  // deterministic
  std::vector<std::string> others = {
      rt::artifact_key(*m, "vulkan-lavapipe{y}", base),
      rt::artifact_key(*m, "vulkan-lavapipe{x}", {.num_warps = 8}),
      rt::artifact_key(*m, "vulkan-lavapipe{x}", {.num_stages = 2}),
      rt::artifact_key(*m, "vulkan-lavapipe{x}", {.debug = true}),
      rt::artifact_key(*small_module(2), "vulkan-lavapipe{x}", base),
  };
  TempCache cache;
  rt::artifact_write(key, full_artifact());
  for (const std::string& other : others) {
    CHECK(other != key);
    CHECK(rt::artifact_path(other) != rt::artifact_path(key));
    CHECK_FALSE(rt::artifact_read(other));
  }
}

TEST_CASE("artifact cache: writers of one entry in many threads leave one whole file") {
  TempCache cache;
  const std::string key = "concurrent";
  tessera::target::Artifact a = full_artifact();
  a.spirv.assign(50000, 0x12345678u);  // large enough that writes overlap
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        rt::artifact_write(key, a);
        std::optional<tessera::target::Artifact> got = rt::artifact_read(key);
        if (!got || got->spirv != a.spirv) FAIL("a reader saw a partial entry");
      }
    });
  for (std::thread& t : threads) t.join();
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache.path() / "artifacts")) {
    ++files;
    CHECK(e.path().string().find(".tmp.") == std::string::npos);
  }
  CHECK(files == 1);
}

TEST_CASE("artifact cache: an unwritable folder warns once and TESSERA_CACHE=0 turns caching off") {
  TempCache cache;
  SUBCASE("the root is a file") {
    fs::create_directories(cache.path());
    spit(cache.path() / "file", "x");
    ScopedEnv dir("TESSERA_CACHE_DIR", (cache.path() / "file").string());
    std::fflush(stderr);
    const fs::path log = cache.path() / "stderr";
    const int saved = dup(2);
    std::FILE* f = std::fopen(log.c_str(), "w");
    dup2(fileno(f), 2);
    std::fclose(f);
    rt::artifact_write("a", full_artifact());
    rt::artifact_write("b", full_artifact());
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    const std::string text = slurp(log);
    const std::string warning = "tessera: warning: the artifact cache " +
                                (cache.path() / "file" / "artifacts").string() +
                                " cannot be written";
    CHECK(text.find(warning) != std::string::npos);
    CHECK(text.find(warning, text.find(warning) + 1) == std::string::npos);  // once
    CHECK_FALSE(rt::artifact_read("a"));
  }
  SUBCASE("TESSERA_CACHE=0") {
    ScopedEnv off("TESSERA_CACHE", "0");
    CHECK(tessera::cache_root() == "");
    CHECK(tessera::cache_off_reason() == "TESSERA_CACHE=0");
    CHECK(rt::artifact_cache_dir() == "");
    rt::artifact_write("a", full_artifact());
    CHECK_FALSE(rt::artifact_read("a"));
    CHECK_FALSE(fs::exists(cache.path()));
  }
  SUBCASE("TESSERA_CACHE=1 and unset keep it on") {
    ScopedEnv on("TESSERA_CACHE", "1");
    CHECK(tessera::cache_root() == cache.path().string());
    CHECK(tessera::cache_off_reason() == "");
  }
}

TEST_CASE("artifact cache: the host and simt interpreters compile as before and write nothing") {
  TempCache cache;
  for (const char* name : {"host", "simt:8"}) {
    CAPTURE(name);
    tessera::Device dev = tessera::Device::open(name);
    const int n = 1000;
    std::vector<float> hx(n, 1.0f);
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(n);
    auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
    gelu[{tessera::cdiv(n, 256)}](x, y, n, 256);
    CHECK(y.download()[n - 1] == doctest::Approx(0.8412f).epsilon(1e-3));
  }
  CHECK_FALSE(fs::exists(cache.path() / "artifacts"));
}

TEST_CASE("artifact cache: hash128 tells apart lengths, seeds and every byte of short inputs") {
  using tessera::rt::hash128;
  CHECK(hash128(std::string_view()) == hash128(""));
  CHECK(hash128("") != hash128(std::string(1, '\0')));  // the length is hashed
  CHECK(hash128("abc") != hash128("abc", 1));
  CHECK(hash128("abc").hex().size() == 32);
  // Every input of 0..40 bytes whose one byte differs hashes differently.
  for (size_t n = 1; n <= 40; ++n) {
    const std::string base(n, 'a');
    for (size_t i = 0; i < n; ++i) {
      std::string other = base;
      other[i] = 'b';
      CHECK(hash128(other) != hash128(base));
    }
  }
}
