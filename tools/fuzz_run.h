/// \file Internal to `tessera fuzz`: running one program on a device and on the reference
/// interpreter, comparing the outputs, and shrinking a mismatch (fuzz.cpp, fuzz_shrink.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tools/fuzz_generator.h"

namespace tessera::tools::fuzz {

/// The host copy of every buffer parameter (empty for the count), inputs filled, outputs poisoned.
struct Buffers {
  std::vector<std::vector<std::byte>> data;
};

/// Random inputs for `p` (from `seed`) and poisoned outputs.
Buffers make_buffers(const Program& p, uint64_t seed, bool exact);

/// What one comparison found: nothing (agreement), a mismatch, or an error.
struct Verdict {
  enum class Kind { Agree, Mismatch, DeviceError, Unsupported, ReferenceError } kind = Kind::Agree;
  std::string detail;
  bool failed() const { return kind == Kind::Mismatch || kind == Kind::DeviceError; }
  /// The same kind of failure as `o` (errors: the same message up to its first number), so
  /// shrinking keeps the bug it started with.
  bool same_failure(const Verdict& o) const;
};

/// Runs `module` (with `p`'s parameters) on `dev` through IrKernel and with interp::run on the
/// unoptimized module, from copies of `inputs`, and compares every output buffer.
Verdict check(const Device& dev, const ir::Module& module, const Program& p, const Buffers& inputs,
              bool exact);

/// Runs a module (with a program's parameters) from inputs and compares: check() on some device,
/// in this process or in a child process.
using Checker = std::function<Verdict(const ir::Module&, const Program&, const Buffers&)>;

/// A checker that forks a child for every check; the child opens `device` itself, so a crash or
/// a hang (after `timeout_s`) of a backend becomes a DeviceError instead of ending the run.
Checker isolated_checker(const std::string& device, bool exact, double timeout_s);

/// The kind and target text of the device `name`, read in a child process when `isolate` (so
/// this process never opens a device and can keep forking).
struct DeviceDesc {
  std::string kind;
  std::string target;
};
DeviceDesc describe_device(const std::string& name, bool isolate);

/// Shrinks a failing program: smaller shapes (regenerating `seed` with a larger shape shift)
/// while it still fails, then deleting ops. Returns the smallest failing program and its inputs.
struct Reduced {
  Program program;
  Buffers inputs;
  int ops_before = 0;
  int ops_after = 0;
};
Reduced shrink(const Checker& check, uint64_t seed, const GenOptions& options, Program p,
               Buffers inputs, bool exact, const Verdict& failure);

/// Number of ops in the module (all regions, terminators excluded).
int count_ops(const ir::Module& m);

}  // namespace tessera::tools::fuzz
