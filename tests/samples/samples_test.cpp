// \file The samples' kernels through every stage without a GPU: their tile IR round-trips through
// the text form, and they compile for every target profile: SPIR-V that SPIRV-Tools validates,
// PTX that ptxas assembles for sm_80 and sm_90, with the instructions that matter selected.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/lang/trace.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/matmul_relu.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"
#include "samples/kernels/vector_add.h"
#include "targets/compile.h"

namespace tl = tessera::tl;
namespace ir = tessera::ir;

namespace {

tl::ArgSpec ptr_f32() {
  tl::ArgSpec s;
  s.dtype = ir::DType::f32;
  s.divisible_by_16 = true;
  return s;
}
tl::ArgSpec i32(bool div16 = false) {
  tl::ArgSpec s;
  s.dtype = ir::DType::i32;
  s.divisible_by_16 = div16;
  return s;
}
tl::ArgSpec cst(int64_t v) {
  tl::ArgSpec s;
  s.value.i = v;
  return s;
}

template <class... P>
std::unique_ptr<ir::Module> traced(void (*fn)(P...), std::vector<tl::ArgSpec> specs) {
  std::vector<std::string> names;
  for (size_t i = 0; i < specs.size(); ++i) names.push_back("p" + std::to_string(i));
  auto m = tl::trace(fn, "", names, specs);
  tessera::passes::optimize(*m);
  return m;
}

struct Sample {
  const char* name;
  std::unique_ptr<ir::Module> module;
};

std::vector<Sample> sample_kernels(bool divisible) {
  std::vector<Sample> s;
  s.push_back({"vector_add", traced(samples::vector_add_kernel,
                                    {ptr_f32(), ptr_f32(), ptr_f32(), i32(divisible), cst(1024)})});
  s.push_back(
      {"gelu", traced(samples::gelu_kernel, {ptr_f32(), ptr_f32(), i32(divisible), cst(1024)})});
  s.push_back(
      {"softmax", traced(samples::softmax_kernel, {ptr_f32(), ptr_f32(), i32(divisible),
                                                   i32(divisible), i32(divisible), cst(1024)})});
  s.push_back({"row_sum",
               traced(samples::row_sum_kernel, {ptr_f32(), ptr_f32(), i32(divisible), cst(1024)})});
  s.push_back(
      {"matmul_relu", traced(samples::matmul_relu_kernel,
                             {ptr_f32(), ptr_f32(), ptr_f32(), i32(divisible), i32(divisible),
                              i32(divisible), i32(divisible), cst(1), i32(divisible), cst(1),
                              i32(divisible), cst(1), cst(64), cst(64), cst(32)})});
  return s;
}

/// Runs ptxas on `ptx` for `arch`; "" on success, "SKIP" without ptxas, else its log.
std::string ptxas(const std::string& ptx, const std::string& arch) {
  const char* exe = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(exe)) return "SKIP";
  auto dir = std::filesystem::temp_directory_path();
  std::string base =
      (dir / ("tessera_samples_" + std::to_string(::getpid()) + "_" + arch)).string();
  std::ofstream(base + ".ptx") << ptx;
  std::string cmd = std::string(exe) + " -arch=" + arch + " " + base + ".ptx -o " + base +
                    ".cubin > " + base + ".log 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream log(base + ".log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::filesystem::remove(base + ".ptx");
  std::filesystem::remove(base + ".cubin");
  std::filesystem::remove(base + ".log");
  return rc == 0 ? "" : "ptxas failed: " + text;
}

}  // namespace

TEST_CASE("samples: every sample kernel's tile IR round-trips through text and verifies") {
  for (auto& s : sample_kernels(false)) {
    CAPTURE(s.name);
    std::string text = ir::print(*s.module);
    auto parsed = ir::parse(text, s.name);
    CHECK(ir::print(*parsed) == text);
    CHECK(ir::verify_all(*parsed).empty());
  }
}

TEST_CASE(
    "samples: every sample kernel compiles to valid SPIR-V for lavapipe and NVIDIA's Vulkan driver") {
  for (const char* profile : {"vulkan-lavapipe", "vulkan-nvidia"}) {
    for (auto& s : sample_kernels(false)) {
      CAPTURE(profile);
      CAPTURE(s.name);
      tessera::target::Artifact a =
          tessera::targets::compile(*s.module, *tessera::target::profile(profile), {});
      CHECK(!a.spirv.empty());
    }
  }
}

TEST_CASE("samples: every sample kernel's PTX assembles with ptxas for sm_80 and sm_90") {
  for (const char* profile : {"cuda-sm_80", "cuda-sm_90"}) {
    for (bool divisible : {false, true}) {
      for (auto& s : sample_kernels(divisible)) {
        CAPTURE(profile);
        CAPTURE(s.name);
        tessera::target::Artifact a =
            tessera::targets::compile(*s.module, *tessera::target::profile(profile), {});
        std::string arch = std::string(profile).substr(5);
        std::string result = ptxas(a.ptx, arch);
        if (result == "SKIP") {
          MESSAGE("SKIP: ptxas not found at /usr/local/cuda/bin/ptxas; PTX not assembled");
          return;
        }
        CHECK(result == "");
      }
    }
  }
}

TEST_CASE(
    "samples: instruction selection: 128-bit loads where aligned, butterfly shuffles in reductions") {
  auto kernels = sample_kernels(true);
  auto ptx_of = [&](const char* name) {
    for (auto& s : kernels)
      if (std::string(s.name) == name)
        return tessera::targets::compile(*s.module, *tessera::target::profile("cuda-sm_90"), {})
            .ptx;
    return std::string();
  };
  std::string gelu = ptx_of("gelu");
  CHECK(gelu.find("ld.global.v4.f32") != std::string::npos);
  CHECK(gelu.find("st.global.v4.f32") != std::string::npos);
  std::string softmax = ptx_of("softmax");
  CHECK(softmax.find("shfl.sync.bfly") != std::string::npos);
  CHECK(softmax.find("ld.global.v4.f32") != std::string::npos);
  std::string row_sum = ptx_of("row_sum");
  CHECK(row_sum.find("shfl.sync.bfly") != std::string::npos);
}
