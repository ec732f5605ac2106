/// \file Reading TESSERA_TIMEOUT.
#include "runtime/timeout.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/support/error.h"

namespace tessera::rt {

double timeout_seconds() {
  const char* text = std::getenv("TESSERA_TIMEOUT");
  if (!text || !*text) return kDefaultTimeoutSeconds;
  char* end = nullptr;
  double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || std::isnan(seconds) || seconds < 0)
    fail(ErrorKind::Argument, "TESSERA_TIMEOUT='", text,
         "' is not a number of seconds >= 0 (0 turns the time limit off)");
  return seconds;
}

std::string timeout_text(double seconds) {
  std::ostringstream os;
  os << seconds << " s (TESSERA_TIMEOUT)";
  return os.str();
}

}  // namespace tessera::rt
