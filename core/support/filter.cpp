/// \file Name filters: comma-separated globs or substrings.
#include "core/support/filter.h"

namespace tessera {
namespace {

bool glob(std::string_view p, std::string_view s) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '*') {
      for (size_t j = 0;; ++j) {
        if (glob(p.substr(i + 1), s.substr(j))) return true;
        if (j == s.size()) return false;
      }
    }
    if (s.empty() || (p[i] != '?' && p[i] != s.front())) return false;
    s.remove_prefix(1);
  }
  return s.empty();
}

}  // namespace

bool matches_filter(std::string_view name, std::string_view pattern) {
  while (!pattern.empty()) {
    const size_t comma = pattern.find(',');
    const std::string_view p = pattern.substr(0, comma);
    pattern = comma == std::string_view::npos ? std::string_view{} : pattern.substr(comma + 1);
    if (p.empty()) continue;
    const bool wild = p.find_first_of("*?") != std::string_view::npos;
    if (wild ? glob(p, name) : name.find(p) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace tessera
