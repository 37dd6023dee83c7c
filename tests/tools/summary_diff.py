#!/usr/bin/env python3
"""summary_diff.py A B [REL] — compare two summary.json files of the same lab run on two devices.

Every number must agree within REL relative (plus 1e-5 absolute, for values near 0); every
string and list shape must be equal. Keys that measure the machine, not the model (timings,
throughput, memory, the device itself) are not compared. Prints one line per difference (the
first 20) and exits 1 if there is any."""
import json
import math
import sys

SKIP = ("device", "seconds", "per_sec", "time", "throughput", "rss", "peak", "threads",
        "gflop", "elapsed", "speedup", "ms", "us_")


def skipped(key):
    k = key.lower()
    return any(s in k for s in SKIP)


def walk(a, b, path, rel, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if skipped(k):
                continue
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'first' if k in a else 'second'}")
                continue
            walk(a[k], b[k], f"{path}/{k}", rel, out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: lengths {len(a)} and {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]", rel, out)
    elif isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or a is None:
        if a != b:
            out.append(f"{path}: {a!r} and {b!r}")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return
        if not abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-5:
            out.append(f"{path}: {a!r} and {b!r} (relative difference "
                       f"{abs(a - b) / max(abs(a), abs(b), 1e-30):.2e} > {rel})")
    elif a != b:
        out.append(f"{path}: {a!r} and {b!r}")


def main():
    a = json.load(open(sys.argv[1], encoding="utf-8"))
    b = json.load(open(sys.argv[2], encoding="utf-8"))
    rel = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3
    out = []
    walk(a, b, "", rel, out)
    for line in out[:20]:
        print(line)
    if len(out) > 20:
        print(f"... and {len(out) - 20} more")
    sys.exit(1 if out else 0)


main()
