// \file The kernels of the ahead-of-time example (main.cpp), written as any kernel is: this file is
// compiled only into the generator tessera_add_kernels() runs at build time, never into the
// program (CMakeLists.txt).
#pragma once

#include <tessera/tessera.h>

namespace example {

namespace tl = tessera::tl;

/// out = x + y, BLOCK elements per program, the tail past n masked.
inline void vector_add_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                              int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
}

/// out[row] = sum of row `row` of x (rows of `cols` floats), BLOCK columns at a time: BLOCK is
/// the compile-time parameter the example builds twice.
inline void row_sum_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 cols, int BLOCK) {
  auto row = tl::program_id(0);
  auto acc = tl::zeros<float>({BLOCK});
  for (auto c0 : tl::range(0, cols, BLOCK)) {
    auto c = c0 + tl::arange(0, BLOCK);
    acc = acc + tl::load(x + row * cols + c, c < cols, 0.0f);
  }
  tl::store(out + row, tl::sum(acc, 0));
}

}  // namespace example
