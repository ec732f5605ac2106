// \file Triton's tutorial matmul (bench/peers/kernels.py matmul_relu_tutorial_kernel, Triton's
// 03-matrix-multiplication with the ReLU epilogue) in the kernel language, shared by the bench's
// `matmul_relu_tutorial` rows and the conformance catalogue's `rem/tutorial_matmul`.
#pragma once

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;
using tl::_;
using tl::None;

/// relu(A @ B) with Triton's tutorial source, line by line: grouped program order (GROUP_M
/// programs walk down a column of C tiles), rows and columns wrapped with `% M` and `% N` instead
/// of masked (the wrapped rows and columns are computed and never stored), K masked as `offs_k <
/// K - k * BLOCK_K`, the store masked. A 1-D grid of cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)
/// programs. The `%`s keep their runs (16-byte copies of B along N) in the copy of the kernel
/// that runs where a run-time test proves their left sides non-negative (core/passes/
/// rem_version.h).
inline void matmul_relu_tutorial_kernel(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr,
                                        tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                                        tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                                        tl::i32 stride_cm, tl::i32 stride_cn, int BLOCK_M,
                                        int BLOCK_N, int BLOCK_K, int GROUP_M) {
  auto pid = tl::program_id(0);
  auto num_pid_m = tl::cdiv(M, BLOCK_M);
  auto num_pid_n = tl::cdiv(N, BLOCK_N);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_M;
  auto group_size_m = tl::minimum(num_pid_m - first_pid_m, GROUP_M);
  auto pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
  auto pid_n = (pid % num_pid_in_group) / group_size_m;
  auto offs_am = (pid_m * BLOCK_M + tl::arange(0, BLOCK_M)) % M;
  auto offs_bn = (pid_n * BLOCK_N + tl::arange(0, BLOCK_N)) % N;
  auto offs_k = tl::arange(0, BLOCK_K);
  auto a_ptrs = a_ptr + offs_am[{_, None}] * stride_am + offs_k[{None, _}] * stride_ak;
  auto b_ptrs = b_ptr + offs_k[{_, None}] * stride_bk + offs_bn[{None, _}] * stride_bn;
  auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, tl::cdiv(K, BLOCK_K))) {
    auto a = tl::load(a_ptrs, offs_k[{None, _}] < K - k * BLOCK_K, 0.0f);
    auto b = tl::load(b_ptrs, offs_k[{_, None}] < K - k * BLOCK_K, 0.0f);
    acc = tl::dot(a, b, acc);
    a_ptrs += BLOCK_K * stride_ak;
    b_ptrs += BLOCK_K * stride_bk;
  }
  acc = tl::maximum(acc, 0.0f);
  auto offs_cm = pid_m * BLOCK_M + tl::arange(0, BLOCK_M);
  auto offs_cn = pid_n * BLOCK_N + tl::arange(0, BLOCK_N);
  auto c_ptrs = c_ptr + offs_cm[{_, None}] * stride_cm + offs_cn[{None, _}] * stride_cn;
  tl::store(c_ptrs, acc, (offs_cm[{_, None}] < M) & (offs_cn[{None, _}] < N));
}

}  // namespace samples
