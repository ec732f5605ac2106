/// \file `tessera devices`: one short row per device from its DeviceInfo and target description,
/// the long texts only with --verbose.
#include "tools/devices.h"

#include <algorithm>
#include <cstdio>

#include "core/target/target.h"
#include "runtime/tessera.h"
#include "tools/cli.h"

namespace tessera::tools {
namespace {

/// "64 KiB", "227 KiB", "-" for none.
std::string shared_text(int64_t bytes) {
  if (bytes <= 0) return "-";
  if (bytes % 1024) return std::to_string(bytes) + " B";
  return std::to_string(bytes / 1024) + " KiB";
}

/// The tensor-core instructions and their input types: "wgmma, mma.sync (f16 bf16 tf32 i8)".
std::string matrix_units(const target::Target& t) {
  std::string units;
  auto add = [&](target::Cap c, const char* name) {
    if (t.has(c)) units += (units.empty() ? "" : ", ") + std::string(name);
  };
  add(target::Cap::Wgmma, "wgmma");
  add(target::Cap::MmaSync, "mma.sync");
  add(target::Cap::CooperativeMatrix, "coopmat");
  add(target::Cap::CooperativeMatrix2, "coopmat2");
  if (units.empty()) return "none";
  std::string types;
  for (const target::MatrixShape& s : t.matrix_shapes) {
    // An f32 input of mma.sync is rounded to tf32.
    std::string name = s.a == ir::DType::f32 && t.has(target::Cap::MmaSync)
                           ? "tf32"
                           : std::string(ir::dtype_name(s.a));
    if ((" " + types + " ").find(" " + name + " ") == std::string::npos)
      types += (types.empty() ? "" : " ") + name;
  }
  return types.empty() ? units : units + " (" + types + ")";
}

/// The device's own name: its description up to the details ("NVIDIA H200", "llvmpipe",
/// "SIMT interpreter"); the name column says the rest.
std::string short_name(const std::string& description) {
  size_t end = description.size();
  for (const char* cut : {";", " (", ", ", " with "}) end = std::min(end, description.find(cut));
  return description.substr(0, end);
}

}  // namespace

int devices_main(const std::vector<std::string>& args) {
  bool verbose = false;
  for (const std::string& a : args) {
    if (a != "--verbose" && a != "-v") return usage_error("devices", "unknown option '" + a + "'");
    verbose = true;
  }
  const Device::Listing listing = Device::enumerate();
  std::vector<std::vector<std::string>> rows = {
      {"name", "kind", "memory", "subgroup", "shared", "matrix units", "device"}};
  for (const DeviceInfo& d : listing.devices) {
    const std::optional<target::Target> t = target::parse_target(d.target);
    const bool tile = d.kind == "host";  // the tile interpreter runs whole programs: no threads
    rows.push_back({d.name, d.kind, d.memory_bytes ? bytes_text(d.memory_bytes) : "?",
                    !t || tile ? "-" : std::to_string(t->subgroup_size),
                    t ? shared_text(t->max_shared_bytes) : "?", t ? matrix_units(*t) : "?",
                    short_name(d.description)});
  }
  const std::vector<size_t> widths = column_widths(rows);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::printf("%s\n", table_row(rows[r], widths).c_str());
    if (verbose && r > 0) {
      const DeviceInfo& d = listing.devices[r - 1];
      std::printf("    %s\n    target: %s\n", d.description.c_str(), d.target.c_str());
      for (size_t at = 0; at < d.details.size();) {
        const size_t end = std::min(d.details.find('\n', at), d.details.size());
        std::printf("    %s\n", d.details.substr(at, end - at).c_str());
        at = end + 1;
      }
    }
  }
  for (const std::string& why : listing.unavailable) std::printf("%s\n", why.c_str());
  return 0;
}

}  // namespace tessera::tools
