/// \file `tessera devices`: the devices of this machine as a table (tools/help.cpp has its help).
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

/// Runs the subcommand with the arguments after `devices`; returns the exit code.
int devices_main(const std::vector<std::string>& args);

}  // namespace tessera::tools
