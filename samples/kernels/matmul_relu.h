// \file The matmul_relu_kernel of samples/05_matmul_relu.cpp (shared with the `tessera` tool).
#pragma once

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;
using tl::_;
using tl::None;

inline void matmul_relu_kernel(tl::ptr<float> a_ptr, tl::ptr<float> b_ptr, tl::ptr<float> c_ptr,
                               tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                               tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                               tl::i32 stride_cm, tl::i32 stride_cn, int BLOCK_M, int BLOCK_N,
                               int BLOCK_K) {
  auto pid_m = tl::program_id(0);
  auto pid_n = tl::program_id(1);
  auto indices_m = pid_m * BLOCK_M + tl::arange(0, BLOCK_M);
  auto indices_n = pid_n * BLOCK_N + tl::arange(0, BLOCK_N);
  auto indices_k = tl::arange(0, BLOCK_K);
  auto a_ptrs = a_ptr + indices_m[{_, None}] * stride_am + indices_k[{None, _}] * stride_ak;
  auto b_ptrs = b_ptr + indices_k[{_, None}] * stride_bk + indices_n[{None, _}] * stride_bn;
  auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, K, BLOCK_K)) {
    auto a = tl::load(a_ptrs, (indices_m[{_, None}] < M) & (indices_k[{None, _}] + k < K), 0.0f);
    auto b = tl::load(b_ptrs, (indices_k[{_, None}] + k < K) & (indices_n[{None, _}] < N), 0.0f);
    acc += tl::dot(a, b);
    a_ptrs += BLOCK_K * stride_ak;
    b_ptrs += BLOCK_K * stride_bk;
  }
  acc = tl::maximum(acc, 0.0f);
  auto c_ptrs = c_ptr + indices_m[{_, None}] * stride_cm + indices_n[{None, _}] * stride_cn;
  tl::store(c_ptrs, acc, (indices_m[{_, None}] < M) & (indices_n[{None, _}] < N));
}

}  // namespace samples
