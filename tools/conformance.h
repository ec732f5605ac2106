/// \file `tessera conformance`: runs the conformance catalogue (tests/conformance/) on devices
/// and prints a case x device matrix of PASS / FAIL (with the worst error) / SKIP (with the
/// missing feature), then `N passed, N failed, N skipped`.
///
///   tessera conformance --device NAME [--device NAME2 ...] [--filter PATTERN] [--json FILE]
///                       [--seed S] [--quick] [--list] [--verbose] [--no-isolate] [--timeout S]
///
/// Each device runs the cases in child processes (tools/conformance_exec.h): a case that crashes
/// or hangs the backend fails alone. --seed replays a run's inputs (every case draws from the
/// seed and its own name, so a filtered replay sees the same inputs); --quick caps sizes for
/// slow devices.
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `conformance`; returns the exit code (0: no
/// failure, 1: a case failed, 2: bad usage).
int conformance_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
