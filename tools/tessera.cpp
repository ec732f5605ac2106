/// \file The `tessera` command-line tool: list devices, dump a kernel's IR at each stage.
///
///   tessera devices
///   tessera dump --list
///   tessera dump <kernel> [--stage ir] [--device NAME]
///   tessera conformance --device NAME [--filter PATTERN] [--json FILE] [--seed S] [--quick]
///   tessera fuzz --device NAME [--count N] [--seed S] [--program I]
///   tessera bench [--device NAME] [--filter PATTERN] [--json FILE] [--quick]
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "core/ir/printer.h"
#include "core/lower/simt_lowering.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "runtime/tessera.h"
#include "targets/compile.h"
#include "targets/spirv/spirv.h"
#include "tools/catalog.h"
#include "tools/conformance.h"
#include "tools/fuzz.h"

namespace {

using tessera::Device;

int usage() {
  std::fprintf(stderr,
               "usage: tessera devices\n"
               "       tessera dump --list\n"
               "       tessera dump <kernel> [--stage ir] [--device NAME]\n"
               "       tessera conformance --device NAME [--filter PATTERN] [--json FILE] [--seed S]\n"
               "                           [--quick] [--list] [--verbose] [--no-isolate] [--timeout S]\n"
               "       tessera fuzz --device NAME [--count N] [--seed S] [--ops N] [--program I]\n"
               "                    [--verbose] [--isolate | --no-isolate] [--timeout S]\n"
               "       tessera bench [--device NAME] [--filter PATTERN] [--json FILE] [--quick]\n"
               "                     [--full] [--list] [--seed S] [--peak tf32=T,fp16=T,bf16=T]\n");
  return 2;
}

int cmd_devices() {
  Device::Listing l = Device::enumerate();
  for (const tessera::DeviceInfo& d : l.devices)
    std::printf("%-10s %-40s target: %s\n", d.name.c_str(), d.description.c_str(), d.target.c_str());
  for (const std::string& u : l.unavailable) std::printf("%s\n", u.c_str());
  return 0;
}

std::string option(const std::vector<std::string>& args, const std::string& name, std::string fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == name) return args[i + 1];
  return fallback;
}

int cmd_dump(const std::vector<std::string>& args) {
  if (args.empty()) return usage();
  if (args[0] == "--list") {
    for (const auto& e : tessera::tools::catalog())
      std::printf("%-20s %s\n", e.name.c_str(), e.summary.c_str());
    return 0;
  }
  const auto* entry = tessera::tools::find_kernel(args[0]);
  if (!entry) {
    std::fprintf(stderr, "tessera: unknown kernel '%s' (see `tessera dump --list`)\n", args[0].c_str());
    return 2;
  }
  std::string stage = option(args, "--stage", "ir");
  Device dev = Device::open(option(args, "--device", "host"));
  auto tile = entry->tile_ir(dev);
  if (stage == "ir") {
    std::cout << tessera::ir::print(*tile);
    return 0;
  }
  std::string target_name =
      option(args, "--target", stage == "ptx" ? "cuda-sm_90" : "vulkan-nvidia");
  std::string error;
  auto target = tessera::target::parse_target(target_name, &error);
  if (!target) {
    std::fprintf(stderr, "tessera: %s\n", error.c_str());
    return 2;
  }
  tessera::lower::SimtOptions options;
  options.num_warps = std::stoi(option(args, "--num-warps", "4"));
  if (stage == "simt") {
    auto simt = tessera::lower::to_simt(*tile, *target, options);
    if (option(args, "--optimize", "1") == "1") tessera::passes::optimize(*simt);
    std::cout << tessera::ir::print(*simt);
    return 0;
  }
  if (stage == "spirv" || stage == "ptx") {
    tessera::targets::CompileOptions copts;
    copts.num_warps = options.num_warps;
    copts.num_stages = std::stoi(option(args, "--num-stages", "3"));
    tessera::target::Artifact a = tessera::targets::compile(*tile, *target, copts);
    if (stage == "ptx" && a.isa != "ptx") {
      std::fprintf(stderr, "tessera: target '%s' does not produce PTX (try --target cuda-sm_90)\n",
                   target_name.c_str());
      return 2;
    }
    if (stage == "spirv" && a.isa != "spirv") {
      std::fprintf(stderr, "tessera: target '%s' does not produce SPIR-V (try --target vulkan-nvidia)\n",
                   target_name.c_str());
      return 2;
    }
    std::cout << (stage == "ptx" ? a.ptx : tessera::spirv::disassemble(a.spirv));
    return 0;
  }
  std::fprintf(stderr, "tessera: unknown stage '%s' (stages: ir, simt, spirv, ptx)\n", stage.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  try {
    std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "devices") return cmd_devices();
    if (cmd == "dump") return cmd_dump(args);
    if (cmd == "conformance") return tessera::tools::conformance_main(args);
    if (cmd == "fuzz") return tessera::tools::fuzz_main(args);
    if (cmd == "bench") return tessera::bench::bench_main(args);
    return usage();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: %s: %s\n", std::string(tessera::to_string(e.kind())).c_str(), e.what());
    return 1;
  }
}
