// \file The attention_kernel of samples/06_attention.cpp (shared with the conformance catalogue and
// the bench): the forward pass of attention with the online softmax (FlashAttention's way),
// out = softmax(q k^T * sm_scale) v per (batch, head), never forming the seq x seq matrix.
#pragma once

#include <cmath>

#include "core/lang/tl.h"

namespace samples {

namespace tl = tessera::tl;
using tl::_;
using tl::None;

/// One program: BLOCK_M query rows of one (batch, head). q, k, v and out are [batch * heads, seq,
/// HEAD_DIM] row-major, of one dtype (f16 or bf16); `qk_scale` is sm_scale * log2(e), so that
/// the softmax runs on exp2. The loop walks the keys BLOCK_N at a time, keeping each row's running
/// maximum m and sum l of exp2(s - m), and rescales the accumulator when m grows. CAUSAL (0 or
/// 1): row i attends to keys 0..i only, and the loop stops at the block's last row.
inline void attention_kernel(tl::pointer q, tl::pointer k, tl::pointer v, tl::pointer out,
                             tl::f32 qk_scale, tl::i32 seq, int HEAD_DIM, int BLOCK_M, int BLOCK_N,
                             int CAUSAL) {
  auto start_m = tl::program_id(0) * BLOCK_M;
  auto head = tl::program_id(1).to(tl::DType::i64) * seq * HEAD_DIM;  // i64: past 2^31 elements
  auto rows = start_m + tl::arange(0, BLOCK_M);
  auto cols = tl::arange(0, BLOCK_N);
  auto dims = tl::arange(0, HEAD_DIM);
  auto row_in = rows[{_, None}] < seq;
  auto q_tile = tl::load(q + head + rows[{_, None}] * HEAD_DIM + dims[{None, _}], row_in);
  auto m = tl::full({BLOCK_M}, -INFINITY, tl::DType::f32);
  auto l = tl::zeros<float>({BLOCK_M});
  auto acc = tl::zeros<float>({BLOCK_M, HEAD_DIM});
  tl::tensor end = seq;
  if (CAUSAL) end = tl::minimum(start_m + BLOCK_M, seq);
  for (auto n0 : tl::range(0, end, BLOCK_N)) {
    auto keys = n0 + cols;
    auto key_in = keys[{None, _}] < seq;
    // k^T: HEAD_DIM x BLOCK_N, read along the head dimension of each key.
    auto k_tile = tl::load(k + head + keys[{None, _}] * HEAD_DIM + dims[{_, None}], key_in);
    auto s = tl::dot(q_tile, k_tile) * qk_scale;
    auto keep = CAUSAL ? key_in & (rows[{_, None}] >= keys[{None, _}]) : key_in;
    s = tl::where(keep, s, -INFINITY);
    auto m_new = tl::maximum(m, tl::max(s, 1));
    auto p = tl::exp2(s - m_new[{_, None}]);
    auto alpha = tl::exp2(m - m_new);
    l = l * alpha + tl::sum(p, 1);
    auto v_tile =
        tl::load(v + head + keys[{_, None}] * HEAD_DIM + dims[{None, _}], keys[{_, None}] < seq);
    acc = tl::dot(p.to(v_tile.dtype()), v_tile, acc * alpha[{_, None}]);
    m = m_new;
  }
  acc = acc / l[{_, None}];
  tl::store(out + head + rows[{_, None}] * HEAD_DIM + dims[{None, _}], acc.to(q_tile.dtype()),
            row_in);
}

/// attention_kernel with tensor descriptors (Triton 3's tutorial form): q, k, v and out are seen
/// as one [batch * heads * seq, HEAD_DIM] matrix (`rows` = batch * heads * seq), and each block
/// is read by a descriptor load, which TMA copies on sm_90 (and which is a masked load on every
/// other target). A key block that runs past its head's end reads the next head's first keys (or
/// zeros past the last head): their scores are masked to -inf, so their weights p are exactly 0
/// and, the inputs being finite, they add nothing. Rows of a query block past the head's end are
/// computed the same way and not stored (a masked pointer store). WS = 1 asks for warp
/// specialization of the key loop (a TMA producer warpgroup; tl::range's warp_specialize).
inline void attention_desc_kernel(tl::pointer q, tl::pointer k, tl::pointer v, tl::pointer out,
                                  tl::f32 qk_scale, tl::i32 seq, tl::i32 rows, int HEAD_DIM,
                                  int BLOCK_M, int BLOCK_N, int CAUSAL, int WS) {
  auto start_m = tl::program_id(0) * BLOCK_M;
  auto first = tl::program_id(1) * seq;  // the head's first row of the [rows, HEAD_DIM] view
  auto q_desc = tl::make_tensor_descriptor(q, {rows, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_M, HEAD_DIM});
  auto k_desc = tl::make_tensor_descriptor(k, {rows, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N, HEAD_DIM});
  auto v_desc = tl::make_tensor_descriptor(v, {rows, HEAD_DIM}, {HEAD_DIM, 1}, {BLOCK_N, HEAD_DIM});
  auto q_tile = q_desc.load({first + start_m, 0});
  auto rows_m = start_m + tl::arange(0, BLOCK_M);
  auto cols = tl::arange(0, BLOCK_N);
  auto m = tl::full({BLOCK_M}, -INFINITY, tl::DType::f32);
  auto l = tl::zeros<float>({BLOCK_M});
  auto acc = tl::zeros<float>({BLOCK_M, HEAD_DIM});
  tl::tensor end = seq;
  if (CAUSAL) end = tl::minimum(start_m + BLOCK_M, seq);
  for (auto n0 : tl::range(0, end, BLOCK_N, {.warp_specialize = WS != 0})) {
    auto keys = n0 + cols;
    auto s = tl::dot(q_tile, tl::trans(k_desc.load({first + n0, 0}))) * qk_scale;
    auto key_in = keys[{None, _}] < seq;
    auto keep = CAUSAL ? key_in & (rows_m[{_, None}] >= keys[{None, _}]) : key_in;
    s = tl::where(keep, s, -INFINITY);
    auto m_new = tl::maximum(m, tl::max(s, 1));
    auto p = tl::exp2(s - m_new[{_, None}]);
    auto alpha = tl::exp2(m - m_new);
    l = l * alpha + tl::sum(p, 1);
    auto v_tile = v_desc.load({first + n0, 0});
    acc = tl::dot(p.to(v_tile.dtype()), v_tile, acc * alpha[{_, None}]);
    m = m_new;
  }
  acc = acc / l[{_, None}];
  auto dims = tl::arange(0, HEAD_DIM);
  auto at = out + (first + rows_m)[{_, None}].to(tl::DType::i64) * HEAD_DIM + dims[{None, _}];
  tl::store(at, acc.to(q_tile.dtype()), rows_m[{_, None}] < seq);
}

}  // namespace samples
