/// \file TESSERA_DUMP's words and their parsing.
#include "core/support/dump.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>

#include "core/support/error.h"

namespace tessera {
namespace {

constexpr std::array<DumpWord, 13> kWords = {{
    {"ir", "each kernel's tile IR as traced and after the tile passes"},
    {"passes", "the IR after every pipeline step that changed it"},
    {"times", "the time of every pipeline step"},
    {"layouts", "the lowering plans: each tile value's layout, each dot's and loop's plan"},
    {"simt", "the SIMT IR a target emits from"},
    {"llvm", "the PTX target's LLVM IR, optimized"},
    {"ptx", "the PTX text"},
    {"ptxstats",
     "each CUDA kernel's registers, spills (local memory) and shared memory, from the driver"},
    {"spirv", "the SPIR-V module, disassembled"},
    {"vkstats", "the Vulkan driver's statistics of each pipeline (registers, shared memory)"},
    {"vkisa", "the Vulkan driver's internal representations of each pipeline, where given"},
    {"loads",
     "each kernel's load by the driver (Vulkan pipeline creation, CUDA module load) and its time; "
     "the only word that keeps the artifact cache in use, so that warm starts can be measured"},
    {"noloc", "leave locations out of the IR printed by the other words"},
}};

}  // namespace

std::span<const DumpWord> dump_words() {
  return kWords;
}

Dumps Dumps::parse(std::string_view list, std::string_view source) {
  Dumps d;
  for (size_t pos = 0; pos <= list.size();) {
    size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    std::string_view word = list.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const bool known = std::any_of(kWords.begin(), kWords.end(),
                                   [&](const DumpWord& w) { return w.name == word; });
    if (!known) {
      std::string valid;
      for (const DumpWord& w : kWords) valid += (valid.empty() ? "" : ", ") + std::string(w.name);
      fail(ErrorKind::Argument, source, ": unknown word '", word, "' (valid: ", valid, ")");
    }
    d.words_.emplace_back(word);
  }
  return d;
}

Dumps Dumps::from_env() {
  const char* env = std::getenv("TESSERA_DUMP");
  return env ? parse(env, "TESSERA_DUMP") : Dumps();
}

bool Dumps::has(std::string_view word) const {
  return std::find(words_.begin(), words_.end(), word) != words_.end();
}

bool Dumps::has_other_than(std::string_view word) const {
  return std::any_of(words_.begin(), words_.end(), [&](const std::string& w) { return w != word; });
}

std::ostream& Dumps::out() const {
  return out_ ? *out_ : std::cerr;
}

bool dump_enabled(std::string_view word) {
  return Dumps::from_env().has(word);
}

}  // namespace tessera
