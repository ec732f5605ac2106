/// \file A matmul kernel for any input dtype (the matmul_relu sample's loop: pointer tiles carried
/// and advanced each iteration, masked rows, columns and K tail), shared by the lowering and PTX
/// tests.
#pragma once

#include "core/lang/tl.h"

namespace matmul_test {

namespace tl = tessera::tl;

/// c = relu(a @ b) over BLOCK_M x BLOCK_N tiles; a is M x K, b K x N, c M x N (row strides
/// given), accumulating in ACC (IEEE f32 inputs on request).
inline void matmul_kernel(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr, tl::i32 M,
                          tl::i32 N, tl::i32 K, tl::i32 stride_am, tl::i32 stride_bk,
                          tl::i32 stride_cm, int BLOCK_M, int BLOCK_N, int BLOCK_K, tl::DType ACC,
                          bool IEEE) {
  using tl::_;
  using tl::None;
  auto rm = tl::program_id(0) * BLOCK_M + tl::arange(0, BLOCK_M);
  auto rn = tl::program_id(1) * BLOCK_N + tl::arange(0, BLOCK_N);
  auto rk = tl::arange(0, BLOCK_K);
  auto a_ptrs = a_ptr + rm[{_, None}] * stride_am + rk[{None, _}];
  auto b_ptrs = b_ptr + rk[{_, None}] * stride_bk + rn[{None, _}];
  auto acc = tl::zeros({BLOCK_M, BLOCK_N}, ACC);
  for (auto k : tl::range(0, K, BLOCK_K)) {
    auto a = tl::load(a_ptrs, (rm[{_, None}] < M) & (rk[{None, _}] + k < K), 0);
    auto b = tl::load(b_ptrs, (rk[{_, None}] + k < K) & (rn[{None, _}] < N), 0);
    acc = tl::dot(a, b, acc, IEEE ? tl::InputPrecision::Ieee : tl::InputPrecision::Tf32);
    a_ptrs += BLOCK_K;
    b_ptrs += BLOCK_K * stride_bk;
  }
  auto c_ptrs = c_ptr + rm[{_, None}] * stride_cm + rn[{None, _}];
  tl::store(c_ptrs, tl::maximum(acc, 0), (rm[{_, None}] < M) & (rn[{None, _}] < N));
}

}  // namespace matmul_test
