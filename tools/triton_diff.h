/// \file `tessera triton-diff`: the Tessera half of the differential check against Triton
/// (issue 18). Runs the seed kernels and one kernel per op family of the conformance catalogue
/// on a device with inputs drawn from a seed, and writes the inputs, the outputs and a
/// manifest.json (names, dtypes, shapes, parameters, the documented bound) into a folder;
/// bench/peers/diff.py runs the Triton twins on the same inputs and prints the table.
///
///   tessera triton-diff --device NAME --out DIR [--seed S] [--filter PATTERN] [--list]
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `triton-diff`; returns the exit code (0: every
/// case ran, 1: a case failed to run, 2: bad usage).
int triton_diff_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
