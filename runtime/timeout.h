/// \file TESSERA_TIMEOUT: how long a wait for device work, or a kernel run by the interpreters,
/// may take before it ends with an error, so that no call waits without an answer.
#pragma once

#include <string>

namespace tessera::rt {

/// The limit when TESSERA_TIMEOUT is not set: ten minutes, far beyond any kernel the tests or
/// benchmarks run, short enough that a hung device is reported within one CI job.
constexpr double kDefaultTimeoutSeconds = 600;

/// Seconds from TESSERA_TIMEOUT (a decimal number; 0 turns the limit off), read at every call so
/// that a program or test may change it at any time; kDefaultTimeoutSeconds when unset. A value
/// that is not a number >= 0 is an ErrorKind::Argument error naming it.
double timeout_seconds();

/// "1 s (TESSERA_TIMEOUT)": the limit as messages name it.
std::string timeout_text(double seconds);

}  // namespace tessera::rt
