# \file The Triton twins of `tessera triton-diff`'s cases (tools/triton_diff.cpp): the seed
# kernels come from kernels.py, the op-family kernels are here, each the same program as its
# Tessera twin line for line. run(name, inputs, params) launches one with the grid and block
# sizes the Tessera side used and returns its outputs by name. diff.py compares.

import torch
import triton
import triton.language as tl

import kernels

try:  # Triton 3.x: CUDA's libdevice functions
    from triton.language.extra import libdevice
except ImportError:  # older spelling
    from triton.language.extra.cuda import libdevice


@triton.jit
def minmax_kernel(x, y, relu, lo, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(relu + offs, tl.maximum(a, 0.0), mask=m)
    tl.store(lo + offs, tl.minimum(a, b), mask=m)


@triton.jit
def unary_where_kernel(x, y, e, w, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(e + offs, tl.exp(a), mask=m)
    tl.store(w + offs, tl.where(a > b, a, 2.0 * b), mask=m)


@triton.jit
def division_kernel(x, y, q, r, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(q + offs, a // b, mask=m)
    tl.store(r + offs, a / b, mask=m)


@triton.jit
def cast_kernel(x, h, i, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    tl.store(h + offs, a.to(tl.float16), mask=m)
    tl.store(i + offs, a.to(tl.int32), mask=m)


@triton.jit
def reduce_kernel(x, h, mx, s, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    tl.store(mx + row, tl.max(tl.load(x + row * n + cols, mask=m, other=-float("inf")), 0))
    tl.store(s + row, tl.sum(tl.load(h + row * n + cols, mask=m, other=0.0), 0))


@triton.jit
def cumsum_kernel(x, out, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    tl.store(out + row * n + cols, tl.cumsum(tl.load(x + row * n + cols, mask=m, other=0.0), 0),
             mask=m)


@triton.jit
def dot_kernel(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    at = tl.load(a + rm[:, None] * K + rk[None, :])
    bt = tl.load(b + rk[:, None] * N + rn[None, :])
    tl.store(c + rm[:, None] * N + rn[None, :], tl.dot(at, bt))


@triton.jit
def histogram_kernel(x, bins, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(bins + (tl.load(x + offs, mask=m, other=0) & 63), 1, mask=m)


@triton.jit
def random_kernel(ri, ru, rn, seed, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(ri + offs, tl.randint(seed, offs), mask=m)
    tl.store(ru + offs, tl.rand(seed, offs), mask=m)
    tl.store(rn + offs, tl.randn(seed, offs), mask=m)


# --- the ops of the Triton-language wave (H15) -------------------------------------------------

LIBDEVICE_UNARY = ["erfinv", "expm1", "log10", "sinh", "cosh", "asin", "acos", "atan", "cbrt"]
LIBDEVICE_BINARY = ["pow", "atan2", "hypot"]


@triton.jit
def libdevice_kernel(x, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    if FN == 0:
        r = libdevice.erfinv(a)
    elif FN == 1:
        r = libdevice.expm1(a)
    elif FN == 2:
        r = libdevice.log10(a)
    elif FN == 3:
        r = libdevice.sinh(a)
    elif FN == 4:
        r = libdevice.cosh(a)
    elif FN == 5:
        r = libdevice.asin(a)
    elif FN == 6:
        r = libdevice.acos(a)
    elif FN == 7:
        r = libdevice.atan(a)
    else:
        r = libdevice.cbrt(a)
    tl.store(y + offs, r, mask=m)


@triton.jit
def libdevice2_kernel(x, z, y, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(z + offs, mask=m)
    if FN == 0:
        r = libdevice.pow(a, b)
    elif FN == 1:
        r = libdevice.atan2(a, b)
    else:
        r = libdevice.hypot(a, b)
    tl.store(y + offs, r, mask=m)


@triton.jit
def sort_kernel(x, up, down, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    tl.store(up + offs, tl.sort(a))
    tl.store(down + offs, tl.sort(a, 0, True))


@triton.jit
def histogram_op_kernel(x, bins, BLOCK: tl.constexpr, BINS: tl.constexpr):
    row = tl.program_id(0)
    a = tl.load(x + row * BLOCK + tl.arange(0, BLOCK))
    tl.store(bins + row * BINS + tl.arange(0, BINS), tl.histogram(a, BINS))


@triton.jit
def gather_kernel(src, idx, out, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None] * C
    cols = tl.arange(0, C)[None, :]
    s = tl.load(src + rows + cols)
    i = tl.load(idx + rows + cols)
    tl.store(out + rows + cols, tl.gather(s, i, 1))


@triton.jit
def block_ptr_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    src = tl.make_block_ptr(x, (M, N), (N, 1), (pm * BM, pn * BN - BN), (BM, BN), (1, 0))
    src = tl.advance(src, (0, BN))
    dst = tl.make_block_ptr(y, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))


def _run_wave(name, t, p):
    """The twins of the Triton-language wave's cases, or None for another case."""
    empty = torch.empty_like
    if name in LIBDEVICE_UNARY:
        n, block = _i(p, "n"), _i(p, "BLOCK")
        y = empty(t["x"])
        libdevice_kernel[(triton.cdiv(n, block),)](t["x"], y, n, FN=_i(p, "FN"), BLOCK=block)
        return {"y": y}
    if name in LIBDEVICE_BINARY:
        n, block = _i(p, "n"), _i(p, "BLOCK")
        y = empty(t["a"])
        libdevice2_kernel[(triton.cdiv(n, block),)](t["a"], t["b"], y, n, FN=_i(p, "FN"),
                                                    BLOCK=block)
        return {"y": y}
    if name == "sort":
        up, down = empty(t["x"]), empty(t["x"])
        sort_kernel[(_i(p, "rows"),)](t["x"], up, down, BLOCK=_i(p, "BLOCK"))
        return {"up": up, "down": down}
    if name == "histogram_op":
        rows, bins_n = _i(p, "rows"), _i(p, "BINS")
        bins = torch.empty((rows, bins_n), device="cuda", dtype=torch.int32)
        histogram_op_kernel[(rows,)](t["x"], bins, BLOCK=_i(p, "BLOCK"), BINS=bins_n)
        return {"bins": bins}
    if name == "gather":
        out = empty(t["src"])
        gather_kernel[(1,)](t["src"], t["idx"], out, R=_i(p, "R"), C=_i(p, "C"))
        return {"out": out}
    if name == "block_ptr_copy":
        M, N, bm, bn = _i(p, "M"), _i(p, "N"), _i(p, "BM"), _i(p, "BN")
        y = empty(t["x"])
        block_ptr_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](t["x"], y, M, N, BM=bm, BN=bn)
        return {"y": y}
    return None


def _i(params, key):
    return int(params[key])


def run(name, t, p):
    """Launches the twin of case `name` on the input tensors `t` with parameters `p`."""
    wave = _run_wave(name, t, p)
    if wave is not None:
        return wave
    empty = torch.empty_like
    if name in ("vector_add", "gelu", "minmax_nan", "exp_where", "int_division", "casts",
                "histogram"):
        n, block = _i(p, "n"), _i(p, "BLOCK")
        grid = (triton.cdiv(n, block),)
    if name == "vector_add":
        out = empty(t["x"])
        kernels.vector_add_kernel[grid](t["x"], t["y"], out, n, BLOCK=block)
        return {"out": out}
    if name == "gelu":
        out = empty(t["x"])
        kernels.gelu_kernel[grid](t["x"], out, n, BLOCK=block)
        return {"out": out}
    if name == "softmax":
        M, N = _i(p, "M"), _i(p, "N")
        y = empty(t["x"])
        kernels.softmax_kernel[(M,)](t["x"], y, N, N, N, BLOCK_SIZE=_i(p, "BLOCK"))
        return {"y": y}
    if name == "row_sum":
        M, N = _i(p, "M"), _i(p, "N")
        out = torch.empty(M, device="cuda", dtype=torch.float32)
        kernels.row_sum_kernel[(M,)](t["x"], out, N, BLOCK_SIZE=_i(p, "BLOCK"))
        return {"out": out}
    if name == "matmul_relu":
        M, N, K = _i(p, "M"), _i(p, "N"), _i(p, "K")
        bm, bn, bk = _i(p, "BLOCK_M"), _i(p, "BLOCK_N"), _i(p, "BLOCK_K")
        c = torch.empty((M, N), device="cuda", dtype=torch.float32)
        kernels.matmul_relu_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
            t["a"], t["b"], c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
        return {"c": c}
    if name == "attention":
        bh, seq, d = _i(p, "BH"), _i(p, "SEQ"), _i(p, "HEAD_DIM")
        bm, bn = _i(p, "BLOCK_M"), _i(p, "BLOCK_N")
        out = empty(t["q"])
        kernels.attention_kernel[(triton.cdiv(seq, bm), bh)](
            t["q"], t["k"], t["v"], out, float(p["qk_scale"]), seq, HEAD_DIM=d, BLOCK_M=bm,
            BLOCK_N=bn, CAUSAL=0)
        return {"out": out}
    if name == "layer_norm":
        M, N = _i(p, "M"), _i(p, "N")
        y = empty(t["x"])
        mean = torch.empty(M, device="cuda", dtype=torch.float32)
        rstd = torch.empty(M, device="cuda", dtype=torch.float32)
        kernels.layer_norm_kernel[(M,)](t["x"], y, t["w"], t["b"], mean, rstd, N, N, 1e-5,
                                        BLOCK_SIZE=_i(p, "BLOCK"), num_warps=_i(p, "num_warps"))
        return {"y": y, "mean": mean, "rstd": rstd}
    if name == "matmul_int8":
        M, N, K = _i(p, "M"), _i(p, "N"), _i(p, "K")
        bm, bn, bk = _i(p, "BLOCK_M"), _i(p, "BLOCK_N"), _i(p, "BLOCK_K")
        c = torch.empty((M, N), device="cuda", dtype=torch.int32)
        kernels.matmul_int8_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
            t["a"], t["b"], c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
        return {"c": c}
    if name == "minmax_nan":
        relu, lo = empty(t["x"]), empty(t["x"])
        minmax_kernel[grid](t["x"], t["y"], relu, lo, n, BLOCK=block)
        return {"relu": relu, "lo": lo}
    if name == "exp_where":
        e, w = empty(t["x"]), empty(t["x"])
        unary_where_kernel[grid](t["x"], t["y"], e, w, n, BLOCK=block)
        return {"exp": e, "where": w}
    if name == "int_division":
        q = empty(t["x"])
        r = torch.empty(n, device="cuda", dtype=torch.float32)
        division_kernel[grid](t["x"], t["y"], q, r, n, BLOCK=block)
        return {"floordiv": q, "truediv": r}
    if name == "casts":
        h = torch.empty(n, device="cuda", dtype=torch.float16)
        i = torch.empty(n, device="cuda", dtype=torch.int32)
        cast_kernel[grid](t["x"], h, i, n, BLOCK=block)
        return {"f16": h, "i32": i}
    if name == "max_sum_rows":
        M, N = _i(p, "M"), _i(p, "N")
        mx = torch.empty(M, device="cuda", dtype=torch.float32)
        s = torch.empty(M, device="cuda", dtype=torch.float32)
        reduce_kernel[(M,)](t["x"], t["h"], mx, s, N, BLOCK=_i(p, "BLOCK"))
        return {"max": mx, "sum_f16": s}
    if name == "cumsum":
        M, N = _i(p, "M"), _i(p, "N")
        out = empty(t["x"])
        cumsum_kernel[(M,)](t["x"], out, N, BLOCK=_i(p, "BLOCK"))
        return {"out": out}
    if name in ("dot_f16", "dot_tf32"):
        M, N, K = _i(p, "M"), _i(p, "N"), _i(p, "K")
        c = torch.empty((M, N), device="cuda", dtype=torch.float32)
        dot_kernel[(1,)](t["a"], t["b"], c, M=M, N=N, K=K)
        return {"c": c}
    if name == "histogram":
        bins = torch.zeros(64, device="cuda", dtype=torch.int32)
        histogram_kernel[grid](t["x"], bins, n, BLOCK=block)
        return {"bins": bins}
    if name in ("random_int", "random_uniform", "random_normal"):
        n, block = _i(p, "n"), _i(p, "BLOCK")
        ri = torch.empty(n, device="cuda", dtype=torch.int32)
        ru = torch.empty(n, device="cuda", dtype=torch.float32)
        rn = torch.empty(n, device="cuda", dtype=torch.float32)
        random_kernel[(triton.cdiv(n, block),)](ri, ru, rn, _i(p, "seed"), n, BLOCK=block)
        return {"random_int": {"ri": ri}, "random_uniform": {"ru": ru},
                "random_normal": {"rn": rn}}[name]
    raise KeyError("no Triton twin for case '%s'" % name)
