/// \file The `tessera` tool's help texts, all in one place so that they read as its manual:
/// `tessera --help` and `tessera COMMAND --help` print them (docs/cli.md says the same at length).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::tools {

/// One subcommand: its name, a one-line summary and its full help text.
struct CommandHelp {
  std::string_view name;
  std::string_view summary;
  std::string_view text;  ///< starts with its "usage:" lines
};

/// Every subcommand, in the order `tessera --help` lists them.
const std::vector<CommandHelp>& commands();

/// The command named `name`, or nullptr.
const CommandHelp* find_command(std::string_view name);

/// `tessera --help`: usage, the commands with their summaries, the options and the environment.
std::string general_help();

/// "devices, dump, ...": the command names, for messages.
std::string command_names();

}  // namespace tessera::tools
