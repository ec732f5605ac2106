/// \file LLVM's fatal errors as tessera::Error: report_fatal_error ("LLVM ERROR: ...") and
/// report_bad_alloc_error end the process by default (abort, exit 134); while a kernel's LLVM work
/// runs under guard_llvm(), they throw instead, naming the kernel and LLVM's message.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/support/error.h"
#include "targets/ptx/ptx.h"

namespace tessera::ptx {

/// What an LLVM fatal error becomes: ErrorKind::Internal (report_fatal_error: LLVM refused what
/// Tessera gave it) or ErrorKind::OutOfMemory (report_bad_alloc_error). A type of its own, so the
/// caller knows that LLVM's objects of that compilation may be half-updated (see guard_llvm).
class LlvmFatalError : public Error {
 public:
  using Error::Error;
};

/// Runs `work` with LLVM's fatal errors on this thread thrown as LlvmFatalError naming `kernel`.
/// Outside it (and on other threads) LLVM's behaviour is unchanged: the message, then abort.
void guard_llvm(std::string_view kernel, const std::function<void()>& work);

/// For tests of the mechanism: report_fatal_error(message) (or report_bad_alloc_error when
/// `bad_alloc`) called by LLVM inside guard_llvm(kernel, ...), where no public input reaches one.
TESSERA_PTX_API void raise_llvm_fatal_error_for_test(std::string_view kernel,
                                                     const std::string& message, bool bad_alloc);

}  // namespace tessera::ptx
