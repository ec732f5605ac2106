#!/usr/bin/env python3
# \file The differential check against Triton (issue 18): reads what `tessera triton-diff` wrote
# for one or more devices (inputs, outputs, manifest.json), runs each case's Triton twin on the
# same inputs (the seed kernels from kernels.py, one kernel per op family here) and prints
#   kernel | device | max abs diff | max rel diff | ulp | verdict
# where the verdict is 0 (bit for bit), "within bound" (the documented ulp or relative bound of
# the case), "explained: ..." (a documented semantic choice, with its bound) or FAIL.
# Without torch, triton or a CUDA device it says SKIP and why; `--reference DIR` compares against
# another device's outputs instead (no Triton, no numpy: runs anywhere, as the ctest does).
"""Compares Tessera's outputs with Triton's on the same inputs.

    python3 bench/peers/diff.py DIR [DIR ...] [--reference DIR] [--json FILE]
"""

import argparse
import json
import math
import os
import struct
import sys

FORMATS = {"f32": ("f", 4), "i32": ("i", 4), "f16": ("e", 2), "i8": ("b", 1)}


def load(folder, entry):
    """The array of a manifest entry as a flat list of Python numbers."""
    with open(os.path.join(folder, entry["file"]), "rb") as f:
        data = f.read()
    fmt, size = FORMATS[entry["dtype"]]
    return list(struct.unpack("<%d%s" % (len(data) // size, fmt), data))


def raw(folder, entry):
    with open(os.path.join(folder, entry["file"]), "rb") as f:
        return f.read()


def ordered(x, dtype):
    """x's bits as an integer that counts ulps (sign-magnitude to two's complement)."""
    if dtype == "f32":
        u = struct.unpack("<I", struct.pack("<f", x))[0]
        return -(u & 0x7FFFFFFF) if u & 0x80000000 else u
    if dtype == "f16":
        u = struct.unpack("<H", struct.pack("<e", x))[0]
        return -(u & 0x7FFF) if u & 0x8000 else u
    return x


def compare(got, want, dtype):
    """(max abs diff, max diff / max |want|, max ulp, identical, nan_mismatch)."""
    max_abs = max_ulp = 0
    scale = 0.0
    same = True
    nan_mismatch = 0
    for a, b in zip(got, want):
        if isinstance(b, float) and math.isnan(b):
            if not (isinstance(a, float) and math.isnan(a)):
                nan_mismatch += 1
                same = False
            continue
        if isinstance(a, float) and math.isnan(a):
            nan_mismatch += 1
            same = False
            continue
        if a == b and (dtype.startswith("i") or math.copysign(1, a) == math.copysign(1, b)):
            if not math.isinf(b):
                scale = max(scale, abs(b))
            continue
        same = False
        if math.isinf(a) or math.isinf(b):
            max_abs = max_ulp = float("inf")
            continue
        scale = max(scale, abs(b))
        max_abs = max(max_abs, abs(a - b))
        max_ulp = max(max_ulp, abs(ordered(a, dtype) - ordered(b, dtype)))
    if len(got) != len(want):
        same, max_abs, max_ulp = False, float("inf"), float("inf")
    rel = max_abs / scale if scale else (0.0 if max_abs == 0 else float("inf"))
    return max_abs, rel, max_ulp, same, nan_mismatch


def verdict(case, rows, against_triton):
    """The case's verdict from its outputs' comparisons (see the file comment); a documented
    choice explains a difference from Triton only."""
    if any(r[4] for r in rows):
        return "FAIL (%d NaN in one and not the other)" % sum(r[4] for r in rows)
    if all(r[3] for r in rows):
        return "0"
    bound = case["bound"]
    max_rel = max(r[1] for r in rows)
    max_ulp = max(r[2] for r in rows)
    ok = (bound["ulp"] >= 0 and max_ulp <= bound["ulp"]) or (bound["rel"] > 0 and max_rel <= bound["rel"])
    text = "ulp <= %g" % bound["ulp"] if bound["ulp"] >= 0 else "rel <= %g" % bound["rel"]
    if ok and case.get("explained") and against_triton:
        return "explained: %s (%s)" % (case["explained"], text)
    return "within bound (%s)" % text if ok else "FAIL (bound: %s)" % text


def triton_reference(folder, case):
    """The Triton twin's outputs (name -> flat list) on the case's inputs from `folder`."""
    import torch
    import twins

    dt = {"f32": torch.float32, "i32": torch.int32, "f16": torch.float16, "i8": torch.int8}
    inputs = {}
    for e in case["inputs"]:
        with open(os.path.join(folder, e["file"]), "rb") as f:
            t = torch.frombuffer(bytearray(f.read()), dtype=dt[e["dtype"]])
        inputs[e["name"]] = t.reshape(e["shape"]).cuda()
    outputs = twins.run(case["name"], inputs, case["params"])
    torch.cuda.synchronize()
    want = {}
    for e in case["outputs"]:
        t = outputs[e["name"]].detach().cpu().contiguous().reshape(-1)
        want[e["name"]] = t.tolist() if e["dtype"].startswith("i") else t.float().tolist()
    return want


def triton_missing():
    """Why Triton cannot run here, or None."""
    try:
        import torch
        import triton  # noqa: F401
    except Exception as exc:  # ImportError, or a broken install
        return "python3 with torch and triton not found (%s)" % exc
    if not torch.cuda.is_available():
        return "no CUDA device visible to torch"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", help="folders written by `tessera triton-diff`")
    ap.add_argument("--reference", help="compare against this folder's outputs instead of Triton")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    manifests = [json.load(open(os.path.join(d, "manifest.json"))) for d in args.dirs]
    ref_dir = args.reference
    ref_manifest = json.load(open(os.path.join(ref_dir, "manifest.json"))) if ref_dir else None
    if not ref_dir:
        why = triton_missing()
        if why:
            print("triton-diff: SKIP: %s" % why)
            return 0
    # Every folder must hold the same inputs: one seed, one generator.
    cases = {}
    for d, m in zip(args.dirs, manifests):
        for c in m["cases"]:
            first = cases.setdefault(c["name"], (d, c))
            for a, b in zip(first[1]["inputs"], c["inputs"]):
                if raw(first[0], a) != raw(d, b):
                    print("triton-diff: the inputs of %s differ between %s and %s (seeds %s?)" %
                          (c["name"], first[0], d, [x["seed"] for x in manifests]))
                    return 2
    lines = ["| kernel | device | max abs diff | max rel diff | ulp | verdict |",
             "|---|---|---|---|---|---|"]
    rows_json = []
    failures = 0
    for name, (first_dir, first_case) in cases.items():
        if ref_dir:
            rc = next((c for c in ref_manifest["cases"] if c["name"] == name), None)
            want = {e["name"]: load(ref_dir, e) for e in rc["outputs"]} if rc else None
            ref_name = ref_manifest["device"]
        else:
            try:
                want = triton_reference(first_dir, first_case)
            except Exception as exc:  # a twin that fails is a row, not a crash
                want, why = None, "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:120])
            ref_name = "triton"
        for d, m in zip(args.dirs, manifests):
            case = next((c for c in m["cases"] if c["name"] == name), None)
            device = m["device"]
            if case is None:
                lines.append("| %s | %s | - | - | - | SKIP (did not run: see its log) |" % (name, device))
                continue
            if want is None:
                lines.append("| %s | %s | - | - | - | SKIP (no %s reference%s) |" %
                             (name, device, ref_name, "" if ref_dir else ": " + why))
                continue
            rows = [compare(load(d, e), want[e["name"]], e["dtype"]) for e in case["outputs"]]
            v = verdict(case, rows, not ref_dir)
            failures += v.startswith("FAIL")
            mx = [max(r[i] for r in rows) for i in range(3)]
            lines.append("| %s | %s | %.3g | %.3g | %g | %s |" % (name, device, mx[0], mx[1], mx[2], v))
            rows_json.append({"kernel": name, "family": case["family"], "device": device,
                              "reference": ref_name, "max_abs": mx[0], "max_rel": mx[1],
                              "ulp": mx[2], "verdict": v})
    print("\n".join(lines))
    print("\n%d cases x %d devices against %s: %d FAIL" %
          (len(cases), len(args.dirs), "triton" if not ref_dir else ref_manifest["device"], failures))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows_json, f, indent=1, default=str)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
