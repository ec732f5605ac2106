/// \file The user error of tracing a kernel that misuses the language, for the error tests of
/// tests/core/lang (errors_test.cpp, composed_errors_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/lang/trace.h"
#include "core/support/error.h"

namespace tessera::test {

/// Traces `fn` with f32 pointers, i32 scalars and the constant 64 for the arguments it has, and
/// returns the user error's message ("" if tracing succeeded); any other kind of error fails the
/// check.
template <class... P>
std::string trace_error(void (*fn)(P...)) {
  std::vector<tl::ArgSpec> specs;
  std::vector<std::string> names;
  for (const tl::ParamDesc& d : tl::describe_params<P...>()) {
    tl::ArgSpec s;
    s.dtype = d.dtype ? *d.dtype : ir::DType::f32;
    s.value.i = 64;
    specs.push_back(s);
    names.push_back("p" + std::to_string(names.size()));
  }
  try {
    tl::trace(fn, "k", names, specs);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    return e.what();
  }
  return "";
}

}  // namespace tessera::test
