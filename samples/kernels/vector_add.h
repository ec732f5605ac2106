// \file The vector_add_kernel of samples/01_vector_add.cpp (shared with the `tessera` tool).
#pragma once

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;

// Runtime parameters are handle types; BLOCK is a plain int, so it is a compile-time constant
// and the tile shapes are known while the kernel is traced.
inline void vector_add_kernel(tl::ptr<float> x_ptr, tl::ptr<float> y_ptr, tl::ptr<float> out_ptr,
                              tl::i32 n, int BLOCK) {
  auto pid = tl::program_id(0);
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);  // [BLOCK] i32
  auto mask = offs < n;                            // [BLOCK] i1: false past the end
  auto x = tl::load(x_ptr + offs, mask);           // [BLOCK] f32
  auto y = tl::load(y_ptr + offs, mask);
  tl::store(out_ptr + offs, x + y, mask);
}

}  // namespace samples
