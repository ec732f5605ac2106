/// \file The `tessera` command-line tool: one subcommand per job, each with `--help`
/// (tools/help.cpp holds every help text; docs/cli.md is the manual).
///
///   tessera devices [--verbose]
///   tessera dump <kernel|FILE.tir> [--stage S] [--target PROFILE | --device NAME] ...
///   tessera cache [--clear]
///   tessera conformance | fuzz | bench | triton-diff ...
///   tessera --help | --version | COMMAND --help | help [COMMAND]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "runtime/tessera.h"
#include "tools/cache.h"
#include "tools/conformance.h"
#include "tools/devices.h"
#include "tools/dump.h"
#include "tools/fuzz.h"
#include "tools/help.h"
#include "tools/triton_diff.h"

namespace {

using tessera::tools::CommandHelp;

using Run = int (*)(const std::vector<std::string>&);

/// Each command's entry point, by the name tools/help.cpp lists it under.
Run entry_point(std::string_view name) {
  namespace t = tessera::tools;
  if (name == "devices") return t::devices_main;
  if (name == "dump") return t::dump_main;
  if (name == "cache") return t::cache_main;
  if (name == "conformance") return t::conformance_main;
  if (name == "fuzz") return t::fuzz_main;
  if (name == "bench") return tessera::bench::bench_main;
  if (name == "triton-diff") return t::triton_diff_main;
  return nullptr;
}

bool is_help(const std::string& arg) {
  return arg == "--help" || arg == "-h";
}

/// Edits (insertions, deletions, substitutions) that turn `a` into `b`.
size_t distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// "tessera: unknown command 'x'", a close command's name, and every command; exit code 2.
int unknown_command(const std::string& name) {
  std::string hint;
  for (const CommandHelp& c : tessera::tools::commands())
    if (hint.empty() && distance(name, c.name) <= 2)
      hint = " (did you mean '" + std::string(c.name) + "'?)";
  std::fprintf(stderr, "tessera: unknown command '%s'%s\ncommands: %s (see `tessera --help`)\n",
               name.c_str(), hint.c_str(), tessera::tools::command_names().c_str());
  return 2;
}

/// `tessera help [COMMAND]`.
int help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(tessera::tools::general_help().c_str(), stdout);
    return 0;
  }
  const CommandHelp* c = tessera::tools::find_command(is_help(args[0]) ? "help" : args[0]);
  if (!c) return unknown_command(args[0]);
  std::fwrite(c->text.data(), 1, c->text.size(), stdout);
  return 0;
}

int run(std::vector<std::string> args) {
  if (args.empty()) {
    std::fputs(tessera::tools::general_help().c_str(), stderr);
    return 2;
  }
  const std::string first = args[0];
  args.erase(args.begin());
  if (is_help(first)) return help({});
  if (first == "--version") {
    std::printf("tessera %s\n", std::string(tessera::version()).c_str());
    return 0;
  }
  if (first.starts_with("-")) {
    std::fprintf(stderr, "tessera: unknown option '%s' (see `tessera --help`)\n", first.c_str());
    return 2;
  }
  if (first == "help") return help(args);
  const Run entry = entry_point(first);
  if (!entry) return unknown_command(first);
  if (std::any_of(args.begin(), args.end(), is_help)) return help({first});
  return entry(args);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "";
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: %s: %s\n", std::string(tessera::to_string(e.kind())).c_str(),
                 e.what());
    return 1;
  } catch (const std::invalid_argument& e) {  // std::stoi and friends on a bad number
    std::fprintf(stderr, "tessera %s: a number was expected (%s failed)\n", command.c_str(),
                 e.what());
    return 2;
  } catch (const std::out_of_range& e) {
    std::fprintf(stderr, "tessera %s: a number is out of range (%s failed)\n", command.c_str(),
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: error: %s\n", e.what());
    return 1;
  }
}
