/// \file Name filters of the command-line tools (`--filter` of conformance, bench, fuzz).
#pragma once

#include <string_view>

namespace tessera {

/// Does `name` match `pattern`? `*` matches any run of characters and `?` one character; a
/// pattern without either matches as a substring. Several patterns may be comma-separated.
bool matches_filter(std::string_view name, std::string_view pattern);

}  // namespace tessera
