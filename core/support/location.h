/// \file Source locations: every IR op records where the user wrote it (file:line).
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace tessera {

/// A file:line:column in the user's source. `file` is interned: two Locations with the same file
/// name share the pointer, and it stays valid for the life of the process.
struct Location {
  const char* file = nullptr;
  uint32_t line = 0;
  uint32_t column = 0;

  static Location from(const std::source_location& loc);
  static Location make(std::string_view file, uint32_t line, uint32_t column = 0);

  bool known() const { return file != nullptr; }
  /// "file:line" (the form error messages use), or "<unknown>".
  std::string str() const;
  /// The file name without its directories.
  std::string_view basename() const;
  bool operator==(const Location& o) const {
    return file == o.file && line == o.line && column == o.column;
  }
};

/// Interns a file name; the returned pointer is valid for the life of the process.
const char* intern_file_name(std::string_view name);

}  // namespace tessera
