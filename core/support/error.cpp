/// \file Error kinds' names and the internal-failure path.
#include "core/support/error.h"

namespace tessera {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::User:
      return "user error";
    case ErrorKind::Argument:
      return "argument error";
    case ErrorKind::Unsupported:
      return "unsupported";
    case ErrorKind::Runtime:
      return "runtime error";
    case ErrorKind::DeviceFault:
      return "device fault";
    case ErrorKind::OutOfMemory:
      return "out of memory";
    case ErrorKind::Internal:
      return "internal error";
  }
  return "error";
}

namespace detail {
void internal_failure(const char* file, int line, const char* cond, const std::string& message) {
  throw Error(ErrorKind::Internal, concat("internal error at ", file, ":", line, ": check '", cond,
                                          "' failed", message.empty() ? "" : ": ", message));
}
}  // namespace detail

}  // namespace tessera
