#include "core/support/dump.h"

#include <cstdlib>

namespace tessera {

bool dump_enabled(std::string_view stage) {
  const char* env = std::getenv("TESSERA_DUMP");
  if (!env) return false;
  std::string_view s(env);
  for (size_t pos = 0; pos <= s.size();) {
    size_t end = s.find(',', pos);
    if (end == std::string_view::npos) end = s.size();
    if (s.substr(pos, end - pos) == stage) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace tessera
