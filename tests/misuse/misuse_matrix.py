#!/usr/bin/env python3
"""The misuse matrix: every misuse class of misuse.c at 8 B, 4 KiB and 256 KiB, run under each
allocator given, one process per cell; a cell is *caught* when the run does not reach exit 0 (an
abort with a message, or a signal). Prints the matrix and each allocator's count.

    misuse_matrix.py MISUSE NAME=LIB.so|NAME=glibc ... [--at-least NAME:OTHER ...] [--floor NAME:N ...]

--at-least A:B fails (exit 1) when A catches fewer cells than B; --floor A:N when A catches fewer
than N. Runs are bounded by a 20 s timeout each (a hang counts as not caught, and is named).
"""

import argparse
import os
import signal
import subprocess
import sys

CLASSES = ["overflow-1", "overflow-32", "overflow-1m", "memcpy-overflow-1", "memcpy-overflow-32",
           "memcpy-overflow-1m", "underflow-1", "underflow-32", "underflow-1m", "memcpy-underflow-1",
           "memcpy-underflow-32", "zero-size-write", "write-after-free", "zero-after-free", "double-free",
           "double-free-later", "interior-free", "foreign-free", "realloc-after-free"]
SIZES = [8, 4096, 262144]


def run(misuse, lib, cls, size):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib != "glibc":
        env["LD_PRELOAD"] = lib
    try:
        r = subprocess.run([misuse, cls, str(size)], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=20)
    except subprocess.TimeoutExpired:
        return "hang"
    if r.returncode in (2, 3, 126, 127):
        sys.exit(f"misuse_matrix: {cls} {size} could not run (status {r.returncode}): "
                 f"{r.stderr.decode(errors='replace')[-300:]}")
    if r.returncode == 0:
        return "-"
    if r.returncode < 0:
        return signal.Signals(-r.returncode).name.replace("SIG", "")
    return f"exit {r.returncode}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("misuse")
    ap.add_argument("allocators", nargs="+", metavar="NAME=LIB")
    ap.add_argument("--at-least", action="append", default=[])
    ap.add_argument("--floor", action="append", default=[])
    a = ap.parse_args()
    allocs = [x.split("=", 1) for x in a.allocators]
    caught = {name: 0 for name, _ in allocs}
    head = ["class", *[f"{name} {size}" for size in SIZES for name, _ in allocs]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cls in CLASSES:
        row = [cls]
        for size in SIZES:
            for name, lib in allocs:
                got = run(a.misuse, lib, cls, size)
                caught[name] += got not in ("-", "hang")
                row.append(got)
        print("| " + " | ".join(row) + " |")
    total = len(CLASSES) * len(SIZES)
    print("caught: " + ", ".join(f"{name} {n} of {total}" for name, n in caught.items()))
    bad = []
    for spec in a.at_least:
        x, y = spec.split(":")
        if caught[x] < caught[y]:
            bad.append(f"{x} caught {caught[x]}, fewer than {y}'s {caught[y]}")
    for spec in a.floor:
        x, n = spec.split(":")
        if caught[x] < int(n):
            bad.append(f"{x} caught {caught[x]}, below its floor of {n}")
    for b in bad:
        print(f"misuse_matrix: {b}")
    print("misuse_matrix: " + ("FAILED" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
