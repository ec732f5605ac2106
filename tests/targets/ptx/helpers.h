/// \file Test helpers for the PTX target: SIMT kernels from text (parsed and verified), emission
/// for the CUDA profiles, assembly of the PTX with ptxas, and searches in the PTX.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "core/ir/parser.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "targets/ptx/ptx.h"

namespace ptx_test {

using tessera::Error;
using tessera::ErrorKind;
using tessera::target::Artifact;
using tessera::target::Target;

inline Target profile(std::string_view name = "cuda-sm_90") {
  auto t = tessera::target::profile(name);
  REQUIRE(t);
  return *t;
}

/// A SIMT kernel `@k` with `params`, `body` (ops, one per line) and extra function attributes.
inline std::string kernel(std::string_view params, std::string_view body,
                          std::string_view attrs = "", int threads = 128, int subgroup = 32) {
  std::string text = "func @k(" + std::string(params) +
                     ") attributes {stage = \"simt\", threads = " + std::to_string(threads) +
                     ", subgroup = " + std::to_string(subgroup);
  if (!attrs.empty()) text += ", " + std::string(attrs);
  return text + "} {\n" + std::string(body) + "\n}\n";
}

inline std::unique_ptr<tessera::ir::Module> parse(std::string_view text) {
  auto module = tessera::ir::parse(text, "test.tir");
  tessera::ir::verify(*module);
  return module;
}

/// ptxas from the CUDA toolkit, or "" (then assembly checks print a SKIP).
inline std::string ptxas_path() {
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* dir = std::getenv(env);
        dir && std::filesystem::exists(std::string(dir) + "/bin/ptxas"))
      return std::string(dir) + "/bin/ptxas";
  if (std::filesystem::exists("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return "";
}

struct Assembled {
  bool ran = false;  ///< false: no ptxas here
  bool ok = false;
  std::string log;
};

/// Runs `ptxas -arch=<arch> <flags>` on `ptx` (the PTX's own .target must not exceed arch).
inline Assembled assemble(const std::string& ptx, std::string_view arch,
                          std::string_view flags = "") {
  Assembled a;
  std::string ptxas = ptxas_path();
  if (ptxas.empty()) return a;
  a.ran = true;
  char name[] = "/tmp/tessera_ptx_XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(name) << ptx;
  std::string cmd = ptxas + " -arch=" + std::string(arch) + " " + std::string(flags) + " " + name +
                    " -o /dev/null 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) a.log += buf;
  int status = pclose(pipe);
  std::filesystem::remove(name);
  a.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return a;
}

struct Emitted {
  Artifact artifact;
  std::string ptx;
  bool has(std::string_view needle) const { return ptx.find(needle) != std::string::npos; }
  int count(std::string_view needle) const {
    int n = 0;
    for (size_t at = ptx.find(needle); at != std::string::npos; at = ptx.find(needle, at + 1)) ++n;
    return n;
  }
};

/// Emits for `target` and checks that ptxas assembles the PTX for the target's architecture.
inline Emitted emit(std::string_view text, const Target& target = profile()) {
  auto module = parse(text);
  Emitted e;
  e.artifact = tessera::ptx::emit(module->kernel(), target);
  e.ptx = e.artifact.ptx;
  std::string arch = "sm_" + std::to_string(target.sm) + (target.sm_arch_specific ? "a" : "");
  Assembled a = assemble(e.ptx, arch);
  if (!a.ran) {
    MESSAGE(
        "SKIP: ptxas not found (no CUDA toolkit in /usr/local/cuda or $CUDA_HOME): PTX not "
        "assembled");
  } else {
    INFO("ptxas -arch=", arch, " says:\n", a.log, "\nPTX:\n", e.ptx);
    CHECK(a.ok);
  }
  return e;
}

/// Emits for sm_80 and for sm_90 (each assembled); returns the sm_90 form.
inline Emitted emit_both(std::string_view text) {
  emit(text, profile("cuda-sm_80"));
  return emit(text, profile("cuda-sm_90"));
}

/// The error kind and message `fn` throws ("(no error)" if none).
template <class F>
std::pair<ErrorKind, std::string> error_of(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  return {ErrorKind::Internal, "(no error)"};
}

}  // namespace ptx_test
