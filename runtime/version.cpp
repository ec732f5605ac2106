/// \file tessera::version(): the string comes from CMake (TESSERA_VERSION, set on this file only
/// in runtime/CMakeLists.txt from project(Tessera VERSION ...)).
#include "runtime/version.h"

#ifndef TESSERA_VERSION
#error "TESSERA_VERSION is set by runtime/CMakeLists.txt"
#endif

namespace tessera {

std::string_view version() {
  return TESSERA_VERSION;
}

}  // namespace tessera
