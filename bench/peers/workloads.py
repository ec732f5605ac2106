# \file The peers' workloads, named and sized as tessera bench's: each runs the Triton port of the
# seed kernel ("triton-seed", tessera bench's configurations), a tuned Triton variant where one
# exists ("triton-tuned") and PyTorch ("torch") where it has the operation (not for the grouped
# matmul rows: cuBLAS is in the plain rows; torch._int_mm for int8), checks each against fp64
# (int8: exactly) and times it.

import math
import os
import time

import torch
import torch.nn.functional as F
import triton

import kernels as K
from harness import (ATTENTION, COPY_CONFIGS, ELEMENTWISE, GROUP_M, SEED_MATMUL, TOLERANCE,
                     TORCH_DTYPE, TUNED_MATMUL, base_row, best, max_rel_err, measure,
                     norm_rel_err)


def shape_label(shape):
    return "x".join(str(s) for s in shape)


def block_label(block, warps):
    return "BLOCK=%d num_warps=%d" % (block, warps)


def next_power_of_2(n):
    return 1 << (n - 1).bit_length()


def softmax_warps(block):
    """tessera bench's rule (bench/rows.cpp): 4 up to 1024 columns, 8 up to 4096, 16 beyond."""
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


def softmax_warp_choices(block):
    """The tuned row's tries, as tessera bench's: the rule, half and twice (at most 32)."""
    w = softmax_warps(block)
    return [w // 2, w, min(2 * w, 32)]


def run_copy(p, name):
    n = p.sizes["copy"]
    x = p.inputs(name, (n,), -1, 1, torch.float32)
    y = torch.empty_like(x)
    ref = x.double()
    tried = []
    for block, warps in COPY_CONFIGS:
        row = base_row(name, "copy", "fp32", (n,), "triton-seed")
        row.update(bytes=8.0 * n, config=block_label(block, warps))

        def run(block=block, warps=warps):
            K.copy_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=warps)
            return y
        y.fill_(math.nan)
        tried.append(measure(p, row, run, lambda out: max_rel_err(out, ref), 0.0))
    rows = [best(tried)]
    row = base_row(name, "copy", "fp32", (n,), "torch")
    row.update(bytes=8.0 * n, config="y.copy_(x)")
    y.fill_(math.nan)
    rows.append(measure(p, row, lambda: y.copy_(x), lambda out: max_rel_err(out, ref), 0.0))
    rates = [r["bytes"] / (r["median_us"] * 1e-6) for r in rows if r["status"] == "pass"]
    p.copy_bps = max(rates) if rates else 0.0
    for r in rows:
        p.floor(r)
        p.add(r)


def run_vector_add(p, name):
    n = p.sizes["vector_add"]
    x = p.inputs(name, (n,), -1, 1, torch.float32)
    y = p.inputs(name + "y", (n,), -1, 1, torch.float32)
    out = torch.full_like(x, math.nan)
    ref = (x.double() + y.double()).float().double()  # one f32 addition, rounded as the GPU does
    block, warps = ELEMENTWISE

    def seed():
        K.vector_add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block, num_warps=warps)
        return out
    row = base_row(name, "vector_add", "fp32", (n,), "triton-seed")
    row.update(bytes=12.0 * n, config=block_label(block, warps))
    p.add(measure(p, row, seed, lambda o: max_rel_err(o, ref), 0.0))
    row = base_row(name, "vector_add", "fp32", (n,), "torch")
    row.update(bytes=12.0 * n, config="torch.add(out=)")
    out.fill_(math.nan)
    p.add(measure(p, row, lambda: torch.add(x, y, out=out), lambda o: max_rel_err(o, ref), 0.0))


def run_gelu(p, name):
    n = p.sizes["gelu"]
    x = p.inputs(name, (n,), -4, 4, torch.float32)
    y = torch.full_like(x, math.nan)
    xd = x.double()
    ref = 0.5 * xd * (1.0 + torch.tanh(0.7978845608028654 * (xd + 0.044715 * xd * xd * xd)))
    del xd
    block, warps = ELEMENTWISE

    def seed():
        K.gelu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=warps)
        return y
    row = base_row(name, "gelu", "fp32", (n,), "triton-seed")
    row.update(bytes=8.0 * n, config=block_label(block, warps))
    p.add(measure(p, row, seed, lambda o: max_rel_err(o, ref), 1e-5))
    row = base_row(name, "gelu", "fp32", (n,), "torch")
    row.update(bytes=8.0 * n, config="F.gelu(approximate='tanh')")
    p.add(measure(p, row, lambda: F.gelu(x, approximate="tanh"), lambda o: max_rel_err(o, ref),
                  1e-5))


def run_softmax(p, name, m, n):
    x = p.inputs(name, (m, n), -5, 5, torch.float32)
    y = torch.full_like(x, math.nan)
    ref = torch.softmax(x.double(), dim=1)
    block = next_power_of_2(n)

    def measure_warps(impl, warps):
        def run():
            K.softmax_kernel[(m,)](x, y, x.stride(0), y.stride(0), n, BLOCK_SIZE=block,
                                   num_warps=warps)
            return y
        row = base_row(name, "softmax", "fp32", (m, n), impl)
        row.update(bytes=8.0 * m * n, config=block_label(block, warps))
        y.fill_(math.nan)
        return measure(p, row, run, lambda o: max_rel_err(o, ref), 1e-6)

    p.add(measure_warps("triton-seed", 4))
    p.add(best([measure_warps("triton-tuned", w) for w in softmax_warp_choices(block)]))
    row = base_row(name, "softmax", "fp32", (m, n), "torch")
    row.update(bytes=8.0 * m * n, config="torch.softmax(dim=1)")
    p.add(measure(p, row, lambda: torch.softmax(x, dim=1), lambda o: max_rel_err(o, ref), 1e-6))


def run_row_sum(p, name):
    m, n = p.sizes["row_sum"]
    x = p.inputs(name, (m, n), -1, 1, torch.float32)
    out = torch.full((m,), math.nan, device="cuda")
    ref = x.double().sum(1)

    def seed():
        K.row_sum_kernel[(m,)](x, out, n, BLOCK_SIZE=1024, num_warps=4)
        return out
    row = base_row(name, "row_sum", "fp32", (m, n), "triton-seed")
    row.update(bytes=4.0 * (m * n + m), config=block_label(1024, 4))
    p.add(measure(p, row, seed, lambda o: max_rel_err(o, ref), 1e-4))
    row = base_row(name, "row_sum", "fp32", (m, n), "torch")
    row.update(bytes=4.0 * (m * n + m), config="x.sum(1)")
    p.add(measure(p, row, lambda: x.sum(1), lambda o: max_rel_err(o, ref), 1e-4))


def run_layer_norm(p, name, dtype):
    m, n = p.sizes["layer_norm"]
    t = TORCH_DTYPE[dtype]
    x = p.inputs(name, (m, n), -3, 1, t)
    w = p.inputs(name + "w", (n,), 0.5, 1.5, t)
    b = p.inputs(name + "b", (n,), -0.5, 0.5, t)
    y = torch.full_like(x, math.nan)
    mean = torch.empty((m,), device="cuda")
    rstd = torch.empty((m,), device="cuda")
    eps = 1e-5
    ref = F.layer_norm(x.double(), (n,), w.double(), b.double(), eps)
    elem = x.element_size()
    block = min(65536 // elem, next_power_of_2(n))
    warps = min(max(block // 256, 1), 8)
    tol = 4e-3 if dtype == "fp16" else 1e-4
    nbytes = (2.0 * m * n + 2.0 * n) * elem + 8.0 * m

    def seed():
        K.layer_norm_kernel[(m,)](x, y, w, b, mean, rstd, x.stride(0), n, eps, BLOCK_SIZE=block,
                                  num_warps=warps)
        return y
    row = base_row(name, "layer_norm", dtype, (m, n), "triton-seed")
    row.update(bytes=nbytes, config=block_label(block, warps))
    p.add(measure(p, row, seed, lambda o: max_rel_err(o, ref), tol))
    row = base_row(name, "layer_norm", dtype, (m, n), "torch")
    row.update(bytes=nbytes, config="F.layer_norm")
    p.add(measure(p, row, lambda: F.layer_norm(x, (n,), w, b, eps), lambda o: max_rel_err(o, ref),
                  tol))


def config_label(bm, bn, bk, warps, stages, group=0):
    """As tessera bench's (bench/matmul.cpp): "128x128x64 group=8 num_warps=8 num_stages=3"."""
    return "%dx%dx%d%s num_warps=%d num_stages=%d" % (
        bm, bn, bk, " group=%d" % group if group else "", warps, stages)


def seed_matmul_rows(p, name, kernel, dtype, shape, extra, out, launch, check, group=0):
    """The Triton port of a Tessera matmul kernel under each of tessera bench's configurations
    for the dtype (SEED_MATMUL), the best kept; `launch(bm, bn, bk, warps, stages)` writes out."""
    tried = []
    only = os.environ.get("TESSERA_BENCH_CONFIG", "")  # as tessera bench: a label substring
    for bm, bn, bk, warps, stages in SEED_MATMUL[dtype]:
        if only not in config_label(bm, bn, bk, warps, stages, group):
            continue

        def run(bm=bm, bn=bn, bk=bk, warps=warps, stages=stages):
            launch(bm, bn, bk, warps, stages)
            return out
        row = base_row(name, kernel, dtype, shape, "triton-seed")
        row.update(config=config_label(bm, bn, bk, warps, stages, group), **extra)
        out.fill_(math.nan if out.dtype.is_floating_point else torch.iinfo(out.dtype).min)
        tried.append(measure(p, row, run, check, TOLERANCE[dtype]))
    if not tried:
        row = base_row(name, kernel, dtype, shape, "triton-seed")
        row.update(status="skip", detail="no configuration of the table matches "
                   "TESSERA_BENCH_CONFIG", **{k: v for k, v in extra.items() if k != "detail"})
        return row
    return best(tried)


def float_matmul_problem(p, name, dtype, m, n, k):
    """A, B uniform in [-1, 1] (as tessera bench), C, the fp64 reference of relu(A @ B)."""
    t = TORCH_DTYPE[dtype]
    a = p.inputs(name, (m, k), -1, 1, t)
    b = p.inputs(name + "b", (k, n), -1, 1, t)
    c = torch.empty((m, n), device="cuda", dtype=t)
    ref = torch.relu(a.double() @ b.double())
    extra = dict(flops=2.0 * m * n * k, bytes=float(m * k + k * n + m * n) * a.element_size(),
                 detail="inputs uniform in [-1, 1]")

    def check(out):  # TF32 rounds inputs as each library chooses: a norm-wise error
        return norm_rel_err(out, ref) if dtype == "tf32" else max_rel_err(out, ref)
    return a, b, c, check, extra


def run_matmul(p, name, dtype, m, n, k):
    a, b, c, check, extra = float_matmul_problem(p, name, dtype, m, n, k)
    shape = (m, n, k)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def seed(bm, bn, bk, warps, stages):
        K.matmul_relu_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
            a, b, c, m, n, k, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
            num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul_relu", dtype, shape, extra, c, seed, check))
    tried = []
    for bm, bn, bk, group, warps, stages in TUNED_MATMUL:
        def run(bm=bm, bn=bn, bk=bk, group=group, warps=warps, stages=stages):
            K.matmul_relu_tutorial_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
                a, b, c, m, n, k, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group,
                num_warps=warps, num_stages=stages)
            return c
        row = base_row(name, "matmul_relu", dtype, shape, "triton-tuned")
        row.update(config=config_label(bm, bn, bk, warps, stages, group), **extra)
        c.fill_(math.nan)
        tried.append(measure(p, row, run, check, TOLERANCE[dtype]))
    p.add(best(tried))
    row = base_row(name, "matmul_relu", dtype, shape, "torch")
    row.update(config="torch.relu(a @ b)" + (" (allow_tf32)" if dtype == "tf32" else ""), **extra)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    try:
        p.add(measure(p, row, lambda: torch.relu(a @ b), check, TOLERANCE[dtype]))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def run_matmul_grouped(p, name, dtype, m, n, k):
    """tessera bench's grouped-order rows: the port of its grouped kernel under its table (the
    tutorial kernel and cuBLAS are in the matmul_relu rows of the same size)."""
    a, b, c, check, extra = float_matmul_problem(p, name, dtype, m, n, k)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def seed(bm, bn, bk, warps, stages):
        K.matmul_relu_grouped_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
            a, b, c, m, n, k, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=GROUP_M,
            num_warps=warps, num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul_relu_grouped", dtype, (m, n, k), extra, c, seed,
                           check, group=GROUP_M))


def run_matmul_tutorial(p, name, dtype, m, n, k):
    """tessera bench's tutorial rows: Triton's tutorial kernel (rows and columns wrapped with %)
    under tessera bench's table, beside Tessera's port of the same source."""
    a, b, c, check, extra = float_matmul_problem(p, name, dtype, m, n, k)
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def seed(bm, bn, bk, warps, stages):
        K.matmul_relu_tutorial_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
            a, b, c, m, n, k, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=GROUP_M,
            num_warps=warps, num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul_relu_tutorial", dtype, (m, n, k), extra, c, seed,
                           check, group=GROUP_M))


def run_cublas_matmul(p, name, dtype, m, n, k):
    """cuBLAS's a @ b alone (no ReLU; PyTorch's row of matmul_relu adds a ReLU kernel after it):
    the rate the descriptor kernels, whose ReLU is fused, are held to. The check compares the
    product's ReLU with the matmul_relu reference."""
    a, b, _, check, extra = float_matmul_problem(p, name, dtype, m, n, k)
    row = base_row(name, "matmul", dtype, (m, n, k), "torch")
    row.update(config="a @ b (no ReLU)", **extra)
    p.add(measure(p, row, lambda: a @ b, lambda out: check(torch.relu(out)), TOLERANCE[dtype]))


def run_matmul_desc(p, name, dtype, m, n, k, ws=False):
    """tessera bench's descriptor rows: the port of its descriptor kernel under its table (ws:
    its K loop with warp_specialize=True, the matmul_relu_desc_ws rows). Triton builds the
    descriptors on the device, in global scratch from the allocator set here."""
    a, b, c, check, extra = float_matmul_problem(p, name, dtype, m, n, k)
    triton.set_allocator(
        lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))

    def seed(bm, bn, bk, warps, stages):
        K.matmul_relu_desc_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
            a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=bm, BLOCK_N=bn,
            BLOCK_K=bk, GROUP_M=GROUP_M, WS=ws, num_warps=warps, num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul_relu_desc_ws" if ws else "matmul_relu_desc", dtype,
                           (m, n, k), extra, c, seed, check, group=GROUP_M))


def run_matmul_int8(p, name, m, n, k):
    """int8 x int8 -> int32, exact: the port of tessera bench's int8 kernel under its table, and
    torch._int_mm (cuBLASLt; it needs M > 16 and K, N multiples of 8, which every size meets)."""
    a = p.inputs(name, (m, k), -128, 128, torch.int8)
    b = p.inputs(name + "b", (k, n), -128, 128, torch.int8)
    c = torch.empty((m, n), device="cuda", dtype=torch.int32)
    # The int64 reference, computed in fp64 on the GPU (CUDA has no integer matmul): exact, as
    # every product and partial sum is an integer below 2^53 (|C| <= K * 2^14).
    ref = (a.double() @ b.double()).long()
    shape = (m, n, k)
    extra = dict(flops=2.0 * m * n * k, bytes=float(m * k + k * n) + 4.0 * m * n,
                 detail="int8 uniform in [-128, 127]")
    strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def check(out):  # max |out - ref|: 0 when exact
        return float((out.long() - ref).abs().max().item()) if out.numel() else 0.0

    def seed(bm, bn, bk, warps, stages):
        K.matmul_int8_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
            a, b, c, m, n, k, *strides, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
            num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul", "int8", shape, extra, c, seed, check))
    row = base_row(name, "matmul", "int8", shape, "torch")
    row.update(config="torch._int_mm(a, b)", **extra)
    p.add(measure(p, row, lambda: torch._int_mm(a, b), check, TOLERANCE["int8"]))


def run_matmul_fp8(p, name, m, n, k):
    """e4m3 x e4m3, f32 accumulation, f16 out, unit scales: the port of tessera bench's fp8
    kernel under its table, and torch._scaled_mm (cuBLASLt; B column-major, as it requires)."""
    a = p.inputs(name, (m, k), -1, 1, torch.float8_e4m3fn)
    b = p.inputs(name + "b", (k, n), -1, 1, torch.float8_e4m3fn)
    b_col = b.t().contiguous().t()
    c = torch.empty((m, n), device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    one = torch.ones((), device="cuda", dtype=torch.float32)
    shape = (m, n, k)
    extra = dict(flops=2.0 * m * n * k, bytes=float(m * k + k * n) + 2.0 * m * n,
                 detail="e4m3 of uniform [-1, 1], f32 accumulation, f16 out, unit scales")

    def check(out):
        return max_rel_err(out, ref)

    def seed(bm, bn, bk, warps, stages):
        K.matmul_fp8_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
            a, b_col, c, m, n, k, a.stride(0), b_col.stride(1), c.stride(0), BLOCK_M=bm,
            BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages)
    p.add(seed_matmul_rows(p, name, "matmul", "fp8e4m3", shape, extra, c, seed, check))
    row = base_row(name, "matmul", "fp8e4m3", shape, "torch")
    row.update(config="torch._scaled_mm(a, b_col, scale_a=1, scale_b=1, out_dtype=f16)", **extra)
    p.add(measure(p, row, lambda: torch._scaled_mm(a, b_col, scale_a=one, scale_b=one,
                                                   out_dtype=torch.float16),
                  check, TOLERANCE["fp8e4m3"]))


def compile_rows(p, probe, launch):
    """Triton's first launch with an empty cache, then with a fresh JITFunction whose compiled
    kernel the disk cache holds (median of 3)."""
    def first(kernel):
        t0 = time.perf_counter()
        launch(kernel)
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3
    for what, fn in (("first launch, cold cache", lambda k: first(k)),
                     ("first launch, warm cache",
                      lambda k: sorted(first(triton.jit(k.fn)) for _ in range(3))[1])):
        row = base_row("compile %s: %s" % (probe[0], what), probe[0], "", (), "triton-seed",
                       kind="compile")
        row["unit"] = "ms"
        try:
            row["value"] = fn(probe[1])
            row["detail"] = "one sample" if "cold" in what else "fresh JITFunction, median of 3"
        except Exception as e:
            row["status"], row["detail"] = "error", ("%s: %s" % (type(e).__name__, e))[:300]
        p.add(row)


def run_compile(p, name):
    probe = name[len("compile "):]
    if probe == "gelu":
        x = torch.ones(4096, device="cuda")
        y = torch.empty_like(x)
        compile_rows(p, (probe, K.gelu_kernel),
                     lambda k: k[(4,)](x, y, 4096, BLOCK=1024, num_warps=4))
    elif probe == "softmax":
        x = torch.ones((16, 1024), device="cuda")
        y = torch.empty_like(x)
        compile_rows(p, (probe, K.softmax_kernel),
                     lambda k: k[(16,)](x, y, 1024, 1024, 1024, BLOCK_SIZE=1024, num_warps=4))
    else:
        a = torch.full((128, 128), 0.5, device="cuda", dtype=torch.float16)
        c = torch.empty_like(a)
        compile_rows(p, (probe, K.matmul_relu_kernel),
                     lambda k: k[(2, 2)](a, a, c, 128, 128, 128, 128, 1, 128, 1, 128, 1, BLOCK_M=64,
                                         BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3))


def launch_rows(p, impl, launch, x):
    """Host time per launch over 10,000 launches (median of 3), and device time per launch of
    1,000 dependent launches between two events; x must end at the launch count."""
    launches, dependent = (500, 100) if p.small else (10000, 1000)
    x.zero_()
    total = 0
    for _ in range(100):
        launch()
    total += 100
    torch.cuda.synchronize()
    enqueue, with_sync = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        enqueue.append((time.perf_counter() - t0) * 1e6 / launches)
        torch.cuda.synchronize()
        with_sync.append((time.perf_counter() - t0) * 1e6 / launches)
        total += launches
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(dependent):
        launch()
    stop.record()
    torch.cuda.synchronize()
    total += dependent
    err = (x.double() - total).abs().max().item()
    for what, value, unit, detail in (
            ("launch: tiny kernel, host enqueue", sorted(enqueue)[1], "us/launch",
             "%d launches, median of 3" % launches),
            ("launch: tiny kernel, host incl. sync", sorted(with_sync)[1], "us/launch",
             "%d launches, median of 3" % launches),
            ("dispatch: dependent tiny kernels, device time",
             start.elapsed_time(stop) * 1e3 / dependent, "us/dispatch",
             "%d dependent launches between two events" % dependent)):
        row = base_row(what, "tiny", "fp32", (128,), impl, kind="launch")
        row.update(value=value, unit=unit, max_err=err, tolerance=0.0, detail=detail,
                   status="pass" if err == 0 else "fail")
        p.add(row)


def run_launch(p, name):
    x = torch.zeros(128, device="cuda")
    launch_rows(p, "triton-seed", lambda: K.tiny_kernel[(1,)](x, BLOCK=128, num_warps=1), x)
    launch_rows(p, "torch", lambda: x.add_(1.0), x)


def run_attention(p, name, dtype, causal, shape, form="attention"):
    """tessera bench's attention rows: the Triton twin of samples/kernels/attention.h under its
    table, and PyTorch's scaled_dot_product_attention (its flash backend where it applies), both
    against an fp64 reference of sampled rows, the error relative to sum |p v| / sum p. form
    "attention_desc" or "attention_desc_ws": the twin of attention_desc_kernel (descriptors, its
    key loop warp-specialized or not) instead, and no PyTorch row (the attention rows have it)."""
    batch, heads, seq, dim = shape
    tdt = TORCH_DTYPE[dtype]
    q = p.inputs(name + "q", shape, -1, 1, tdt)
    k = p.inputs(name + "k", shape, -1, 1, tdt)
    v = p.inputs(name + "v", shape, -1, 1, tdt)
    out = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(dim)
    # The reference on 8 positions of each of up to 16 heads, as tessera bench samples them.
    hs = list(range(0, batch * heads, max(1, batch * heads // 16)))
    pos = sorted(set(min(i, seq - 1) for i in range(0, seq, max(1, seq // 7)))) if seq > 64 \
        else list(range(seq))
    q3, k3, v3 = (t.reshape(batch * heads, seq, dim) for t in (q, k, v))
    ref, size = [], []
    for h in hs:
        s = (q3[h, pos].double() @ k3[h].double().T) * sm_scale
        if causal:
            s = s.masked_fill(torch.arange(seq, device="cuda")[None, :] >
                              torch.tensor(pos, device="cuda")[:, None], float("-inf"))
        w = torch.exp(s - s.max(dim=1, keepdim=True).values)
        l = w.sum(dim=1, keepdim=True)
        ref.append((w @ v3[h].double()) / l)
        size.append((w @ v3[h].double().abs()) / l)
    ref, size = torch.stack(ref), torch.stack(size)

    def check(o):
        got = o.reshape(batch * heads, seq, dim)[hs][:, pos].double()
        d = (got - ref).abs() / size.clamp_min(1e-30)
        return math.inf if torch.isnan(d).any() else d.max().item()
    kernel = form + ("_causal" if causal else "")
    if form != "attention":
        triton.set_allocator(
            lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    flops = 4.0 * batch * heads * seq * seq * dim * (0.5 if causal else 1.0)
    extra = dict(flops=flops, bytes=4.0 * q.numel() * q.element_size(),
                 detail="inputs uniform in [-1, 1]; error relative to sum |p v| / sum p")
    tolerance = 4e-3 if dtype == "fp16" else 3e-2
    only = os.environ.get("TESSERA_BENCH_CONFIG", "")
    tried = []
    for bm, bn, warps, stages, maxnreg in ATTENTION:
        label = "%dx%d num_warps=%d num_stages=%d" % (bm, bn, warps, stages)
        label += " maxnreg=%d" % maxnreg if maxnreg else ""
        if only not in label:
            continue
        limit = {"maxnreg": maxnreg} if maxnreg else {}

        def run(bm=bm, bn=bn, warps=warps, stages=stages, limit=limit):
            grid = (triton.cdiv(seq, bm), batch * heads)
            if form == "attention":
                K.attention_kernel[grid](
                    q, k, v, out, sm_scale * 1.4426950408889634, seq, HEAD_DIM=dim, BLOCK_M=bm,
                    BLOCK_N=bn, CAUSAL=causal, num_warps=warps, num_stages=stages, **limit)
            else:
                K.attention_desc_kernel[grid](
                    q, k, v, out, sm_scale * 1.4426950408889634, seq, batch * heads * seq,
                    HEAD_DIM=dim, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal,
                    WS=form == "attention_desc_ws", num_warps=warps, num_stages=stages, **limit)
            return out
        row = base_row(name, kernel, dtype, shape, "triton-seed")
        row.update(config=label, **extra)
        out.fill_(math.nan)
        row = measure(p, row, run, check, tolerance)
        if row["status"] == "error" and maxnreg and "maxnreg" in row.get("detail", ""):
            row["status"] = "skip"  # a Triton without the maxnreg launch option
        tried.append(row)
    if tried:
        p.add(best(tried))
    if form != "attention":
        return
    row = base_row(name, kernel, dtype, shape, "torch")
    row.update(config="F.scaled_dot_product_attention(is_causal=%s)" % causal, **extra)
    p.add(measure(p, row, lambda: F.scaled_dot_product_attention(
        q, k, v, is_causal=causal), check, tolerance))


def workloads(p):
    """(name, run) in tessera bench's order; names carry the sizes."""
    s = p.sizes
    out = [("compile gelu", run_compile), ("compile softmax", run_compile),
           ("compile matmul_relu fp16", run_compile),
           ("copy fp32 %d" % s["copy"], run_copy),
           ("vector_add fp32 %d" % s["vector_add"], run_vector_add),
           ("gelu fp32 %d" % s["gelu"], run_gelu)]
    for m, n in s["softmax"]:
        out.append(("softmax fp32 %s" % shape_label((m, n)),
                    lambda p, name, m=m, n=n: run_softmax(p, name, m, n)))
    out.append(("row_sum fp32 %s" % shape_label(s["row_sum"]), run_row_sum))
    for dtype in ("fp32", "fp16"):
        out.append(("layer_norm %s %s" % (dtype, shape_label(s["layer_norm"])),
                    lambda p, name, dtype=dtype: run_layer_norm(p, name, dtype)))
    for dtype, size in (("tf32", "matmul_mid"), ("fp16", "matmul_mid"), ("bf16", "matmul_mid"),
                        ("fp16", "matmul_big"), ("bf16", "matmul_big")):
        m, n, k = s[size]
        out.append(("matmul_relu %s %s" % (dtype, shape_label((m, n, k))),
                    lambda p, name, dtype=dtype, m=m, n=n, k=k:
                    run_matmul(p, name, dtype, m, n, k)))
        if dtype != "tf32":  # the grouped order beside the plain one, as tessera bench
            out.append(("matmul_relu_grouped %s %s" % (dtype, shape_label((m, n, k))),
                        lambda p, name, dtype=dtype, m=m, n=n, k=k:
                        run_matmul_grouped(p, name, dtype, m, n, k)))
            out.append(("matmul_relu_desc %s %s" % (dtype, shape_label((m, n, k))),
                        lambda p, name, dtype=dtype, m=m, n=n, k=k:
                        run_matmul_desc(p, name, dtype, m, n, k)))
            if (dtype, size) in (("fp16", "matmul_mid"), ("fp16", "matmul_big"),
                                 ("bf16", "matmul_big")):  # as tessera bench's ws rows
                out.append(("matmul_relu_desc_ws %s %s" % (dtype, shape_label((m, n, k))),
                            lambda p, name, dtype=dtype, m=m, n=n, k=k:
                            run_matmul_desc(p, name, dtype, m, n, k, ws=True)))
            out.append(("matmul %s %s" % (dtype, shape_label((m, n, k))),
                        lambda p, name, dtype=dtype, m=m, n=n, k=k:
                        run_cublas_matmul(p, name, dtype, m, n, k)))
        if dtype == "fp16":  # Triton's tutorial source, as tessera bench's tutorial rows
            out.append(("matmul_relu_tutorial %s %s" % (dtype, shape_label((m, n, k))),
                        lambda p, name, dtype=dtype, m=m, n=n, k=k:
                        run_matmul_tutorial(p, name, dtype, m, n, k)))
    for size in ("matmul_mid", "matmul_big"):
        m, n, k = s[size]
        out.append(("matmul int8 %s" % shape_label((m, n, k)),
                    lambda p, name, m=m, n=n, k=k: run_matmul_int8(p, name, m, n, k)))
    m, n, k = s["matmul_big"]
    out.append(("matmul fp8e4m3 %s" % shape_label((m, n, k)),
                lambda p, name, m=m, n=n, k=k: run_matmul_fp8(p, name, m, n, k)))
    for dtype, causal, size in (("fp16", False, "attention_d128"), ("fp16", True, "attention_d128"),
                                ("bf16", False, "attention_d128"), ("fp16", False, "attention_d64")):
        shape = s[size]
        out.append(("%s %s %s" % ("attention_causal" if causal else "attention", dtype,
                                  shape_label(shape)),
                    lambda p, name, dtype=dtype, causal=causal, shape=shape:
                    run_attention(p, name, dtype, causal, shape)))
    for form in ("attention_desc", "attention_desc_ws"):
        for causal in (False, True):
            shape = s["attention_d128"]
            out.append(("%s %s %s" % (form + ("_causal" if causal else ""), "fp16",
                                      shape_label(shape)),
                        lambda p, name, causal=causal, shape=shape, form=form:
                        run_attention(p, name, "fp16", causal, shape, form)))
    out.append(("launch overhead", run_launch))
    return out


def run_all(p, after_each=lambda: None):
    """The selected workloads; the copy joins whenever a kernel workload runs (it is their floor).
    One launch of the tiny kernel first brings Triton and the CUDA context up outside any figure."""
    x = torch.zeros(128, device="cuda")
    K.tiny_kernel[(1,)](x, BLOCK=128, num_warps=1)
    torch.cuda.synchronize()
    all_ = workloads(p)
    kernel_selected = any(p.selected(n) for n, _ in all_
                          if not n.startswith(("compile", "launch", "copy")))
    for name, run in all_:
        if not (p.selected(name) or (kernel_selected and name.startswith("copy"))):
            continue
        try:
            run(p, name)
        except Exception as e:  # a workload that could not even set up: one error row
            row = base_row(name, name.split()[0], "", (), "peers")
            row.update(status="error", detail=("%s: %s" % (type(e).__name__, e))[:300])
            p.add(row)
        torch.cuda.empty_cache()
        after_each()
