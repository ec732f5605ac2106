/// \file The `tessera` command-line tool: list devices, dump a kernel's IR at each stage.
///
///   tessera devices
///   tessera dump --list
///   tessera dump <kernel|FILE.tir> [--stage ir|simt|spirv|ptx] [--target PROFILE]
///   tessera dump --batch IN_DIR --out OUT_DIR
///   tessera conformance --device NAME [--filter PATTERN] [--json FILE] [--seed S] [--quick]
///   tessera fuzz --device NAME [--count N] [--seed S] [--program I]
///   tessera bench [--device NAME] [--filter PATTERN] [--json FILE] [--quick]
#include <cstdio>
#include <vector>

#include "bench/bench.h"
#include "runtime/tessera.h"
#include "tools/conformance.h"
#include "tools/dump.h"
#include "tools/fuzz.h"

namespace {

using tessera::Device;

int usage() {
  std::fprintf(stderr,
               "usage: tessera devices\n"
               "       tessera dump --list\n"
               "       tessera dump <kernel|FILE.tir> [--stage ir|simt|spirv|ptx] [--target PROFILE]\n"
               "                    [--num-warps N] [--num-stages S]\n"
               "       tessera dump --batch IN_DIR --out OUT_DIR [--targets P,...] [--shard I/N]\n"
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  try {
    std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "devices") return cmd_devices();
    if (cmd == "dump") return tessera::tools::dump_main(args);
    if (cmd == "conformance") return tessera::tools::conformance_main(args);
    if (cmd == "fuzz") return tessera::tools::fuzz_main(args);
    if (cmd == "bench") return tessera::bench::bench_main(args);
    return usage();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: %s: %s\n", std::string(tessera::to_string(e.kind())).c_str(), e.what());
    return 1;
  }
}
