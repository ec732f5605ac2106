// \file The row_sum_kernel of samples/04_row_sum.cpp (shared with the `tessera` tool).
#pragma once

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;

inline void row_sum_kernel(tl::ptr<float> x_ptr, tl::ptr<float> out_ptr, tl::i32 N,
                           int BLOCK_SIZE) {
  auto row = tl::program_id(0);
  // One row: T1 T2 T3 T4 | T1 T2 T3 T4 | T1 T2 T3 T4
  auto acc = tl::zeros<float>({BLOCK_SIZE});
  for (auto start : tl::range(0, N, BLOCK_SIZE)) {
    auto cols = start + tl::arange(0, BLOCK_SIZE);
    auto mask = cols < N;
    auto x = tl::load(x_ptr + row * N + cols, mask, 0.0f);
    acc += x;
  }
  auto result = tl::sum(acc, 0);
  tl::store(out_ptr + row, result);
}

}  // namespace samples
