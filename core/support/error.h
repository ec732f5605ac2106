/// \file Tessera's one error type: every failure a user can cause or meet is a tessera::Error
/// with a kind, so callers can tell their own mistakes from device faults and compiler bugs.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

/// What went wrong, and so whose move it is: Error::kind() says it.
enum class ErrorKind {
  User,         ///< a wrong kernel: shape/dtype misuse, bad IR text, verifier failure on user input
  Argument,     ///< wrong launch arguments: count, types, pointer element types, devices
  Unsupported,  ///< a feature the device or target lacks (fp64, int64, shared memory over the
                ///< limit)
  Runtime,      ///< a driver call failed, a device is unavailable
  DeviceFault,  ///< a kernel faulted: out-of-bounds access, device lost, device assert
  OutOfMemory,  ///< an allocation could not be satisfied
  Internal,     ///< a bug in Tessera itself
};

/// A short name of the kind ("user error", "device fault", ...), as messages print it.
std::string_view to_string(ErrorKind kind);

/// The exception every Tessera failure throws: what() is the message (naming the file:line, op
/// and shapes, or the kernel, parameter and device), kind() says which kind of failure it is.
class Error : public std::runtime_error {
 public:
  /// An error of `kind` with `message`.
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  /// The kind of failure.
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

/// \cond INTERNAL
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
/// \endcond

/// Throws an Error of `kind` whose message is the concatenation of `args`.
template <class... Args>
[[noreturn]] void fail(ErrorKind kind, const Args&... args) {
  throw Error(kind, detail::concat(args...));
}

}  // namespace tessera

/// A compiler invariant: failing it is a bug in Tessera, reported as ErrorKind::Internal.
#define TESSERA_CHECK(cond, ...)                                                   \
  do {                                                                             \
    if (!(cond))                                                                   \
      ::tessera::detail::internal_failure(__FILE__, __LINE__, #cond,               \
                                          ::tessera::detail::concat(__VA_ARGS__)); \
  } while (0)
