/// \file Small kernel-language helpers shared by the catalogue's kernels.
#pragma once

#include <vector>

#include "core/lang/tl.h"

namespace tessera::conformance {

/// Row-major element offsets of a tile of `shape` (rank >= 1) as an i32 tile of that shape:
/// offsets({M, N}) is arange(M)[:, None] * N + arange(N)[None, :].
inline tl::tensor offsets(const std::vector<int64_t>& shape) {
  tl::tensor off = tl::arange(0, shape[0]);
  for (size_t d = 1; d < shape.size(); ++d) {
    std::vector<int64_t> s(d + 1, 1);
    s[d] = shape[d];
    off = tl::expand_dims(off, -1) * static_cast<int>(shape[d]) +
          tl::reshape(tl::arange(0, shape[d]), s);
  }
  return off;
}

}  // namespace tessera::conformance
