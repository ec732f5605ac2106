/// \file Device fault texts (fault_text.h).
#include "core/support/fault_text.h"

#include <cstdio>

namespace tessera {

std::string format_assert_message(std::string_view message, std::span<const uint64_t> values) {
  if (values.empty()) return std::string(message);
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    // "{k}" or "{k:x}" with k a single digit naming a reported value; anything else is text.
    const bool hex = message.substr(i, 5).size() == 5 && message[i + 2] == ':' &&
                     message[i + 3] == 'x' && message[i + 4] == '}';
    const bool dec = i + 2 < message.size() && message[i + 2] == '}';
    const size_t k = i + 1 < message.size() ? static_cast<size_t>(message[i + 1] - '0') : 10;
    if (message[i] != '{' || k >= values.size() || (!hex && !dec)) {
      out += message[i];
      continue;
    }
    char text[24];
    if (hex)
      std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(values[k]));
    else
      std::snprintf(text, sizeof text, "%lld", static_cast<long long>(values[k]));
    out += text;
    i += hex ? 4 : 2;
  }
  return out;
}

std::string describe_invocation(const uint32_t (&program)[3], uint32_t thread, uint32_t rank,
                                const int32_t (&index)[4]) {
  std::string s = "program (" + std::to_string(program[0]) + ", " + std::to_string(program[1]) +
                  ", " + std::to_string(program[2]) + "), thread " + std::to_string(thread);
  if (rank > 0) {
    s += ", index (";
    for (uint32_t i = 0; i < rank && i < 4; ++i) s += (i ? ", " : "") + std::to_string(index[i]);
    s += ")";
  }
  return s;
}

}  // namespace tessera
