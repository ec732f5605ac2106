/// \file Test helpers for the SPIR-V target: SIMT kernels from text (parsed and verified), emission
/// for a target profile with validation of the result, and searches in the disassembly.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/parser.h"
#include "core/ir/verifier.h"
#include "core/support/error.h"
#include "core/target/target.h"
#include "targets/spirv/spirv.h"

namespace spirv_test {

using tessera::Error;
using tessera::ErrorKind;
using tessera::target::Artifact;
using tessera::target::Cap;
using tessera::target::Target;

inline Target profile(std::string_view name = "vulkan-lavapipe") {
  auto t = tessera::target::profile(name);
  REQUIRE(t);
  return *t;
}

/// The profile with `cap` removed.
inline Target without(Cap cap, std::string_view name = "vulkan-lavapipe") {
  Target t = profile(name);
  t.set(cap, false);
  return t;
}

/// The profile `name` with `caps` added (code paths of other devices, at lavapipe's sizes).
inline Target with(std::initializer_list<Cap> caps, std::string_view name = "vulkan-lavapipe") {
  Target t = profile(name);
  for (Cap c : caps) t.set(c);
  return t;
}

/// A SIMT kernel `@k` with `params`, `body` (ops, one per line) and extra function attributes.
inline std::string kernel(std::string_view params, std::string_view body,
                          std::string_view attrs = "", int threads = 64, int subgroup = 8) {
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

struct Emitted {
  Artifact artifact;
  std::string text;  ///< the disassembly
  bool has(std::string_view needle) const { return text.find(needle) != std::string::npos; }
  int count(std::string_view needle) const {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
      ++n;
    return n;
  }
};

/// Emits the kernel in `text` for `target` (validating it) and disassembles the result. Without
/// `optimize` the disassembly shows the emitter's own instruction selection.
inline Emitted emit(std::string_view text, const Target& target = profile(),
                    bool optimize = false) {
  auto module = parse(text);
  Emitted e;
  e.artifact = tessera::spirv::emit(module->kernel(), target, {optimize, true});
  e.text = tessera::spirv::disassemble(e.artifact.spirv);
  CHECK(tessera::spirv::validate(e.artifact.spirv) == "");
  return e;
}

/// Emits with and without the optimizer; both must validate. Returns the unoptimized form.
inline Emitted emit_both(std::string_view text, const Target& target = profile()) {
  emit(text, target, /*optimize=*/true);
  return emit(text, target, /*optimize=*/false);
}

/// The message of the tessera::Error of `kind` that emitting `text` throws ("" if none).
inline std::string emit_error(std::string_view text, const Target& target, ErrorKind kind) {
  auto module = parse(text);
  try {
    tessera::spirv::emit(module->kernel(), target);
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected an error");
  return "";
}

}  // namespace spirv_test
