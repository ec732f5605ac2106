#!/usr/bin/env python3
# \file The peers of `tessera bench`: the same workloads, names and sizes with Triton (the seed's
# kernels ported back, kernels.py, plus tuned configurations) and with PyTorch/cuBLAS, each checked
# against an fp64 reference on the GPU and timed with triton.testing.do_bench medians (L2 flushed
# before every run). Writes JSON in `tessera bench --json`'s schema (docs/performance.md) for
# compare.py. Needs an NVIDIA GPU, torch and triton; nothing else (no network).
"""Runs tessera bench's workloads with Triton and PyTorch.

    python3 bench/peers/peers.py [--json FILE] [--quick] [--filter PATTERN] [--seed S]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

# Compile times are measured cold: Triton's cache goes to a fresh folder (set before import).
_CACHE_DIR = tempfile.mkdtemp(prefix="triton-peers-")
os.environ["TRITON_CACHE_DIR"] = _CACHE_DIR

import torch  # noqa: E402
import triton  # noqa: E402

from harness import Peers  # noqa: E402
from workloads import run_all  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--quick", action="store_true", help="the small sizes of tessera bench --quick")
    ap.add_argument("--filter", help="workload names: '*' and '?' wildcards, else a substring")
    ap.add_argument("--seed", type=int)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("peers: SKIP: no CUDA device visible to torch", flush=True)
        return 0
    p = Peers(args)
    name = torch.cuda.get_device_name()
    print("peers: %s, torch %s, triton %s, %s sizes, seed %d" % (
        name, torch.__version__, triton.__version__, "small" if p.small else "full", p.seed))
    print("times: triton.testing.do_bench median (warmup %d ms, rep %d ms, L2 flushed per run)\n"
          % (p.warmup_ms, p.rep_ms))
    start = time.time()

    def save():  # after each workload, so that a run cut short keeps its rows
        if not args.json:
            return
        doc = {"schema": "tessera-bench-1", "source": "peers",
               "device": {"name": "cuda:%d" % torch.cuda.current_device(), "kind": "cuda",
                          "description": name},
               "quick": p.small, "seed": p.seed,
               "copy_gbps": p.copy_bps / 1e9 if p.copy_bps else None,
               "versions": {"torch": torch.__version__, "triton": triton.__version__},
               "results": p.rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    run_all(p, save)
    counts = {s: sum(1 for r in p.rows if r["status"] == s)
              for s in ("pass", "fail", "skip", "error")}
    print("\n%d passed, %d failed, %d skipped, %d errors in %.1f s" % (
        counts["pass"], counts["fail"], counts["skip"], counts["error"], time.time() - start))
    return 1 if counts["fail"] or counts["error"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)
