// \file The softmax_kernel of samples/03_softmax.cpp (shared with the `tessera` tool).
#pragma once

#include <cmath>

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;

inline void softmax_kernel(tl::ptr<float> x_ptr, tl::ptr<float> y_ptr, tl::i32 x_row_stride,
                           tl::i32 y_row_stride, tl::i32 num_cols, int BLOCK_SIZE) {
  auto row_idx = tl::program_id(0);
  auto col_offsets = tl::arange(0, BLOCK_SIZE);
  auto x_start_ptr = x_ptr + row_idx * x_row_stride;
  auto x_ptrs = x_start_ptr + col_offsets;
  auto x_row = tl::load(x_ptrs, col_offsets < num_cols, -INFINITY);
  x_row = x_row - tl::max(x_row, 0);  // safe softmax: subtract the row maximum
  auto numerator = tl::exp(x_row);
  auto denominator = tl::sum(numerator, 0);
  auto y_row = numerator / denominator;
  auto y_start_ptr = y_ptr + row_idx * y_row_stride;
  auto y_ptrs = y_start_ptr + col_offsets;
  tl::store(y_ptrs, y_row, col_offsets < num_cols);
}

}  // namespace samples
