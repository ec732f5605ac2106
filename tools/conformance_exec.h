/// \file Internal to `tessera conformance`: running cases on one device, in this process or in
/// child processes, so that a backend that crashes or hangs on one case fails that case (with
/// the signal, or a timeout) and the run goes on with the next.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/conformance/framework.h"

namespace tessera::tools {

enum class Status { Pass, Fail, Skip };

struct Result {
  Status status = Status::Pass;
  std::string detail;  ///< failure message or skip reason
  double max_err = 0;
  double ms = 0;
  bool device_spent = false;  ///< the case faulted the device on purpose: open it afresh
};

struct ExecOptions {
  uint64_t seed = 0;
  bool quick = false;
  bool isolate = true;     ///< run the cases in child processes
  double timeout_s = 300;  ///< per case, when isolated
};

/// Runs `cases` on the device named `device` in order, calling `done(index, result)` as each
/// finishes. Opening the device happens in the child when isolated.
void run_cases(const std::string& device, const std::vector<const conformance::Case*>& cases,
               const ExecOptions& options, const std::function<void(size_t, const Result&)>& done);

/// The facts of a device (its parsed target description).
conformance::DeviceFacts facts_for(const Device& dev);

}  // namespace tessera::tools
