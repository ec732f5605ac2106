/// \file Usage errors, sizes and tables for the `tessera` subcommands.
#include "tools/cli.h"

#include <algorithm>
#include <cstdio>

namespace tessera::tools {

int usage_error(std::string_view command, std::string_view what) {
  std::fprintf(stderr, "tessera %.*s: %.*s (see `tessera %.*s --help`)\n",
               static_cast<int>(command.size()), command.data(), static_cast<int>(what.size()),
               what.data(), static_cast<int>(command.size()), command.data());
  return 2;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  for (; value >= 1024 && unit + 1 < std::size(units); ++unit) value /= 1024;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::vector<size_t> column_widths(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size());
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  return widths;
}

std::string table_row(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t c = 0; c < cells.size(); ++c) {
    line += cells[c];
    if (c + 1 < cells.size()) line += std::string(widths[c] - cells[c].size() + 2, ' ');
  }
  return line.substr(0, line.find_last_not_of(' ') + 1);
}

}  // namespace tessera::tools
