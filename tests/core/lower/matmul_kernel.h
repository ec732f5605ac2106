/// \file A matmul kernel for any input dtype (the matmul_relu sample's loop: pointer tiles carried
/// and advanced each iteration, masked rows, columns and K tail), shared by the lowering and PTX
/// tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/lang/tl.h"
#include "core/lang/trace.h"

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

/// Traced argument descriptions: a pointer (and an i32) known divisible by 16, a constant.
inline tl::ArgSpec ptr_arg(tessera::ir::DType t) {
  tl::ArgSpec s;
  s.dtype = t;
  s.divisible_by_16 = true;
  return s;
}
inline tl::ArgSpec i32_arg() {
  tl::ArgSpec s;
  s.divisible_by_16 = true;
  return s;
}
inline tl::ArgSpec const_arg(int64_t v, tl::ConstValue::Kind kind = tl::ConstValue::Kind::Int) {
  tl::ArgSpec s;
  s.value.kind = kind;
  s.value.i = v;
  return s;
}

/// matmul_kernel traced for `in` inputs (i32 accumulation for i8, else f32) with BM x BN x BK
/// tiles: pointers and integer arguments divisible by 16, IEEE f32 inputs on request.
inline std::unique_ptr<tessera::ir::Module> trace_matmul(tessera::ir::DType in, int bm, int bn,
                                                         int bk, bool ieee = false) {
  using tessera::ir::DType;
  const DType acc = in == DType::i8 ? DType::i32 : DType::f32;
  const tl::ArgSpec i32 = i32_arg();
  std::vector<tl::ArgSpec> specs = {
      ptr_arg(in),
      ptr_arg(in),
      ptr_arg(acc),
      i32,
      i32,
      i32,
      i32,
      i32,
      i32,
      const_arg(bm),
      const_arg(bn),
      const_arg(bk),
      const_arg(static_cast<int64_t>(acc), tl::ConstValue::Kind::DType),
      const_arg(ieee, tl::ConstValue::Kind::Bool)};
  std::vector<std::string> names = {"a",   "b",   "c",  "M",  "N",  "K",   "sam",
                                    "sbk", "scm", "BM", "BN", "BK", "ACC", "IEEE"};
  return tl::trace(matmul_kernel, "matmul", names, specs);
}

}  // namespace matmul_test
