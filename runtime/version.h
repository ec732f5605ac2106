/// \file Tessera's version, for programs and the `tessera --version` tool. The one source is
/// `project(Tessera VERSION ...)` in the top-level CMakeLists.txt, which also gives the CMake
/// package's version, the pkg-config file's and the shared library's SONAME.
#pragma once

#include <string_view>

namespace tessera {

/// The library's version as "MAJOR.MINOR.PATCH" (e.g. "0.1.0"): the libtessera this program
/// runs with, which may be newer than the headers it was compiled against.
std::string_view version();

}  // namespace tessera
