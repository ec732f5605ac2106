/// \file The [outer, n, inner] view of a tile around one axis, shared by the reductions, the
/// scans and their generic (region-combining) forms.
#pragma once

#include <cstdint>

#include "core/ir/types.h"

namespace tessera::interp {

/// A tile seen as [outer, n, inner] around `axis`: element (o, k, i) is at (o * n + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};
AxisSplit split_axis(const ir::Shape& shape, int axis);

}  // namespace tessera::interp
