/// \file What a test's code writes to stdout or stderr, captured through a temporary file (the
/// file descriptor itself is redirected, so output from C, C++ and the CUDA driver's vprintf is
/// caught alike).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace tessera::test {

/// Runs `fn` with file descriptor `fd` (1: stdout, 2: stderr) going to a file; returns what was
/// written to it.
template <class F>
std::string capture(int fd, F fn) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  char name[] = "/tmp/tessera_capture_XXXXXX";
  int file = mkstemp(name);
  REQUIRE(file >= 0);
  int saved = dup(fd);
  dup2(file, fd);
  fn();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  dup2(saved, fd);
  close(saved);
  std::string text;
  lseek(file, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = read(file, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(file);
  unlink(name);
  return text;
}

}  // namespace tessera::test
