/// \file The header a program using an installed Tessera includes: `#include <tessera/tessera.h>`.
/// It checks the language and the compiler first, so a wrong setting is one clear error (the API
/// is then not included, sparing the hundreds that would follow), then includes the public API
/// (<tessera/runtime/tessera.h>; the public headers include each other by paths relative to
/// themselves, so the folder that holds tessera/ is the only include path a program needs). The
/// CMake target Tessera::tessera carries C++20; with pkg-config, compile with -std=c++20
/// (docs/install.md).
#pragma once

#if __cplusplus < 202002L
#error "Tessera needs C++20 or later: compile with -std=c++20 (Tessera::tessera in CMake does)"
#elif defined(__clang__) && __clang_major__ < 16
#error "Tessera needs Clang 16 or later (or GCC 12 or later)"
#elif !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 12
#error "Tessera needs GCC 12 or later (or Clang 16 or later)"
#else
#include <tessera/runtime/tessera.h>
#endif
