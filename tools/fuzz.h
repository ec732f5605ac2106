/// \file `tessera fuzz`: differential fuzzing of the compiler and a device against the host
/// interpreter, with random well-typed tile programs built directly as tile IR.
///
///   tessera fuzz --device NAME [--count N] [--seed S] [--ops N] [--program I] [--verbose]
///                [--isolate | --no-isolate] [--timeout SECONDS]
///
/// Each program runs on the named device (through the optimizing pipeline, as every kernel
/// does) and on the interpreter without optimization (interp::run on the module as generated);
/// integers must agree bit for bit, floats within a tolerance (bit for bit on the host device).
/// A mismatch is shrunk (smaller shapes, fewer ops) and printed as textual IR. Except on the host,
/// each check runs in a child process, so a backend that crashes or hangs fails one program.
///
/// On SPIR-V targets the programs keep sin and cos arguments within 2^16 * 2pi (inf and NaN
/// aside): beyond, Vulkan leaves their results free and Tessera promises only [-1, 1]
/// (GenOptions::trig_range). That is the only allowance for Vulkan; the comparison is the same.
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `fuzz`; returns the exit code (0: all programs
/// agreed, 1: a mismatch or an error, 2: bad usage).
int fuzz_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
