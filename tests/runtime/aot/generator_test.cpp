// \file The ahead-of-time generator (runtime/aot_generator.h) on plans as tessera_add_kernels
// writes them: what it writes for a plan that builds, and the error of each kind of bad plan.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/aot_generator.h"
#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace {

namespace tl = tessera::tl;
using tessera::ErrorKind;
using tessera::test::error_of;

void fill_kernel(tl::pointer out, tl::i32 n, float VALUE, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::full({BLOCK}, VALUE, tl::DType::f32), offs < n);
}

const auto fill_jit = TESSERA_KERNEL(fill_kernel, out, n, VALUE, BLOCK);
const tessera::aot::GeneratorKernel kKernels[] = {{"fill", "fill_kernel", &fill_jit}};

/// A folder for one case's plan and outputs, removed after.
struct Folder {
  std::filesystem::path path;
  Folder() {
    path = std::filesystem::temp_directory_path() /
           ("tessera-aot-generator-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~Folder() { std::filesystem::remove_all(path); }
  /// Runs the generator on a plan of `lines`.
  size_t generate(const std::string& lines) const {
    std::ofstream(path / "plan.txt") << lines;
    return tessera::aot::generate((path / "plan.txt").string(), (path / "k.cpp").string(),
                                  (path / "k.h").string(), kKernels);
  }
  std::string read(const char* name) const {
    std::ifstream in(path / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

}  // namespace

TEST_CASE("aot generator: a plan's entries and launchers") {
  Folder f;
  const size_t n = f.generate(
      "namespace gen\nheader k.h\ntarget host\ntarget vulkan-lavapipe\ntarget cuda-sm_80\n"
      "spec fill: out=f32 VALUE=2.5 BLOCK=64\nspec fill: out=f16:unaligned n=div16 VALUE=1 "
      "BLOCK=128 num_warps=2\n");
  CHECK(n == 6);  // 2 specializations x 3 targets
  const std::string h = f.read("k.h"), cpp = f.read("k.cpp");
  CHECK(h.find("namespace gen {") != std::string::npos);
  CHECK(h.find("extern const ::tessera::AotKernel fill;") != std::string::npos);
  CHECK(h.find("cuda-sm_80: out=f16:unaligned n=div16 VALUE=1 BLOCK=128 num_warps=2") !=
        std::string::npos);
  CHECK(cpp.find("aot_blob_5[]") != std::string::npos);
  CHECK(cpp.find("aot_blob_6[]") == std::string::npos);
  CHECK(cpp.find("const ::tessera::AotKernel fill(\"fill\", \"out, n, VALUE, BLOCK\"") !=
        std::string::npos);
}

TEST_CASE("aot generator: a bad plan is an error naming the kernel, the specialization and why") {
  Folder f;
  const std::string head = "target host\n";
  auto error = [&](const std::string& spec) {
    return error_of([&] { f.generate(head + "spec " + spec + "\n"); }, ErrorKind::Argument);
  };
  CHECK(error("fill: out=f32 VALUE=1 BLOK=64")
            .find("no parameter 'BLOK' (parameters: out, n, "
                  "VALUE, BLOCK") != std::string::npos);
  CHECK(error("fill: out=f32 VALUE=1").find("the constant BLOCK needs a value") !=
        std::string::npos);
  CHECK(error("fill: VALUE=1 BLOCK=64").find("out (tl::pointer) needs a dtype") !=
        std::string::npos);
  CHECK(error("fill: out=f32 VALUE=1 BLOCK=six").find("'six' is no value of BLOCK's type") !=
        std::string::npos);
  CHECK(error("fill: out=f32:div16 VALUE=1 BLOCK=64").find("'div16' in out=f32:div16") !=
        std::string::npos);
  CHECK(error("fil: BLOCK=64").find("names no kernel listed in KERNELS") != std::string::npos);
  CHECK(error_of([&] { f.generate("target cuda-sm_70\nspec fill: out=f32 VALUE=1 BLOCK=64\n"); },
                 ErrorKind::Argument)
            .find("unknown target 'cuda-sm_70'") != std::string::npos);
  CHECK(error_of([&] { f.generate("target host\n"); }, ErrorKind::Argument)
            .find("kernel 'fill' has no specialization") != std::string::npos);
}
