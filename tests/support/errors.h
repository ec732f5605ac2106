/// \file The message of the tessera::Error a piece of test code throws, its kind checked.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "core/support/error.h"

namespace tessera::test {

/// Runs `f`; returns the message of the tessera::Error it throws after checking its kind, or
/// "<no error>" when it throws none (so that a check of the message fails and shows why).
template <class F>
std::string error_of(F&& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  return "<no error>";
}

}  // namespace tessera::test
