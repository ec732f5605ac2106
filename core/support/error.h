/// \file Tessera's one error type: every failure a user can cause or meet is a tessera::Error
/// with a kind, so callers can tell their own mistakes from device faults and compiler bugs.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

enum class ErrorKind {
  User,         ///< a wrong kernel: shape/dtype misuse, bad IR text, verifier failure on user input
  Argument,     ///< wrong launch arguments: count, types, pointer element types, devices
  Unsupported,  ///< a feature the device or target lacks (fp64, int64, shared memory over the limit)
  Runtime,      ///< a driver call failed, a device is unavailable
  DeviceFault,  ///< a kernel faulted: out-of-bounds access, device lost, device assert
  OutOfMemory,  ///< an allocation could not be satisfied
  Internal,     ///< a bug in Tessera itself
};

std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void internal_failure(const char* file, int line, const char* cond,
                                   const std::string& message);
}  // namespace detail

/// Throws an Error of `kind` whose message is the concatenation of `args`.
template <class... Args>
[[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  throw Error(kind, detail::concat(args...));
}

}  // namespace tessera

/// A compiler invariant: failing it is a bug in Tessera, reported as ErrorKind::Internal.
#define TESSERA_CHECK(cond, ...)                                                        \
  do {                                                                                  \
    if (!(cond))                                                                        \
      ::tessera::detail::internal_failure(__FILE__, __LINE__, #cond,                   \
                                          ::tessera::detail::concat(__VA_ARGS__));      \
  } while (0)
