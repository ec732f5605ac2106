/// \file Test helpers for the SIMT interpreter: SIMT functions parsed from text (verified, with
/// the subgroup size and thread count set per run), host memory and parameter packing from the
/// tile interpreter's tests, and one-call runners.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "core/interp/simt.h"
#include "core/ir/parser.h"
#include "core/ir/simt.h"
#include "core/ir/verifier.h"
#include "tests/core/interp/helpers.h"

namespace simt_test {

using interp_test::error_of;
using interp_test::HostMemory;
using interp_test::pack;
using tessera::interp::Grid;
using tessera::interp::SimtOptions;

/// The subgroup sizes every lowering must work at: lavapipe, NVIDIA, AMD.
inline constexpr int kSubgroups[] = {8, 32, 64};

/// `text` with every `{KEY}` replaced by its value.
inline std::string subst(std::string text,
                         std::initializer_list<std::pair<std::string, std::string>> values) {
  for (const auto& [key, value] : values) {
    const std::string pattern = "{" + key + "}";
    for (size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at)) {
      text.replace(at, pattern.size(), value);
      at += value.size();
    }
  }
  return text;
}

/// One SIMT function parsed from `text` (source name "k.tir", so ops without a loc(...) are
/// located as k.tir:<line>:<col>). A non-zero `subgroup` or `threads` replaces the attribute.
class SimtKernel {
 public:
  explicit SimtKernel(std::string_view text, int subgroup = 0, int threads = 0)
      : module_(tessera::ir::parse(text, "k.tir")) {
    tessera::ir::Function& fn = module_->kernel();
    if (subgroup) fn.set_attr("subgroup", int64_t{subgroup});
    if (threads) fn.set_attr("threads", int64_t{threads});
    for (const std::string& d : tessera::ir::verify_all(fn)) FAIL_CHECK("verifier: " << d);
  }
  const tessera::ir::Function& fn() const { return module_->kernel(); }

  template <class... Args>
  void run(const HostMemory& memory, Grid grid, Args... args) const {
    tessera::interp::run_simt(fn(), pack(fn(), args...), grid, memory);
  }
  template <class... Args>
  void run_opts(const HostMemory& memory, Grid grid, const SimtOptions& options,
                Args... args) const {
    tessera::interp::run_simt(fn(), pack(fn(), args...), grid, memory, options);
  }
  /// What `print` wrote during one run.
  template <class... Args>
  std::string printed(const HostMemory& memory, Grid grid, Args... args) const {
    std::ostringstream os;
    SimtOptions options;
    options.print_out = &os;
    run_opts(memory, grid, options, args...);
    return os.str();
  }

 private:
  std::unique_ptr<tessera::ir::Module> module_;
};

/// The opening lines every test kernel shares: %lane, %sg, %tid = sg * %s + lane (the caller
/// passes the subgroup size as parameter %s), %c0, %c1 and %true.
inline constexpr std::string_view kThreadId = R"(
  %lane = lane_id : i32
  %sg = subgroup_id : i32
  %tbase = mul %sg, %s : i32
  %tid = add %tbase, %lane : i32
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %true = constant {value = 1} : i1
)";

/// A kernel text: `header` (up to the opening brace), kThreadId, then `body` and the closing
/// brace. The header must declare an i32 parameter %s.
inline std::string kernel(std::string_view header, std::string_view body) {
  return std::string(header) + std::string(kThreadId) + std::string(body) + "}\n";
}

}  // namespace simt_test
