// \file The gelu_kernel of samples/02_gelu.cpp (shared with the `tessera` tool).
#pragma once

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;

inline void gelu_kernel(tl::ptr<float> x_ptr, tl::ptr<float> y_ptr, tl::i32 n, int BLOCK) {
  auto pid = tl::program_id(0);
  auto offsets = pid * BLOCK + tl::arange(0, BLOCK);
  auto mask = offsets < n;
  auto x = tl::load(x_ptr + offsets, mask);
  // Approx gelu is 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
  auto a = 0.79788456f * (x + 0.044715f * x * x * x);
  auto exp = tl::exp(2.0f * a);
  auto tanh = (exp - 1.0f) / (exp + 1.0f);
  auto y = 0.5f * x * (1.0f + tanh);
  tl::store(y_ptr + offsets, y, mask);
}

}  // namespace samples
