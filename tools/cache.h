/// \file `tessera cache`: where the disk caches are, their sizes, and clearing them
/// (tools/help.cpp has its help).
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `cache`; returns the exit code.
int cache_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
