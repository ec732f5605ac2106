/// \file `tessera bench`: times Tessera's kernels on one device after checking their results,
/// beside the floor of each (bytes over this run's copy bandwidth, or flops over a given peak),
/// plus compile time and launch overhead; optionally writes the rows as JSON for
/// bench/peers/compare.py. See docs/performance.md for the method.
///
///   tessera bench [--device NAME] [--filter PATTERN] [--json FILE] [--quick] [--full]
///                 [--list] [--seed S] [--peak tf32=T,fp16=T,bf16=T] [--seconds-per-case S]
#pragma once

#include <string>
#include <vector>

namespace tessera::bench {

/// Runs the subcommand with the arguments after `bench`; returns the exit code (0: every check
/// passed, 1: a check failed or a case errored, 2: bad usage).
int bench_main(const std::vector<std::string>& args);

}  // namespace tessera::bench
