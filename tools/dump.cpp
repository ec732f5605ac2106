/// \file `tessera dump`: one kernel's stages on stdout, or every captured kernel's stages in files
/// (scripts/dump-kernels diffs two such folders to show what a change did to the code).
#include "tools/dump.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "runtime/tessera.h"
#include "targets/compile.h"
#include "tools/catalog.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

std::string option(const std::vector<std::string>& args, const std::string& name, std::string fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == name) return args[i + 1];
  return fallback;
}

/// A profile name, a full target text, or a SIMT interpreter device ("simt:32").
target::Target resolve_target(const std::string& name) {
  if (name.starts_with("simt:")) {
    Device d = Device::open(name);
    return *target::parse_target(d.info().target);
  }
  std::string error;
  auto t = target::parse_target(name, &error);
  if (!t) fail(ErrorKind::Argument, error);
  return *t;
}

/// A captured kernel (TESSERA_CAPTURE): its launch options and its tile IR as traced.
struct Captured {
  CompileOptions options;
  std::shared_ptr<const ir::Module> traced;
};

Captured read_captured(const fs::path& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorKind::Argument, "cannot read ", path.string());
  std::stringstream text;
  text << in.rdbuf();
  Captured c;
  const std::string s = text.str();
  if (s.starts_with("// options:"))
    std::sscanf(s.c_str(), "// options: num_warps=%d num_stages=%d", &c.options.num_warps,
                &c.options.num_stages);
  c.traced = ir::parse(s, path.string());
  return c;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) fail(ErrorKind::Runtime, "cannot write ", path.string());
}

std::string error_text(const Error& e) { return std::string(to_string(e.kind())) + ": " + e.what() + "\n"; }

/// Every stage of one captured kernel for every target, as files in `out`: the optimized tile IR,
/// and per target its SIMT IR and code (or the error that stopped it).
void dump_one(const fs::path& file, const std::vector<std::string>& targets, const fs::path& out) {
  fs::create_directories(out);
  const Dumps quiet;
  Captured c;
  try {
    c = read_captured(file);
    write(out / "ir.tir", ir::print(*passes::compile(*c.traced, *target::profile("host"), c.options,
                                                     passes::Stage::Tile, quiet).tile));
  } catch (const Error& e) {
    write(out / "ir.error", error_text(e));
    return;
  }
  for (const std::string& name : targets) {
    std::string stem = name;
    std::replace(stem.begin(), stem.end(), ':', '-');
    const target::Target t = resolve_target(name);
    try {
      passes::Compiled simt = passes::compile(*c.traced, t, c.options, passes::Stage::Simt, quiet);
      write(out / (stem + ".simt"), ir::print(*simt.simt));
      if (t.isa == "none") continue;
      target::Artifact a = targets::emit(simt.simt->kernel(), t, quiet);
      write(out / (stem + (a.isa == "spirv" ? ".spvasm" : ".ptx")), targets::code_text(a));
    } catch (const Error& e) {
      write(out / (stem + ".error"), error_text(e));
    }
  }
}

int dump_batch(const std::vector<std::string>& args) {
  const fs::path in = option(args, "--batch", ""), out = option(args, "--out", "");
  if (in.empty() || out.empty()) {
    std::fprintf(stderr, "tessera dump --batch IN_DIR --out OUT_DIR [--targets ...] [--shard I/N]\n");
    return 2;
  }
  std::vector<std::string> targets;
  std::stringstream list(option(args, "--targets",
                                "simt:8,simt:32,simt:64,cuda-sm_80,cuda-sm_90a,vulkan-lavapipe,"
                                "vulkan-nvidia"));
  for (std::string t; std::getline(list, t, ',');)
    if (!t.empty()) targets.push_back(t);
  int shard = 0, shards = 1;
  std::sscanf(option(args, "--shard", "0/1").c_str(), "%d/%d", &shard, &shards);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(in))
    if (e.path().extension() == ".tir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (size_t i = static_cast<size_t>(shard); i < files.size(); i += static_cast<size_t>(shards))
    dump_one(files[i], targets, out / files[i].stem());
  return 0;
}

int dump_single(const std::vector<std::string>& args) {
  std::shared_ptr<const ir::Module> traced;
  CompileOptions options;
  if (args[0].ends_with(".tir")) {
    Captured c = read_captured(args[0]);
    options = c.options;
    traced = std::move(c.traced);
  } else {
    const CatalogEntry* entry = find_kernel(args[0]);
    if (!entry) {
      std::fprintf(stderr, "tessera: unknown kernel '%s' (see `tessera dump --list`)\n", args[0].c_str());
      return 2;
    }
    traced = entry->traced(Device::open("host"));
  }
  const std::string stage = option(args, "--stage", "ir");
  if (stage != "ir" && stage != "layouts" && stage != "simt" && stage != "spirv" && stage != "ptx") {
    std::fprintf(stderr, "tessera: unknown stage '%s' (stages: ir, layouts, simt, spirv, ptx)\n",
                 stage.c_str());
    return 2;
  }
  const std::string target_name = option(args, "--target", stage == "ptx" ? "cuda-sm_90" : "vulkan-nvidia");
  const target::Target target = resolve_target(target_name);
  options.num_warps = std::stoi(option(args, "--num-warps", std::to_string(options.num_warps)));
  options.num_stages = std::stoi(option(args, "--num-stages", std::to_string(options.num_stages)));
  const Dumps quiet;
  // The stages come from the pipeline every launch runs (core/passes/pipeline.h).
  const passes::Stage stop = stage == "ir" ? passes::Stage::Tile : passes::Stage::Simt;
  passes::Compiled c = passes::compile(*traced, target, options, stop, quiet);
  if (stage == "ir") std::cout << ir::print(*c.tile);
  if (stage == "layouts") std::cout << c.plan->str();
  if (stage == "simt") std::cout << ir::print(*c.simt);
  if (stage != "ptx" && stage != "spirv") return 0;
  const target::Artifact a = targets::emit(c.simt->kernel(), target, quiet);
  if ((stage == "ptx") != (a.isa == "ptx")) {
    std::fprintf(stderr, "tessera: target '%s' does not produce %s (try --target %s)\n",
                 target_name.c_str(), stage == "ptx" ? "PTX" : "SPIR-V",
                 stage == "ptx" ? "cuda-sm_90" : "vulkan-nvidia");
    return 2;
  }
  std::cout << targets::code_text(a);
  return 0;
}

}  // namespace

int dump_main(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fprintf(stderr, "usage: tessera dump --list | <kernel|FILE.tir> [--stage S] [--target P] | --batch IN --out OUT\n");
    return 2;
  }
  if (args[0] == "--list") {
    for (const CatalogEntry& e : catalog()) std::printf("%-20s %s\n", e.name.c_str(), e.summary.c_str());
    return 0;
  }
  if (args[0] == "--batch") return dump_batch(args);
  return dump_single(args);
}

}  // namespace tessera::tools
