#!/usr/bin/env python3
# \file Merges `tessera bench --json` files (one per device) and peers.py's JSON into one markdown
# table: workload | Tessera CUDA | Tessera Vulkan | Triton | PyTorch | CUDA/Triton | Vulkan/CUDA
# | floor. Times are medians; ratios are time over time (above 1x: slower than the column it is
# divided by). Standard library only.
"""Merges benchmark JSON files into one markdown table.

    python3 bench/peers/compare.py FILE.json... [--out FILE.md]
"""

import argparse
import json
import math
import sys


def load(paths):
    docs = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("compare: skipping %s: %s" % (path, e), file=sys.stderr)
            continue
        if doc.get("schema") != "tessera-bench-1":
            print("compare: skipping %s: not a tessera-bench-1 file" % path, file=sys.stderr)
            continue
        doc["path"] = path
        docs.append(doc)
    return docs


def column_of(doc, row):
    """Which table column a row belongs to, or None."""
    if doc.get("source") == "tessera":
        backend = row.get("backend") or doc.get("device", {}).get("kind")
        return {"cuda": "cuda", "vulkan": "vulkan"}.get(backend)
    impl = row.get("impl", "")
    if impl.startswith("triton"):
        return "triton"
    if impl == "torch":
        return "torch"
    return None


def is_number(v):
    return isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v))


def figure(row):
    """The row's figure in its unit: the median for kernel rows, `value` for the others."""
    if row.get("status") != "pass":
        return None
    v = row.get("median_us") if row.get("kind", "kernel") == "kernel" else row.get("value")
    return v if is_number(v) else None


def pick(rows):
    """The row shown in a cell: a failure wins (a wrong result is a bug), else the lowest figure."""
    bad = [r for r in rows if r.get("status") in ("fail", "error")]
    if bad:
        return bad[0]
    good = [r for r in rows if figure(r) is not None]
    if good:
        return min(good, key=figure)
    return rows[0] if rows else None


def time_text(us):
    return "%.2f ms" % (us / 1e3) if us >= 1e4 else "%.1f us" % us


def rate_text(row, us):
    if row.get("flops"):
        tflops = row["flops"] / us / 1e6
        return "%.0f TFLOP/s" % tflops if tflops >= 10 else "%.3g GFLOP/s" % (tflops * 1e3)
    if row.get("bytes"):
        tbps = row["bytes"] / us / 1e6
        return "%.2f TB/s" % tbps if tbps >= 0.1 else "%.3g GB/s" % (tbps * 1e3)
    return ""


def cell(row):
    if row is None:
        return "-"
    status = row.get("status")
    if status == "fail":
        err = row.get("max_err")
        return "FAIL (err %.2g)" % err if is_number(err) else "FAIL"
    if status in ("error", "skip"):
        return status.upper()
    v = figure(row)
    if v is None:
        return "-"
    if row.get("kind", "kernel") != "kernel":
        return "%.2f %s" % (v, row.get("unit", ""))
    rate = rate_text(row, v)
    text = time_text(v) + (" (%s)" % rate if rate else "")
    if row.get("impl", "").startswith("triton-"):
        text += " " + row["impl"][len("triton-"):]
    return text


def ratio(a, b):
    fa, fb = (figure(a) if a else None), (figure(b) if b else None)
    if fa is None or fb is None or fb <= 0:
        return "-"
    return "%.2fx" % (fa / fb)


def cublas_peaks(table):
    """The best cuBLAS rate measured per input type (TFLOP/s): the compute ceiling of matmul."""
    peaks = {}
    for cols in table.values():
        for r in cols.get("torch", []):
            v = figure(r)
            if v and r.get("flops"):
                peaks[r.get("dtype")] = max(peaks.get(r.get("dtype"), 0), r["flops"] / v / 1e6)
    return peaks


def floor_text(cols, peaks):
    rows = cols.get("cuda", []) + cols.get("vulkan", []) + [r for c in ("triton", "torch")
                                                            for r in cols.get(c, [])]
    for r in rows:
        if r.get("flops") and peaks.get(r.get("dtype")):
            peak = peaks[r["dtype"]]
            return "%s (flops / cuBLAS %s)" % (time_text(r["flops"] / peak / 1e6),
                                                rate_text({"flops": 1e6}, 1 / peak))
    for r in rows:  # Tessera's rows first: the copy measured in the same run
        if is_number(r.get("floor_us")):
            return "%s (%s)" % (time_text(r["floor_us"]), r.get("floor_basis", ""))
    return "-"


def merge(docs):
    """workload -> column -> rows; a workload first seen in a later file goes right after the
    workload that precedes it there, so each file's order is kept."""
    table, order = {}, []
    for doc in sorted(docs, key=lambda d: d.get("source") != "tessera"):
        previous = None
        for row in doc.get("results", []):
            col = column_of(doc, row)
            if col is None:
                continue
            name = row.get("workload", "?")
            if name not in table:
                table[name] = {}
                order.insert(order.index(previous) + 1 if previous in order else len(order), name)
            table[name].setdefault(col, []).append(row)
            previous = name
    return table, order


def header(docs):
    lines = []
    for d in docs:
        if not any(column_of(d, r) for r in d.get("results", [])):
            lines.append("- `%s`: no CUDA or Vulkan rows (device %s): not in the table" % (
                d["path"], d.get("device", {}).get("name", "?")))
            continue
        dev = d.get("device", {})
        copy = d.get("copy_gbps")
        extra = ", ".join("%s %s" % kv for kv in sorted(d.get("versions", {}).items()))
        lines.append("- `%s`: %s %s (%s)%s%s%s" % (
            d["path"], d.get("source"), dev.get("name", "?"), dev.get("description", "?"),
            ", small sizes" if d.get("quick") else "",
            ", copy %.3g GB/s" % copy if is_number(copy) else "", ", " + extra if extra else ""))
    return lines


def render(docs):
    table, order = merge(docs)
    peaks = cublas_peaks(table)
    out = ["## Benchmarks side by side", ""] + header(docs) + [
        "",
        "Medians (kernel rows: device time per run, L2 flushed before each; compile and launch "
        "rows: their unit). Triton: the better of the seed kernel and a tuned variant. Ratios: "
        "time over time.",
        "",
        "| workload | Tessera CUDA | Tessera Vulkan | Triton | PyTorch | CUDA/Triton | Vulkan/CUDA "
        "| floor |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    for name in order:
        cols = table[name]
        chosen = {c: pick(cols.get(c, [])) for c in ("cuda", "vulkan", "triton", "torch")}
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, cell(chosen["cuda"]), cell(chosen["vulkan"]), cell(chosen["triton"]),
            cell(chosen["torch"]), ratio(chosen["cuda"], chosen["triton"]),
            ratio(chosen["vulkan"], chosen["cuda"]), floor_text(cols, peaks)))
        for c, r in chosen.items():
            if r is not None and r.get("status") in ("fail", "error", "skip") and r.get("detail"):
                notes.append("- %s, %s: %s" % (name, c, r["detail"][:240]))
    if notes:
        out += ["", "Failures, errors and skips:", ""] + notes
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="JSON files from tessera bench --json and peers.py")
    ap.add_argument("--out", help="also write the markdown here")
    args = ap.parse_args()
    docs = load(args.files)
    if not docs:
        print("compare: no usable JSON file", file=sys.stderr)
        return 1
    text = render(docs)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
