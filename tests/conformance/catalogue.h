/// \file The conformance catalogue: every case of every category, in a fixed order.
#pragma once

#include <vector>

#include "tests/conformance/framework.h"

namespace tessera::conformance {

/// All cases, grouped by category (the first component of their names).
const std::vector<Case>& catalogue();

}  // namespace tessera::conformance
