/// \file `tessera dump`: one kernel's stages on stdout, or every captured kernel's stages in files
/// (scripts/dump-kernels diffs two such folders to show what a change did to the code).
#include "tools/dump.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include "core/ir/parser.h"
#include "core/ir/printer.h"
#include "core/lower/tma.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "runtime/tessera.h"
#include "targets/compile.h"
#include "tools/catalog.h"
#include "tools/cli.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

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
  if (!in) fail(ErrorKind::Argument, "cannot read ", path.string(), ": ", std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  Captured c;
  const std::string s = text.str();
  if (s.starts_with("// options:")) {
    const std::string line = s.substr(0, s.find('\n'));
    std::string error;
    if (!parse_options(std::string_view(line).substr(11), c.options, &error))
      fail(ErrorKind::Argument, path.string(), ":1: ", error);
  }
  c.traced = ir::parse(s, path.string());
  return c;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) fail(ErrorKind::Runtime, "cannot write ", path.string());
}

std::string error_text(const Error& e) {
  return std::string(to_string(e.kind())) + ": " + e.what() + "\n";
}

/// Every stage of one captured kernel for every target, as files in `out`: the optimized tile IR,
/// and per target its SIMT IR and code (or the error that stopped it).
void dump_one(const fs::path& file, const std::vector<std::string>& targets, const fs::path& out) {
  fs::create_directories(out);
  const Dumps quiet;
  Captured c;
  try {
    c = read_captured(file);
    write(out / "ir.tir", ir::print(*passes::compile(*c.traced, *target::profile("host"), c.options,
                                                     passes::Stage::Tile, quiet)
                                         .tile));
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

/// The command line of `tessera dump`, checked: every option known, with its value.
struct Options {
  std::string kernel;  ///< a catalogue name or a tile-IR file
  std::string stage = "ir";
  std::string target, device;
  std::optional<int> num_warps, num_stages, maxnreg;
  bool list = false, fp_fusion = false, coopmat2 = false;
  std::string batch, out, targets, shard = "0/1";
};

/// The options, or the usage error to print.
std::variant<Options, std::string> parse_options(const std::vector<std::string>& args) {
  Options o;
  const std::map<std::string, std::string*> text = {
      {"--stage", &o.stage}, {"--target", &o.target}, {"--device", &o.device},
      {"--batch", &o.batch}, {"--out", &o.out},       {"--targets", &o.targets},
      {"--shard", &o.shard}};
  const std::map<std::string, std::optional<int>*> numbers = {
      {"--num-warps", &o.num_warps}, {"--num-stages", &o.num_stages}, {"--maxnreg", &o.maxnreg}};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--fp-fusion") {
      o.fp_fusion = true;
      continue;
    }
    if (a == "--coopmat2") {
      o.coopmat2 = true;
      continue;
    }
    if (a == "--list") {
      o.list = true;
      continue;
    }
    const bool is_text = text.count(a), is_number = numbers.count(a);
    if (is_text || is_number) {
      if (i + 1 == args.size()) return "option " + a + " needs a value";
      const std::string& value = args[++i];
      if (is_text) *text.at(a) = value;
      int n = 0;
      if (is_number) {
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || end != value.data() + value.size() || n < 1)
          return "option " + a + " takes a positive integer, not '" + value + "'";
        *numbers.at(a) = n;
      }
      continue;
    }
    if (a.starts_with("-")) return "unknown option '" + a + "'";
    if (!o.kernel.empty()) return "one kernel at a time ('" + o.kernel + "', then '" + a + "')";
    o.kernel = a;
  }
  if (o.stage != "ir" && o.stage != "layouts" && o.stage != "simt" && o.stage != "spirv" &&
      o.stage != "ptx")
    return "unknown stage '" + o.stage + "' (stages: ir, layouts, simt, spirv, ptx)";
  if (!o.target.empty() && !o.device.empty()) return "--target and --device both name a target";
  return o;
}

int dump_batch(const Options& o) {
  if (o.out.empty()) return usage_error("dump", "--batch needs --out OUT_DIR");
  std::vector<std::string> targets;
  std::stringstream list(!o.targets.empty() ? o.targets
                                            : "simt:8,simt:32,simt:64,cuda-sm_80,cuda-sm_90a,"
                                              "vulkan-lavapipe,vulkan-nvidia");
  for (std::string t; std::getline(list, t, ',');)
    if (!t.empty()) targets.push_back(t);
  int shard = 0, shards = 1;
  if (std::sscanf(o.shard.c_str(), "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 ||
      shard >= shards)
    return usage_error("dump", "--shard takes I/N with 0 <= I < N, not '" + o.shard + "'");
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(o.batch, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".tir") files.push_back(it->path());
  if (ec)
    fail(ErrorKind::Argument, "tessera dump --batch: cannot read ", o.batch, ": ", ec.message());
  std::sort(files.begin(), files.end());
  for (size_t i = static_cast<size_t>(shard); i < files.size(); i += static_cast<size_t>(shards))
    dump_one(files[i], targets, fs::path(o.out) / files[i].stem());
  return 0;
}

/// A file of tile IR: named *.tir, or any path to an existing file that is not a kernel's name.
bool is_file(const std::string& name) {
  std::error_code ec;
  return name.ends_with(".tir") || (!find_kernel(name) && fs::is_regular_file(name, ec));
}

int dump_single(const Options& o) {
  std::shared_ptr<const ir::Module> traced;
  CompileOptions options;
  if (is_file(o.kernel)) {
    Captured c = read_captured(o.kernel);
    options = c.options;
    traced = std::move(c.traced);
  } else {
    const CatalogEntry* entry = find_kernel(o.kernel);
    if (!entry)
      return usage_error("dump", "'" + o.kernel +
                                     "' is neither a file nor a kernel of the catalogue; "
                                     "`tessera dump --list` names them");
    traced = entry->traced(Device::open("host"));
  }
  const std::string& stage = o.stage;
  std::string target_name =
      o.target.empty() ? (stage == "ptx" ? "cuda-sm_90" : "vulkan-nvidia") : o.target;
  target::Target target;
  if (!o.device.empty()) {
    target = *target::parse_target(Device::open(o.device).info().target);
    target_name = o.device;
  } else {
    target = resolve_target(target_name);
  }
  if ((stage == "ptx" || stage == "spirv") &&
      (target.isa == "none" || (stage == "ptx") != (target.isa == "ptx")))
    return usage_error("dump", "'" + target_name + "' does not produce " +
                                   (stage == "ptx" ? "PTX (try --target cuda-sm_90)"
                                                   : "SPIR-V (try --target vulkan-nvidia)"));
  if (o.num_warps) options.num_warps = *o.num_warps;
  if (o.num_stages) options.num_stages = *o.num_stages;
  if (o.maxnreg) options.maxnreg = *o.maxnreg;
  if (o.fp_fusion) options.fp_fusion = true;
  if (o.coopmat2) options.coopmat2 = true;
  const Dumps quiet;
  // The stages come from the pipeline every launch runs (core/passes/pipeline.h).
  const passes::Stage stop = stage == "ir" ? passes::Stage::Tile : passes::Stage::Simt;
  passes::Compiled c = passes::compile(*traced, target, options, stop, quiet);
  if (stage == "ir") std::cout << ir::print(*c.tile);
  // What TMA would copy is decided on the descriptor loads, which the plan's IR has expanded.
  if (stage == "layouts") std::cout << lower::tma_report(traced->kernel(), target) << c.plan->str();
  if (stage == "simt") std::cout << ir::print(*c.simt);
  if (stage != "ptx" && stage != "spirv") return 0;
  const target::Artifact a = targets::emit(c.simt->kernel(), target, quiet);
  std::cout << targets::code_text(a);
  return 0;
}

}  // namespace

int dump_main(const std::vector<std::string>& args) {
  auto parsed = parse_options(args);
  if (auto* error = std::get_if<std::string>(&parsed)) return usage_error("dump", *error);
  const Options& o = std::get<Options>(parsed);
  if (o.list) {
    for (const CatalogEntry& e : catalog())
      std::printf("%-20s %s\n", e.name.c_str(), e.summary.c_str());
    return 0;
  }
  if (!o.batch.empty()) return dump_batch(o);
  if (o.kernel.empty())
    return usage_error("dump", "which kernel? Name one of `tessera dump --list` or a FILE.tir");
  return dump_single(o);
}

}  // namespace tessera::tools
