# \file The peers' harness: sizes and configurations (kept in step with tessera bench), the run's
# state, the fp64 check, do_bench timing and the JSON rows. Imported by peers.py after it has
# pointed TRITON_CACHE_DIR at a fresh folder.

import fnmatch
import math
import os

import torch
import triton

# Sizes: keep in step with bench/elementwise.cpp, bench/rows.cpp and bench/matmul.cpp.
FULL = {
    "copy": 1 << 28, "vector_add": 1 << 27, "gelu": 1 << 28,
    "softmax": [(16384, 1024), (8192, 4096), (4096, 16384)],
    "row_sum": (4096, 16384), "layer_norm": (4096, 8192),
    "matmul_mid": (4096, 4096, 4096), "matmul_big": (8192, 8192, 8192),
    "attention_d128": (4, 32, 4096, 128), "attention_d64": (4, 32, 4096, 64),
}
SMALL = {
    "copy": 100003, "vector_add": 100003, "gelu": 100003,
    "softmax": [(64, 200), (32, 3000), (8, 9000)],
    "row_sum": (129, 5001), "layer_norm": (64, 1000),
    "matmul_mid": (72, 80, 96), "matmul_big": (136, 120, 104),
    "attention_d128": (1, 2, 100, 128), "attention_d64": (1, 2, 100, 64),
}
COPY_CONFIGS = [(1024, 4), (4096, 8)]              # as tessera bench's kCopyConfigs
ELEMENTWISE = (1024, 4)                             # BLOCK, num_warps
# BM, BN, BK, warps, stages per input dtype: tessera bench's table (bench/matmul.cpp).
_HALF_MATMUL = [(128, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 256, 64, 8, 3),
                (128, 256, 64, 8, 4), (64, 128, 64, 4, 4), (128, 128, 32, 8, 3), (64, 64, 32, 4, 3),
                (128, 256, 32, 8, 3), (256, 128, 32, 8, 3)]
SEED_MATMUL = {
    "tf32": [(128, 128, 32, 8, 3), (128, 128, 32, 4, 4), (128, 256, 32, 8, 3), (256, 128, 32, 8, 3),
             (256, 128, 32, 8, 4), (64, 64, 32, 4, 3)],
    "fp16": _HALF_MATMUL, "bf16": _HALF_MATMUL,
    "int8": [(128, 128, 128, 8, 3), (128, 256, 128, 8, 3), (128, 128, 128, 4, 4),
             (128, 128, 64, 8, 3), (64, 64, 64, 4, 3)],
    "fp8e4m3": [(128, 128, 128, 8, 3), (128, 256, 128, 8, 3), (128, 128, 128, 4, 4),
                (128, 128, 64, 8, 3), (64, 64, 64, 4, 3)],
}
GROUP_M = 8                                         # tessera bench's grouped matmul rows
# BLOCK_M, BLOCK_N, warps, stages: tessera bench's attention table (bench/attention.cpp).
# BM, BN, warps, stages, maxnreg (0: no limit): as bench/attention.cpp's table.
ATTENTION = [(128, 64, 8, 2, 0), (128, 64, 8, 3, 0), (128, 128, 8, 2, 0), (64, 64, 4, 2, 0),
             (64, 64, 4, 3, 0), (128, 64, 8, 2, 128), (128, 64, 8, 3, 128)]
# BM, BN, BK, GROUP_M, warps, stages: Triton tutorial configurations.
TUNED_MATMUL = [(128, 256, 64, 8, 8, 3), (128, 128, 64, 8, 4, 4), (128, 128, 32, 8, 4, 4),
                (64, 256, 32, 8, 4, 4)]
# matmul: fp16/bf16 as tessera bench; tf32 is checked norm-wise (near 3e-4 expected); int8 is
# exact.
# fp8: tensor-core accumulation without promotion keeps ~14 bits of the sum (bench/matmul_fp8.cpp)
TOLERANCE = {"tf32": 2e-3, "fp16": 2e-3, "bf16": 1e-2, "int8": 0.0, "fp8e4m3": 0.25}
TORCH_DTYPE = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
               "bf16": torch.bfloat16, "int8": torch.int8}


class Peers:
    """The run: options, timing settings and the rows gathered."""

    def __init__(self, args):
        self.args = args
        self.small = args.quick
        self.sizes = SMALL if args.quick else FULL
        self.seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
        self.warmup_ms, self.rep_ms = (5, 20) if args.quick else (100, 300)
        self.rows = []
        self.copy_bps = 0.0

    def selected(self, name):
        if not self.args.filter:
            return True
        for f in self.args.filter.split(","):
            if any(c in f for c in "*?") and fnmatch.fnmatchcase(name, f):
                return True
            if f in name:
                return True
        return False

    def inputs(self, name, shape, lo, hi, dtype):
        """Uniform in [lo, hi) on the GPU, as tessera bench draws them (harness.cpp's
        random_values); integer dtypes take the floor: the integers lo .. hi - 1, each equally
        likely (int8 in [-128, 127] from lo=-128, hi=128, as bench/matmul_int8.cpp)."""
        g = torch.Generator(device="cuda")
        g.manual_seed((self.seed * 1000003 + sum(map(ord, name))) & 0x7FFFFFFFFFFFFFFF)
        x = torch.rand(shape, generator=g, device="cuda", dtype=torch.float32) * (hi - lo) + lo
        if not dtype.is_floating_point:
            x = x.floor_()
        return x.to(dtype)

    def median_us(self, fn):
        """do_bench's median in microseconds (it flushes L2 before every run)."""
        return triton.testing.do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms,
                                       return_mode="median") * 1e3

    def floor(self, row):
        if row.get("flops"):
            row["floor_basis"] = "compare.py: flops / cuBLAS best"
            return
        if self.copy_bps > 0 and row.get("bytes"):
            row["floor_us"] = row["bytes"] / self.copy_bps * 1e6
            row["floor_basis"] = "bytes / copy %.3g TB/s (peers)" % (self.copy_bps / 1e12)

    def add(self, row):
        self.rows.append(row)
        status = row["status"].upper()
        value = row.get("median_us")
        text = ("%.1f us" % value) if value is not None else (
            "%.2f %s" % (row["value"], row["unit"]) if row.get("value") is not None else "-")
        err = row.get("max_err")
        print("%-52s %-13s %-6s %9s %14s  %s" % (
            row["workload"], row["impl"], status, "-" if err is None else "%.2g" % err, text,
            (row.get("config", "") + ("; " + row["detail"] if row.get("detail") else ""))[:160]),
            flush=True)


def base_row(workload, kernel, dtype, shape, impl, kind="kernel"):
    return {"workload": workload, "kernel": kernel, "dtype": dtype, "shape": list(shape),
            "kind": kind, "impl": impl, "backend": "cuda", "status": "pass", "max_err": None,
            "tolerance": None, "runs": None, "median_us": None, "min_us": None, "value": None,
            "unit": "us", "bytes": 0, "flops": 0, "floor_us": None, "floor_basis": "",
            "config": "", "detail": ""}


def max_rel_err(out, ref):
    """max |out - ref| / max(1, |ref|), as tessera bench; NaN counts as infinite."""
    d = (out.double() - ref).abs() / ref.abs().clamp_min(1.0)
    if torch.isnan(d).any():
        return math.inf
    return d.max().item() if d.numel() else 0.0


def norm_rel_err(out, ref):
    """||out - ref|| / ||ref||: for TF32, whose input rounding each library chooses."""
    d = out.double() - ref
    if torch.isnan(d).any():
        return math.inf
    return (d.norm() / ref.norm()).item()


def measure(p, row, run, check, tolerance):
    """Runs once, checks, and when it passed times `run` with do_bench."""
    try:
        out = run()
        torch.cuda.synchronize()
        row["max_err"] = check(out)
        row["tolerance"] = tolerance
        row["status"] = "pass" if row["max_err"] <= tolerance else "fail"
        if row["status"] == "pass":
            row["median_us"] = p.median_us(run)
            row["value"] = row["median_us"]
    except Exception as e:  # a config Triton cannot hold (shared memory) or a real failure
        kind = type(e).__name__
        row["status"] = "skip" if "OutOfResources" in kind else "error"
        row["detail"] = ("%s: %s" % (kind, e)).replace("\n", " ")[:300]
    p.floor(row)
    return row


def best(rows):
    """A failed row if any, else the fastest passing one; the others listed in `detail`."""
    bad = [r for r in rows if r["status"] in ("fail", "error")]
    good = [r for r in rows if r["status"] == "pass"]
    pick = bad[0] if bad else (min(good, key=lambda r: r["median_us"]) if good else rows[0])
    pick = dict(pick)
    if len(rows) > 1:
        listing = "; ".join("%s: %s" % (r["config"], "%.1f us" % r["median_us"]
                                        if r["status"] == "pass" else r["status"]) for r in rows)
        pick["detail"] = (pick["detail"] + "; " if pick["detail"] else "") + "configs: " + listing
    return pick
