/// \file The kernels only `tessera bench` uses: the copy that measures the bandwidth ceiling, the
/// L2 flush that runs before every timed launch, a tiny kernel for launch overhead, layer norm,
/// the samples' matmul+ReLU generalized to any input dtype, its grouped-order variant, and an
/// int8 x int8 -> int32 matmul. The samples' gelu, softmax and row sum kernels are used as they
/// are (samples/kernels/*.h).
#pragma once

#include <cmath>
#include <utility>

#include "core/lang/tl.h"
#include "samples/kernels/matmul_tutorial.h"

namespace tessera::bench {

namespace tl = tessera::tl;
using tl::_;
using tl::None;

/// dst[i] = src[i]: the copy whose bandwidth is every memory-bound workload's ceiling.
inline void copy_kernel(tl::pointer src_ptr, tl::pointer dst_ptr, tl::i32 n, int BLOCK) {
  auto offsets = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offsets < n;
  tl::store(dst_ptr + offsets, tl::load(src_ptr + offsets, mask), mask);
}

/// Poisons out[0:n_out] with `poison` (programs 0 .. out_programs-1) and zeroes
/// scratch[0:n_scratch] (the rest), so the timed launch that follows starts with no input in L2
/// (Triton's do_bench clears 256 MB the same way) and writes an output that depends on this
/// launch: the Vulkan runtime then orders the two with a barrier, so the start timestamp cannot
/// run ahead. `poison` (NaN) is a runtime value, converted to out's dtype in the kernel.
inline void flush_kernel(tl::pointer out_ptr, tl::i32 n_out, tl::ptr<float> scratch_ptr,
                         tl::i32 n_scratch, tl::i32 out_programs, tl::f32 poison, int BLOCK) {
  auto pid = tl::program_id(0);
  auto out_offsets = pid * BLOCK + tl::arange(0, BLOCK);
  tl::store(out_ptr + out_offsets, poison, out_offsets < n_out);
  auto scratch_offsets = (pid - out_programs) * BLOCK + tl::arange(0, BLOCK);
  tl::store(scratch_ptr + scratch_offsets, 0.0f,
            (scratch_offsets >= 0) & (scratch_offsets < n_scratch));
}

/// x[0:BLOCK] += 1: one small program, for launch and dispatch overhead (each launch depends on
/// the previous one through x).
inline void tiny_kernel(tl::ptr<float> x_ptr, int BLOCK) {
  auto offsets = tl::arange(0, BLOCK);
  tl::store(x_ptr + offsets, tl::load(x_ptr + offsets) + 1.0f);
}

/// Layer norm forward, one program per row (Triton's tutorial kernel): the mean, then the
/// variance over the row in f32 whatever the input dtype, then y = (x - mean) * rstd * w + b,
/// stored in y's dtype; the row's mean and 1/std are stored too (a backward pass needs them).
inline void layer_norm_kernel(tl::pointer x_ptr, tl::pointer y_ptr, tl::pointer w_ptr,
                              tl::pointer b_ptr, tl::ptr<float> mean_ptr, tl::ptr<float> rstd_ptr,
                              tl::i32 row_stride, tl::i32 N, tl::f32 eps, int BLOCK_SIZE) {
  auto row = tl::program_id(0);
  auto x_row = x_ptr + row * row_stride;
  auto y_row = y_ptr + row * row_stride;
  auto acc = tl::zeros<float>({BLOCK_SIZE});
  for (auto off : tl::range(0, N, BLOCK_SIZE)) {
    auto cols = off + tl::arange(0, BLOCK_SIZE);
    acc += tl::load(x_row + cols, cols < N, 0.0f).to(tl::float32);
  }
  auto mean = tl::sum(acc, 0) / N;
  auto acc_sq = tl::zeros<float>({BLOCK_SIZE});
  for (auto off : tl::range(0, N, BLOCK_SIZE)) {
    auto cols = off + tl::arange(0, BLOCK_SIZE);
    auto x = tl::load(x_row + cols, cols < N, 0.0f).to(tl::float32);
    auto centered = tl::where(cols < N, x - mean, 0.0f);
    acc_sq += centered * centered;
  }
  auto var = tl::sum(acc_sq, 0) / N;
  auto rstd = 1.0f / tl::sqrt(var + eps);
  tl::store(mean_ptr + row, mean);
  tl::store(rstd_ptr + row, rstd);
  for (auto off : tl::range(0, N, BLOCK_SIZE)) {
    auto cols = off + tl::arange(0, BLOCK_SIZE);
    auto mask = cols < N;
    auto w = tl::load(w_ptr + cols, mask);
    auto b = tl::load(b_ptr + cols, mask);
    auto x = tl::load(x_row + cols, mask, 0.0f).to(tl::float32);
    tl::store(y_row + cols, (x - mean) * rstd * w + b, mask);
  }
}

/// Layer norm forward over ROWS rows per program, each row one tile (N <= BLOCK_SIZE): the rows
/// are read once and kept in registers, and w and b are read once per program for all of its
/// rows (the tutorial kernel reads them once per row). STREAM = 1 reads x past L1 (cache "cg")
/// and writes y as streamed ("cs"), so that L1 keeps w and b, which every program reads. EARLY = 1
/// loads w and b with x, before the reductions' barriers, so that their latency overlaps x's (at
/// the cost of the registers that hold them through the reductions); EARLY = 0 loads them where
/// they are used, as the tutorial does. Same outputs as layer_norm_kernel.
inline void layer_norm_rows_kernel(tl::pointer x_ptr, tl::pointer y_ptr, tl::pointer w_ptr,
                                   tl::pointer b_ptr, tl::ptr<float> mean_ptr,
                                   tl::ptr<float> rstd_ptr, tl::i32 M, tl::i32 row_stride,
                                   tl::i32 N, tl::f32 eps, int ROWS, int STREAM, int EARLY,
                                   int BLOCK_SIZE) {
  auto rows = tl::program_id(0) * ROWS + tl::arange(0, ROWS);
  auto cols = tl::arange(0, BLOCK_SIZE);
  auto mask = (rows < M)[{_, None}] & (cols < N)[{None, _}];
  auto offsets = rows[{_, None}] * row_stride + cols[{None, _}];
  auto x = tl::load(x_ptr + offsets, mask, 0.0f, {.cache = STREAM ? "cg" : ""}).to(tl::float32);
  tl::tensor w, b;
  auto load_w_b = [&] {
    w = tl::load(w_ptr + cols, cols < N);
    b = tl::load(b_ptr + cols, cols < N);
  };
  if (EARLY) load_w_b();
  auto mean = tl::sum(x, 1) / N;
  auto centered = tl::where(mask, x - mean[{_, None}], 0.0f);
  auto rstd = 1.0f / tl::sqrt(tl::sum(centered * centered, 1) / N + eps);
  tl::store(mean_ptr + rows, mean, rows < M);
  tl::store(rstd_ptr + rows, rstd, rows < M);
  if (!EARLY) load_w_b();
  tl::store(y_ptr + offsets, centered * rstd[{_, None}] * w[{None, _}] + b[{None, _}], mask,
            {.cache = STREAM ? "cs" : ""});
}

/// Layer norm forward by a persistent grid, each row one tile (N <= BLOCK_SIZE): the program
/// normalizes the rows pid, pid + num_programs, ..., loading the next row's x before reducing this
/// one, so that a row's load is in flight during the arithmetic (without that prefetch the H100
/// ran it 38 % slower, twenty-seventh session). HOLD_WB = 1
/// loads w and b once, before the walk, and holds them in registers; HOLD_WB = 0 loads them for
/// each row after its statistics (from L1, where they stay: ncu counts the tutorial kernel's L2
/// traffic equal to a copy's), leaving the registers to more programs an SM. PER_SM, the programs
/// an SM, is the launch grid's (multiprocessors x PER_SM); the body does not read it. Same
/// outputs as layer_norm_kernel.
inline void layer_norm_persistent_kernel(tl::pointer x_ptr, tl::pointer y_ptr, tl::pointer w_ptr,
                                         tl::pointer b_ptr, tl::ptr<float> mean_ptr,
                                         tl::ptr<float> rstd_ptr, tl::i32 M, tl::i32 row_stride,
                                         tl::i32 N, tl::f32 eps, int HOLD_WB, int PER_SM,
                                         int BLOCK_SIZE) {
  (void)PER_SM;
  auto cols = tl::arange(0, BLOCK_SIZE);
  auto in_row = cols < N;
  auto load_x = [&](const tl::tensor& row) {
    return tl::load(x_ptr + row * row_stride + cols, in_row & (row < M), 0.0f);
  };
  tl::tensor w_held, b_held;
  if (HOLD_WB) {
    w_held = tl::load(w_ptr + cols, in_row);
    b_held = tl::load(b_ptr + cols, in_row);
  }
  auto first = tl::program_id(0), step = tl::num_programs(0);
  tl::tensor x_next = load_x(first);
  for (auto row : tl::range(first, M, step)) {
    auto x = x_next;
    x_next = load_x(row + step);
    auto xf = x.to(tl::float32);
    auto mean = tl::sum(xf, 0) / N;
    auto centered = tl::where(in_row, xf - mean, 0.0f);
    auto rstd = 1.0f / tl::sqrt(tl::sum(centered * centered, 0) / N + eps);
    tl::store(mean_ptr + row, mean);
    tl::store(rstd_ptr + row, rstd);
    auto w = HOLD_WB ? w_held : tl::load(w_ptr + cols, in_row);
    auto b = HOLD_WB ? b_held : tl::load(b_ptr + cols, in_row);
    tl::store(y_ptr + row * row_stride + cols, centered * rstd * w + b, in_row);
  }
}

/// The tile (pid_m, pid_n) of C = relu(A @ B): the seed's tile walk over K, accumulated in f32
/// (f32 inputs use TF32, like Triton), stored in C's dtype. Both matmul_relu kernels run it; they
/// differ only in how a program finds its tile.
template <class PidM, class PidN>
void matmul_relu_tile(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr, tl::i32 M, tl::i32 N,
                      tl::i32 K, tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk,
                      tl::i32 stride_bn, tl::i32 stride_cm, tl::i32 stride_cn, int BLOCK_M,
                      int BLOCK_N, int BLOCK_K, PidM pid_m, PidN pid_n) {
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

/// samples/kernels/matmul_relu.h with dtype-generic pointers: a 2-D grid, program (i, j)
/// computing tile (i, j).
inline void matmul_relu_kernel(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr, tl::i32 M,
                               tl::i32 N, tl::i32 K, tl::i32 stride_am, tl::i32 stride_ak,
                               tl::i32 stride_bk, tl::i32 stride_bn, tl::i32 stride_cm,
                               tl::i32 stride_cn, int BLOCK_M, int BLOCK_N, int BLOCK_K) {
  auto pid_m = tl::program_id(0);
  auto pid_n = tl::program_id(1);
  matmul_relu_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, pid_m, pid_n);
}

/// The C tile (pid_m, pid_n) of this program in grouped order (Triton's tutorial matmul, GROUP_M):
/// GROUP_M consecutive programs walk down a column of C tiles before moving right.
inline std::pair<tl::tensor, tl::tensor> grouped_program(tl::i32 M, tl::i32 N, int BLOCK_M,
                                                         int BLOCK_N, int GROUP_M) {
  auto pid = tl::program_id(0);
  auto num_pid_m = tl::cdiv(M, BLOCK_M);
  auto num_pid_n = tl::cdiv(N, BLOCK_N);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  auto first_pid_m = (pid / num_pid_in_group) * GROUP_M;
  auto group_size_m = tl::minimum(num_pid_m - first_pid_m, GROUP_M);  // the last group may be short
  auto pid_in_group = pid % num_pid_in_group;
  return {first_pid_m + pid_in_group % group_size_m, pid_in_group / group_size_m};
}

/// matmul_relu_kernel in grouped program order (Triton's tutorial matmul, GROUP_M): a 1-D grid
/// of cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs; GROUP_M consecutive programs walk down a
/// column of C tiles before moving right, so programs running together share B column panels
/// and, across the group's width, A row panels in L2. The tile walk and epilogue are the plain
/// kernel's.
inline void matmul_relu_grouped_kernel(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr,
                                       tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                                       tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                                       tl::i32 stride_cm, tl::i32 stride_cn, int BLOCK_M,
                                       int BLOCK_N, int BLOCK_K, int GROUP_M) {
  auto [pid_m, pid_n] = grouped_program(M, N, BLOCK_M, BLOCK_N, GROUP_M);
  matmul_relu_tile(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                   stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, pid_m, pid_n);
}

/// Triton's tutorial matmul ported line by line (samples/kernels/matmul_tutorial.h, shared with
/// the conformance catalogue): the `matmul_relu_tutorial` rows.
using ::samples::matmul_relu_tutorial_kernel;

/// matmul_relu_grouped_kernel with tensor descriptors (Triton 3's tl.make_tensor_descriptor) for
/// A, B and C instead of pointer tiles: the descriptors clip the edges, so the kernel needs no
/// masks. Row-major operands (unit inner strides), as a descriptor's last stride must be. WS
/// (0 or 1): the K loop asks for warp specialization (Triton's `tl.range(...,
/// warp_specialize=True)`).
inline void matmul_relu_desc_kernel(tl::pointer a_ptr, tl::pointer b_ptr, tl::pointer c_ptr,
                                    tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am,
                                    tl::i32 stride_bk, tl::i32 stride_cm, int BLOCK_M, int BLOCK_N,
                                    int BLOCK_K, int GROUP_M, int WS) {
  auto [pid_m, pid_n] = grouped_program(M, N, BLOCK_M, BLOCK_N, GROUP_M);
  auto a_desc = tl::make_tensor_descriptor(a_ptr, {M, K}, {stride_am, 1}, {BLOCK_M, BLOCK_K});
  auto b_desc = tl::make_tensor_descriptor(b_ptr, {K, N}, {stride_bk, 1}, {BLOCK_K, BLOCK_N});
  auto c_desc = tl::make_tensor_descriptor(c_ptr, {M, N}, {stride_cm, 1}, {BLOCK_M, BLOCK_N});
  auto m0 = pid_m * BLOCK_M, n0 = pid_n * BLOCK_N;
  auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, K, BLOCK_K, {.warp_specialize = WS != 0})) {
    auto a = a_desc.load({m0, k});
    auto b = b_desc.load({k, n0});
    acc = tl::dot(a, b, acc);
  }
  c_desc.store({m0, n0}, tl::maximum(acc, 0.0f));
}

/// matmul_relu_desc_kernel as a persistent kernel (Triton's persistent tutorial matmul with
/// descriptors): fewer programs than C tiles (one per multiprocessor), each walking the tiles
/// pid, pid + num_programs, ... in the grouped order, its K loop the same ring.
inline void matmul_relu_desc_persistent_kernel(tl::pointer a_ptr, tl::pointer b_ptr,
                                               tl::pointer c_ptr, tl::i32 M, tl::i32 N, tl::i32 K,
                                               tl::i32 stride_am, tl::i32 stride_bk,
                                               tl::i32 stride_cm, int BLOCK_M, int BLOCK_N,
                                               int BLOCK_K, int GROUP_M) {
  auto a_desc = tl::make_tensor_descriptor(a_ptr, {M, K}, {stride_am, 1}, {BLOCK_M, BLOCK_K});
  auto b_desc = tl::make_tensor_descriptor(b_ptr, {K, N}, {stride_bk, 1}, {BLOCK_K, BLOCK_N});
  auto c_desc = tl::make_tensor_descriptor(c_ptr, {M, N}, {stride_cm, 1}, {BLOCK_M, BLOCK_N});
  auto num_pid_m = tl::cdiv(M, BLOCK_M);
  auto num_pid_n = tl::cdiv(N, BLOCK_N);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  for (auto tile : tl::range(tl::program_id(0), num_pid_m * num_pid_n, tl::num_programs(0))) {
    auto first_pid_m = (tile / num_pid_in_group) * GROUP_M;
    auto group_size_m = tl::minimum(num_pid_m - first_pid_m, GROUP_M);
    auto in_group = tile % num_pid_in_group;
    auto m0 = (first_pid_m + in_group % group_size_m) * BLOCK_M;
    auto n0 = in_group / group_size_m * BLOCK_N;
    auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
    for (auto k : tl::range(0, K, BLOCK_K)) {
      auto a = a_desc.load({m0, k});
      auto b = b_desc.load({k, n0});
      acc = tl::dot(a, b, acc);
    }
    c_desc.store({m0, n0}, tl::maximum(acc, 0.0f));
  }
}

/// C = A @ B for int8 A and B, accumulated and stored in i32 (exact), no epilogue: the plain
/// matmul's tile walk (2-D grid) with i8 tiles, whose tl::dot yields i32.
inline void matmul_int8_kernel(tl::ptr<int8_t> a_ptr, tl::ptr<int8_t> b_ptr, tl::ptr<int32_t> c_ptr,
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
  auto acc = tl::zeros<int32_t>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, K, BLOCK_K)) {
    auto a = tl::load(a_ptrs, (indices_m[{_, None}] < M) & (indices_k[{None, _}] + k < K), 0);
    auto b = tl::load(b_ptrs, (indices_k[{_, None}] + k < K) & (indices_n[{None, _}] < N), 0);
    acc += tl::dot(a, b);
    a_ptrs += BLOCK_K * stride_ak;
    b_ptrs += BLOCK_K * stride_bk;
  }
  auto c_ptrs = c_ptr + indices_m[{_, None}] * stride_cm + indices_n[{None, _}] * stride_cn;
  tl::store(c_ptrs, acc, (indices_m[{_, None}] < M) & (indices_n[{None, _}] < N));
}

}  // namespace tessera::bench
