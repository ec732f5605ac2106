/// \file Location formatting and the file-name intern table.
#include "core/support/location.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tessera {

const char* intern_file_name(std::string_view name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::unique_ptr<std::string>> table;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = table.try_emplace(std::string(name));
  if (inserted) it->second = std::make_unique<std::string>(name);
  return it->second->c_str();
}

Location Location::from(const std::source_location& loc) {
  // source_location's file names are static strings, but two spellings of one file may differ in
  // pointer; interning makes Location equality a pointer comparison. Tracing asks for the same
  // file thousands of times in a row, so the last answer is remembered per thread.
  thread_local const char* last_source = nullptr;
  thread_local const char* last_interned = nullptr;
  if (loc.file_name() != last_source) {
    last_source = loc.file_name();
    last_interned = intern_file_name(last_source);
  }
  Location l;
  l.file = last_interned;
  l.line = loc.line();
  l.column = loc.column();
  return l;
}

Location Location::make(std::string_view file, uint32_t line, uint32_t column) {
  Location l;
  l.file = intern_file_name(file);
  l.line = line;
  l.column = column;
  return l;
}

std::string Location::str() const {
  if (!known()) return "<unknown>";
  return std::string(file) + ":" + std::to_string(line);
}

std::string_view Location::basename() const {
  if (!known()) return "<unknown>";
  std::string_view f(file);
  auto slash = f.find_last_of('/');
  return slash == std::string_view::npos ? f : f.substr(slash + 1);
}

}  // namespace tessera
