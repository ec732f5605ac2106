# \file Triton ports of Tessera's benchmark kernels (samples/kernels/*.h and bench/kernels.h),
# line for line, plus the tuned variant of matmul (Triton's tutorial kernel with grouped program
# order, matmul_relu_tutorial_kernel). peers.py runs them; nothing here times or checks.

import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    a = 0.79788456 * (x + 0.044715 * x * x * x)
    exp = tl.exp(2.0 * a)
    tanh = (exp - 1.0) / (exp + 1.0)
    y = 0.5 * x * (1.0 + tanh)
    tl.store(y_ptr + offsets, y, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, num_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    x_ptrs = x_ptr + row_idx * x_row_stride + col_offsets
    x_row = tl.load(x_ptrs, mask=col_offsets < num_cols, other=-float("inf"))
    x_row = x_row - tl.max(x_row, axis=0)
    numerator = tl.exp(x_row)
    denominator = tl.sum(numerator, axis=0)
    y_row = numerator / denominator
    y_ptrs = y_ptr + row_idx * y_row_stride + col_offsets
    tl.store(y_ptrs, y_row, mask=col_offsets < num_cols)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        acc += tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, N, eps,
                      BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc_sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.0)
        acc_sq += centered * centered
    var = tl.sum(acc_sq, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def matmul_relu_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                       stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """The seed's kernel: a 2-D grid, row-major program order."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    indices_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    indices_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    indices_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + indices_m[:, None] * stride_am + indices_k[None, :] * stride_ak
    b_ptrs = b_ptr + indices_k[:, None] * stride_bk + indices_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(indices_m[:, None] < M) & (indices_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(indices_k[:, None] + k < K) & (indices_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = tl.maximum(acc, 0.0)
    c_ptrs = c_ptr + indices_m[:, None] * stride_cm + indices_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(indices_m[:, None] < M) & (indices_n[None, :] < N))


@triton.jit
def grouped_program(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """This program's C tile (pid_m, pid_n) in grouped order (bench/kernels.h grouped_program)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_in_group = pid % num_pid_in_group
    return first_pid_m + pid_in_group % group_size_m, pid_in_group // group_size_m


@triton.jit
def matmul_relu_grouped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                               stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                               BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                               GROUP_M: tl.constexpr):
    """The seed's kernel in grouped program order (bench/kernels.h): a 1-D grid, the program id
    remapped as in Triton's tutorial; the tile walk and epilogue are the seed's."""
    pid_m, pid_n = grouped_program(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    indices_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    indices_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    indices_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + indices_m[:, None] * stride_am + indices_k[None, :] * stride_ak
    b_ptrs = b_ptr + indices_k[:, None] * stride_bk + indices_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(indices_m[:, None] < M) & (indices_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(indices_k[:, None] + k < K) & (indices_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = tl.maximum(acc, 0.0)
    c_ptrs = c_ptr + indices_m[:, None] * stride_cm + indices_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(indices_m[:, None] < M) & (indices_n[None, :] < N))


@triton.jit
def matmul_relu_desc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr, WS: tl.constexpr = False):
    """The grouped kernel with tensor descriptors (bench/kernels.h matmul_relu_desc_kernel). On
    Hopper Triton lowers the descriptors to TMA; the descriptors need the global scratch that
    peers.py registers with triton.set_allocator. WS: the K loop warp-specialized."""
    pid_m, pid_n = grouped_program(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [stride_am, 1], [BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [stride_bk, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [stride_cm, 1], [BLOCK_M, BLOCK_N])
    m0 = pid_m * BLOCK_M
    n0 = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WS):
        a = a_desc.load([m0, k])
        b = b_desc.load([k, n0])
        acc = tl.dot(a, b, acc)
    c_desc.store([m0, n0], tl.maximum(acc, 0.0).to(c_ptr.dtype.element_ty))


@triton.jit
def matmul_int8_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                       stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """int8 x int8 -> int32 (bench/kernels.h): the seed's tile walk, i32 accumulation (tl.dot of
    int8 tiles yields int32), no epilogue."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    indices_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    indices_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    indices_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + indices_m[:, None] * stride_am + indices_k[None, :] * stride_ak
    b_ptrs = b_ptr + indices_k[:, None] * stride_bk + indices_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(indices_m[:, None] < M) & (indices_k[None, :] + k < K), other=0)
        b = tl.load(b_ptrs, mask=(indices_k[:, None] + k < K) & (indices_n[None, :] < N), other=0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + indices_m[:, None] * stride_cm + indices_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(indices_m[:, None] < M) & (indices_n[None, :] < N))


@triton.jit
def matmul_fp8_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """e4m3 x e4m3 -> f32 accumulation -> f16 (bench/matmul_fp8.cpp): the int8 kernel's walk,
    B column-major (element (k, n) at n * stride_bn + k), as torch._scaled_mm takes it."""
    indices_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    indices_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    indices_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + indices_m[:, None] * stride_am + indices_k[None, :]
    b_ptrs = b_ptr + indices_k[:, None] + indices_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(indices_m[:, None] < M) & (indices_k[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(indices_k[:, None] + k < K) & (indices_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + indices_m[:, None] * stride_cm + indices_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(indices_m[:, None] < M) & (indices_n[None, :] < N))


@triton.jit
def matmul_relu_tutorial_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                                stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                GROUP_M: tl.constexpr):
    """Triton's tutorial matmul (grouped program order for L2 reuse) with the ReLU epilogue."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    acc = tl.maximum(acc, 0.0)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def attention_kernel(q, k, v, out, qk_scale, seq, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """samples/kernels/attention.h line for line: BLOCK_M query rows of one (batch, head), the
    keys BLOCK_N at a time with the online softmax on exp2."""
    start_m = tl.program_id(0) * BLOCK_M
    head = tl.program_id(1).to(tl.int64) * seq * HEAD_DIM
    rows = start_m + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    row_in = rows[:, None] < seq
    q_tile = tl.load(q + head + rows[:, None] * HEAD_DIM + dims[None, :], mask=row_in)
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    end = seq
    if CAUSAL:
        end = tl.minimum(start_m + BLOCK_M, seq)
    for n0 in range(0, end, BLOCK_N):
        keys = n0 + cols
        key_in = keys[None, :] < seq
        k_tile = tl.load(k + head + keys[None, :] * HEAD_DIM + dims[:, None], mask=key_in)
        s = tl.dot(q_tile, k_tile) * qk_scale
        keep = key_in
        if CAUSAL:
            keep = key_in & (rows[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        v_tile = tl.load(v + head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < seq)
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * alpha[:, None])
        m = m_new
    acc = acc / l[:, None]
    tl.store(out + head + rows[:, None] * HEAD_DIM + dims[None, :], acc.to(q_tile.dtype),
             mask=row_in)


@triton.jit
def attention_desc_kernel(q, k, v, out, qk_scale, seq, rows, HEAD_DIM: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                          WS: tl.constexpr):
    """samples/kernels/attention.h's attention_desc_kernel line for line: descriptors over the
    [batch * heads * seq, HEAD_DIM] view, the key loop warp-specialized when WS."""
    start_m = tl.program_id(0) * BLOCK_M
    first = tl.program_id(1) * seq
    q_desc = tl.make_tensor_descriptor(q, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    q_tile = q_desc.load([first + start_m, 0])
    rows_m = start_m + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    end = seq
    if CAUSAL:
        end = tl.minimum(start_m + BLOCK_M, seq)
    for n0 in tl.range(0, end, BLOCK_N, warp_specialize=WS):
        keys = n0 + cols
        s = tl.dot(q_tile, tl.trans(k_desc.load([first + n0, 0]))) * qk_scale
        key_in = keys[None, :] < seq
        keep = key_in
        if CAUSAL:
            keep = key_in & (rows_m[:, None] >= keys[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        v_tile = v_desc.load([first + n0, 0])
        acc = tl.dot(p.to(v_tile.dtype), v_tile, acc * alpha[:, None])
        m = m_new
    acc = acc / l[:, None]
    dims = tl.arange(0, HEAD_DIM)
    at = out + (first + rows_m)[:, None].to(tl.int64) * HEAD_DIM + dims[None, :]
    tl.store(at, acc.to(q_tile.dtype), mask=rows_m[:, None] < seq)


@triton.jit
def tiny_kernel(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)
