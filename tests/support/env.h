/// \file An environment variable set (or unset) for one scope of a test, restored afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace tessera::test {

/// Sets `name` to `value` (unsets it for nullopt) until the end of the scope, then restores what
/// was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tessera::test
