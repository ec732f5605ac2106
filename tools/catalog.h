/// \file The kernels the `tessera` tool knows by name (at least every sample's), each with an
/// example specialization so the tool can trace and compile it without a program around it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/ir.h"
#include "runtime/tessera.h"

namespace tessera::tools {

struct CatalogEntry {
  std::string name;
  std::string summary;
  /// Traces the kernel for its example arguments (buffers on `device`) and returns the tile IR
  /// as traced (what a launch with these arguments compiles).
  std::function<std::shared_ptr<const ir::Module>(const Device& device)> traced;
};

const std::vector<CatalogEntry>& catalog();
const CatalogEntry* find_kernel(const std::string& name);

}  // namespace tessera::tools
