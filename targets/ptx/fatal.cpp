/// \file LLVM's fatal-error and bad-alloc handlers, installed once, throwing while guard_llvm()
/// runs on the calling thread.
///
/// Why throwing through LLVM's frames is acceptable, and what makes it safe enough:
/// - Debian's LLVM 19 archives are built with -fno-exceptions but with unwind tables (every object
///   of libLLVM*.a has .eh_frame and none has .gcc_except_table; checked with readelf), so the
///   unwinder walks through LLVM's frames to ours; the frames have no landing pads, so nothing
///   they own is destroyed: it leaks (a fatal error is rare, and a leak is better than an abort).
/// - report_fatal_error holds no lock when it calls the handler (LLVM 19 reads the handler under
///   its mutex and releases it first); codegen takes no other lock of its own on this path.
/// - The objects LLVM was updating (context, module, target machine, pass managers) may be half
///   way through a change, so their destructors must not run: codegen.cpp keeps them in one heap
///   object that is never freed after an LlvmFatalError (quarantine()), and later kernels use
///   fresh ones. Global LLVM state (options, registries) is not written by code generation.
/// - The message LLVM passes is a std::string of report_fatal_error's frame, which leaks when we
///   throw; under AddressSanitizer it is marked for LeakSanitizer, which the unit tests run.
/// The alternative of a child process per compilation would cost a fork per kernel.
#include "targets/ptx/fatal.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <llvm/ADT/Twine.h>
#include <llvm/Support/ErrorHandling.h>
#pragma GCC diagnostic pop

// AddressSanitizer: GCC defines __SANITIZE_ADDRESS__, Clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN 1
#endif
#endif
#if defined(TESSERA_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace tessera::ptx {
namespace {

thread_local const std::string* g_kernel = nullptr;  // the kernel guard_llvm runs for

[[noreturn]] void raise(ErrorKind kind, const char* what, const char* reason) {
#if defined(TESSERA_ASAN)
  __lsan_ignore_object(reason);  // report_fatal_error's copy of the message, left behind
#endif
  throw LlvmFatalError(kind, detail::concat("ptx: LLVM ", what, " while compiling kernel '",
                                            *g_kernel, "': ", reason));
}

void on_fatal_error(void*, const char* reason, bool) {
  if (g_kernel) raise(ErrorKind::Internal, "fatal error", reason);
  // Not ours to handle: what LLVM prints without a handler; it aborts when this returns.
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason);
}

void on_bad_alloc(void*, const char* reason, bool) {
  if (g_kernel) raise(ErrorKind::OutOfMemory, "ran out of memory", reason);
  std::fprintf(stderr, "LLVM ERROR: out of memory (%s)\n", reason);
  std::abort();  // LLVM's own end without a handler; this handler must not return
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(on_fatal_error, nullptr);
    llvm::install_bad_alloc_error_handler(on_bad_alloc, nullptr);
  });
}

}  // namespace

void guard_llvm(std::string_view kernel, const std::function<void()>& work) {
  install_handlers();
  std::string name(kernel);
  struct Scope {
    const std::string* previous = g_kernel;
    ~Scope() { g_kernel = previous; }
  } scope;
  g_kernel = &name;
  work();
}

void raise_llvm_fatal_error_for_test(std::string_view kernel, const std::string& message,
                                     bool bad_alloc) {
  guard_llvm(kernel, [&] {
    if (bad_alloc) llvm::report_bad_alloc_error(message.c_str());
    llvm::report_fatal_error(llvm::Twine(message), /*gen_crash_diag=*/false);
  });
}

}  // namespace tessera::ptx
