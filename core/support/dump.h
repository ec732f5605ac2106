/// \file TESSERA_DUMP: which compilation stages and driver reports to print on stderr.
#pragma once

#include <string_view>

namespace tessera {

/// Is `stage` one of the comma-separated names in TESSERA_DUMP ("ir,ptx", "vkstats")? Read on
/// every call: tests and tools set the variable while running.
bool dump_enabled(std::string_view stage);

}  // namespace tessera
