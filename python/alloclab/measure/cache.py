"""Cache behaviour of one run: hardware counters (perf stat) or a simulation
(valgrind's cachegrind).

``auto`` uses perf when ``perf stat -e instructions true`` reports a count,
else cachegrind when valgrind is installed, else nothing. Cachegrind always
gets an explicit geometry (GEOMETRY, printed in every report): valgrind
misreads the caches of some virtual machines, and a fixed geometry makes runs
comparable between machines. Cachegrind keeps the program's own allocator, so
an LD_PRELOADed allocator and the litter shim work beneath it unchanged.

API::

    detect(method="auto") -> "perf" | "cachegrind" | "off"
    measure(cmd, method, preload=(), env=None, workdir=".", tag="run",
            timeout=None, geometry=GEOMETRY) -> dict   # keys below; raises nothing (errors go in "error")
    GEOMETRY                          # {"I1": "32768,8,64", "D1": ..., "LL": ...}
    L2_512K                           # GEOMETRY with the Vam paper's last level: 512 KiB, 8-way
    geometry_words(geometry) -> str   # "I1 32768,8,64, D1 ..., LL ..." as the reports print it

measure() returns {"method", "instructions", "d1_misses", "ll_misses",
"d1_refs", "ll_refs", "error"} (None where the method cannot tell).
split_littering(res, alone, plain) adds "program_<count>": the counts minus
what the littering costs by itself (`true` littered the same way, minus `true`
on the same allocator without littering).
"""

from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess

from alloclab import LabError
from alloclab.core import runner

# 32 KiB 8-way L1s and a 32 MiB 16-way last level, 64-byte lines: a plain
# modern core's L1s and a server part's shared last level.
GEOMETRY = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "33554432,16,64"}
# The same L1s with the last level the Vam paper measured (2005, §4: a Pentium 4's
# 512 KB 8-way L2 with 64-byte lines).
L2_512K = {**GEOMETRY, "LL": "524288,8,64"}


def geometry_words(geometry: dict) -> str:
    return ", ".join(f"{k} {geometry[k]}" for k in ("I1", "D1", "LL") if k in geometry)
METHODS = ("auto", "perf", "cachegrind", "off")


def perf_works() -> bool:
    if not shutil.which("perf"):
        return False
    try:
        r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and "instructions" in f[2]:
            return f[0].strip().isdigit()
    return False


def require_perf() -> None:
    """LabError unless perf counts hardware events here (asked for explicitly, it must work)."""
    if not shutil.which("perf"):
        raise LabError("--cache perf: perf is not installed; use --cache cachegrind (simulated) or --cache off")
    if not perf_works():
        raise LabError("--cache perf: `perf stat -e instructions true` counts nothing on this machine (no "
                       "hardware counters, e.g. in a virtual machine, or perf_event_paranoid forbids it); "
                       "use --cache cachegrind (simulated) or --cache off")


def detect(method: str = "auto") -> str:
    """The method to use: "perf" and "cachegrind" as asked (perf is checked, LabError when it
    cannot count), "auto" the best that works here, "off" nothing."""
    if method == "off":
        return "off"
    if method == "perf":
        require_perf()
        return "perf"
    if method == "cachegrind":
        return "cachegrind"
    if perf_works():
        return "perf"
    if shutil.which("valgrind"):
        return "cachegrind"
    return "off"


def _empty(method: str, error: str | None = None) -> dict:
    return {"method": method, "instructions": None, "d1_refs": None, "d1_misses": None,
            "ll_refs": None, "ll_misses": None, "error": error}


def _cachegrind(cmd, preload, env, workdir, tag, timeout, geometry=GEOMETRY) -> dict:
    res = _empty("cachegrind")
    if not shutil.which("valgrind"):
        res["error"] = "valgrind is not installed"
        return res
    os.makedirs(workdir, exist_ok=True)
    pattern = os.path.join(workdir, f"cachegrind.{tag}.%p")
    for old in glob.glob(os.path.join(glob.escape(workdir), f"cachegrind.{tag}.*")):
        os.unlink(old)
    vg = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--trace-children=yes",
          f"--I1={geometry['I1']}", f"--D1={geometry['D1']}", f"--LL={geometry['LL']}",
          f"--cachegrind-out-file={pattern}", "--"]
    r = runner.run(no_aslr() + vg + list(cmd), preload=preload, env=env, timeout=timeout)
    res["aslr"] = "off (setarch -R)" if no_aslr() else "on (setarch is missing)"
    files = glob.glob(os.path.join(glob.escape(workdir), f"cachegrind.{tag}.*"))
    totals: dict[str, int] = {}
    for path in files:
        events = None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith("summary:") and events:
                    for name, value in zip(events, line.split()[1:]):
                        totals[name] = totals.get(name, 0) + int(value)
    if not totals:
        res["error"] = f"cachegrind wrote no summary (status {r.status}): {r.stderr_tail[-300:]}"
        return res
    g = totals.get
    res.update(
        instructions=g("Ir"),
        d1_refs=(g("Dr", 0) + g("Dw", 0)),
        d1_misses=(g("D1mr", 0) + g("D1mw", 0)),
        ll_refs=(g("I1mr", 0) + g("D1mr", 0) + g("D1mw", 0)),
        ll_misses=(g("ILmr", 0) + g("DLmr", 0) + g("DLmw", 0)),
    )
    if r.status != "ok":
        res["error"] = f"program status under cachegrind: {r.status}"
    return res


PERF_EVENTS = ["instructions", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses"]


def _perf(cmd, preload, env, workdir, tag, timeout) -> dict:
    res = _empty("perf")
    os.makedirs(workdir, exist_ok=True)
    out = os.path.join(workdir, f"perf.{tag}.csv")
    pc = ["perf", "stat", "-x,", "-o", out, "-e", ",".join(PERF_EVENTS), "--"]
    r = runner.run(pc + list(cmd), preload=preload, env=env, timeout=timeout)
    counts = {}
    try:
        with open(out, encoding="utf-8") as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) > 2 and parts[0].strip().isdigit():
                    counts[parts[2]] = int(parts[0])
    except OSError as e:
        res["error"] = f"perf wrote nothing: {e}"
        return res
    res.update(instructions=counts.get("instructions"), d1_refs=counts.get("L1-dcache-loads"),
               d1_misses=counts.get("L1-dcache-load-misses"), ll_refs=counts.get("LLC-loads"),
               ll_misses=counts.get("LLC-load-misses"))
    if r.status != "ok":
        res["error"] = f"program status under perf: {r.status}"
    if not counts:
        res["error"] = "perf counted nothing (counters not supported here?)"
    return res


COUNTS = ("instructions", "d1_refs", "d1_misses", "ll_refs", "ll_misses")


def split_littering(res: dict, alone: dict | None, plain: dict | None) -> dict:
    """Add program_<count>: the counts without what the littering itself cost.

    `alone` measures `true` littered the same way, `plain` measures `true` on
    the same allocator without littering; the littering costs alone - plain,
    which is kept as "litter_only" and subtracted. A difference below 0 (the
    counts are noisy, or littering made `true` cheaper) is reported as 0 with a
    line in res["warnings"], never silently. Without littering,
    program_<count> = <count>.
    """
    warns = res.setdefault("warnings", [])
    cost = None
    if alone and plain:
        cost = {}
        for k in COUNTS:
            if alone.get(k) is None or plain.get(k) is None:
                cost[k] = None
                continue
            d = alone[k] - plain[k]
            if d < 0:
                warns.append(f"{k}: littered `true` counted {alone[k]}, fewer than plain `true` ({plain[k]}); "
                             "the littering's own cost is taken as 0")
            cost[k] = max(0, d)
    res["litter_only"] = cost
    for k in COUNTS:
        v = res.get(k)
        base = cost.get(k) if cost else 0
        if v is None or base is None:
            res[f"program_{k}"] = None
            continue
        if v - base < 0:
            warns.append(f"{k}: the run counted {v}, fewer than the littering alone ({base}); "
                         "the program's own count is reported as 0")
        res[f"program_{k}"] = max(0, v - base)
    return res


def no_aslr() -> list[str]:
    """The prefix that runs a command with address-space randomisation off,
    so cache counts do not move with the layout of one run; [] without setarch."""
    if shutil.which("setarch"):
        return ["setarch", platform.machine(), "-R"]
    return []


def measure(cmd, method: str, preload=(), env=None, workdir: str = ".", tag: str = "run",
            timeout: float | None = None, geometry: dict = GEOMETRY) -> dict:
    """Cache counts of one run of cmd with `method` ("perf" or "cachegrind"; GEOMETRY: the
    caches cachegrind simulates, the machine's own under perf)."""
    if method == "cachegrind":
        return _cachegrind(cmd, preload, env, workdir, tag, timeout, geometry)
    if method == "perf":
        return _perf(cmd, preload, env, workdir, tag, timeout)
    return _empty("off")
