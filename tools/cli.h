/// \file What the `tessera` subcommands share: usage errors, sizes and plain-text tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::tools {

/// "tessera CMD: WHAT (see `tessera CMD --help`)" on stderr; returns 2, the exit code of bad
/// usage.
int usage_error(std::string_view command, std::string_view what);

/// "0 B", "512 B", "1.5 KiB", "140.4 GiB".
std::string bytes_text(uint64_t bytes);

/// Each column's width: its widest cell.
std::vector<size_t> column_widths(const std::vector<std::vector<std::string>>& rows);

/// The cells padded to `widths`, two spaces apart, without trailing blanks.
std::string table_row(const std::vector<std::string>& cells, const std::vector<size_t>& widths);

}  // namespace tessera::tools
