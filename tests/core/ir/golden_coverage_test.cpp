// \file Keeps the golden files complete: a new op kind in ops.def must get a round-trip case in
// tests/golden/ir/roundtrip*.tir (roundtrip.tir for the tile IR, roundtrip_simt.tir for the SIMT
// IR) and an expected-error case in tests/golden/ir/verify_*.tir.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/ir/parser.h"

namespace tessera::ir {
namespace {

const std::filesystem::path kGoldenDir =
    std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/golden/ir";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The contents of the golden files whose names start with `prefix`, in name order.
std::vector<std::filesystem::path> golden_files(std::string_view prefix) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir))
    if (entry.path().filename().string().starts_with(prefix)) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// The op kinds the cases of `text` (split at `// -----`) use.
void collect_kinds(const std::string& text, std::set<OpKind>& seen) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t sep = text.find("// -----", start);
    std::string one =
        text.substr(start, sep == std::string::npos ? std::string::npos : sep - start);
    std::unique_ptr<Module> m = parse(one, "roundtrip.tir");
    for (const auto& fn : m->functions) walk(fn->body, [&](Op* op) { seen.insert(op->kind); });
    if (sep == std::string::npos) break;
    start = sep + 8;
  }
}

TEST_CASE("golden files: the roundtrip*.tir files use every op kind") {
  std::vector<std::filesystem::path> files = golden_files("roundtrip");
  CHECK(files.size() >= 2);  // roundtrip.tir and roundtrip_simt.tir
  std::set<OpKind> seen;
  for (const auto& f : files) collect_kinds(read(f), seen);
  for (int k = 0; k < num_op_kinds(); ++k) {
    CAPTURE(op_name(static_cast<OpKind>(k)));
    CHECK(seen.count(static_cast<OpKind>(k)) == 1);
  }
}

TEST_CASE("golden files: every op kind has an expected verifier error") {
  std::string all;
  for (const auto& f : golden_files("verify_")) all += read(f);
  for (int k = 0; k < num_op_kinds(); ++k) {
    std::string name(op_name(static_cast<OpKind>(k)));
    CAPTURE(name);
    CHECK(all.find("{{'" + name + "' op ") != std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::ir
