"""How well each stand-in matches its paper program on what the claims depend on.

A bundled workload stands for a program of the 2002 paper's Table 3 (its catalog
row's `paper_program`). The claims read its timings as if they were that
program's, so it has to spend about the same share of its time in memory
operations and keep about as many objects live at once (how much littering it
gets is set by its peak live objects). The calibration measures both on the
stand-in's naive variant on glibc (Table 3 is the programs with their custom
allocation replaced by general-purpose allocation), at the size the default
study runs it:

  time share    cachegrind's cycle estimate of the allocator's functions over
                the whole run's (alloclab.measure.memops.measure_cycles), not
                the custom/naive time ratio that the claims themselves judge
  max live      the profile's max_live (alloclab.measure.profile)
  run time      the wall time of one plain run on glibc

A stand-in is in band when its time share is within BAND_SHARE (1.5x) of its
program's, its max live within BAND_LIVE (2x), and a run takes at least
MIN_SECONDS. One that is not says why in the table; a flag (FLAGS) says why it
cannot be brought into band.

The measurements are machine-independent but slow (a cachegrind run per stand-in),
so they are kept in the repository (workloads/calibration.json, written by
`alloclab study --calibrate` with the tree's commit and the command) and the
study's report reads them. Each row keeps a fingerprint of the arguments the
study passes the stand-in; `stale(doc)` names the rows whose arguments changed
since (a test fails on them).

API::

    BAND_SHARE, BAND_LIVE, MIN_SECONDS, FLAGS, CALIBRATION_SCALE
    standins() -> list[Workload]            # catalog rows with a Table 3 row
    arguments(workload) -> list[str]        # what the calibrated run passes
    fingerprint(workload) -> str
    within(ratio, factor) -> bool | None
    judge(row) -> (in_band: bool, why: list[str])
    measure_one(workload, say, timeout) -> dict
    calibrate(say, path=DEFAULT_PATH, command=...) -> dict   # measures and writes
    load(path=DEFAULT_PATH) -> dict | None
    stale(doc) -> list[str]
    table(doc) -> list[dict]                # one row per stand-in, as the report shows it
    report(notes, path=DEFAULT_PATH) -> dict   # what the study's findings keep: source, rows, stale
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import subprocess

from alloclab import LabError
from alloclab.core import paths, runner
from alloclab.core.results.documents import CALIBRATION, read_document, write_document
from alloclab.experiments import workloads
from alloclab.experiments.study.plan import MODES
from alloclab.measure import memops
from alloclab.measure import profile as profiling

BAND_SHARE = 1.5
BAND_LIVE = 2.0
MIN_SECONDS = 0.2
# The default study's size: the calibration measures what the default study times.
CALIBRATION_SCALE = MODES["default"]["scale"]
DEFAULT_PATH = os.path.join(paths.SOURCE_ROOT, "workloads", "calibration.json")

# Why a stand-in is left out of band on purpose (workload -> reason).
FLAGS: dict[str, str] = {}


def standins() -> list:
    """The catalog's workloads that stand for a Table 3 program."""
    return [w for w in workloads.CATALOG if w.paper_program in workloads.PAPER_TABLE3]


def arguments(w) -> list[str]:
    """The arguments of the calibrated run: the naive variant at the default study's size."""
    return ["--alloc", w.variants[0], *workloads.size_args(w, CALIBRATION_SCALE)]


def fingerprint(w) -> str:
    """A digest of what the calibration depends on in the catalog: the paper program and the
    calibrated run's arguments."""
    text = "\0".join([w.name, w.paper_program, *arguments(w)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def within(ratio, factor: float) -> bool | None:
    """Whether RATIO lies within a factor FACTOR of 1 (edges included); None without a ratio."""
    if ratio is None:
        return None
    return 1 / factor <= ratio <= factor


def _ratio(measured, paper):
    if measured is None or not paper:
        return None
    return measured / paper


def judge(row: dict) -> tuple[bool, list[str]]:
    """Whether ROW (a calibration row) is in band, and in words why not."""
    why = []
    share, live = row.get("share_ratio"), row.get("live_ratio")
    if within(share, BAND_SHARE) is not True:
        why.append("time share " + (f"{share:.2f}x" if share is not None else "not measured") +
                   f" its program's (band {1 / BAND_SHARE:.2f}-{BAND_SHARE:g}x)")
    if within(live, BAND_LIVE) is not True:
        why.append("max live " + (f"{live:.2f}x" if live is not None else "not measured") +
                   f" its program's (band {1 / BAND_LIVE:.2f}-{BAND_LIVE:g}x)")
    seconds = row.get("seconds")
    if seconds is None or seconds < MIN_SECONDS:
        why.append("a run takes " + (f"{seconds:.2f} s" if seconds is not None else "an unknown time") +
                   f", under {MIN_SECONDS:g} s")
    return not why, why


def _seconds(cmd: list[str], timeout: float, runs: int = 3) -> float:
    """The median wall time of RUNS plain runs on glibc (a floor check, not a timing claim)."""
    walls = []
    for _ in range(runs):
        r = runner.run(cmd, timeout=timeout, unset=("LD_PRELOAD",), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        if not r.ok:
            raise LabError(f"{' '.join(cmd)} exited with status {r.exit_status}")
        walls.append(r.wall_s)
    return statistics.median(walls)


def measure_one(w, say, timeout: float = 3600) -> dict:
    """One stand-in's calibration row: measured, with its paper program's figures."""
    binary = workloads.binary(w.name)
    if not binary:
        raise LabError(f"workload {w.name} is not built (run make)")
    cmd = [binary, *arguments(w)]
    say(f"== calibrate {w.name} ({w.paper_program}): cachegrind")
    cycles = memops.measure_cycles(cmd, timeout=timeout)
    say(f"== calibrate {w.name}: profile and time")
    prof = profiling.run_profile(cmd, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    paper = workloads.PAPER_TABLE3[w.paper_program]
    return {"workload": w.name, "paper_program": w.paper_program, "arguments": arguments(w),
            "fingerprint": fingerprint(w), "memops_share": cycles["memops_share"], "cycles": cycles["cycles"],
            "memops_cycles": cycles["memops_cycles"], "instruction_share":
                cycles["memops_instructions"] / cycles["instructions"],
            "max_live": prof.max_live, "seconds": _seconds(cmd, timeout),
            "paper_share": paper["memops_share"], "paper_max_live": paper["max_live"]}


def calibrate(say, path: str = DEFAULT_PATH, command=("alloclab", "study", "--calibrate")) -> dict:
    """Measure every stand-in and write the calibration document to PATH; the document."""
    rows = [measure_one(w, say) for w in standins()]
    doc = {"commit": _commit(), "command": " ".join(command), "scale": CALIBRATION_SCALE,
           "method": "cachegrind cycle estimate, cycles = "
                     + " + ".join(f"{v}*{k}" for k, v in memops.CYCLE_WEIGHTS.items()),
           "band": {"share": BAND_SHARE, "live": BAND_LIVE, "min_seconds": MIN_SECONDS},
           "standins": rows}
    write_document(CALIBRATION, path, doc)
    return doc


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", paths.SOURCE_ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def load(path: str = DEFAULT_PATH) -> dict | None:
    """The calibration document at PATH, or None when there is none (an installed alloclab)."""
    if not os.path.exists(path):
        return None
    return read_document(CALIBRATION, path)


def stale(doc: dict) -> list[str]:
    """The stand-ins whose calibration no longer matches the catalog (missing, or measured with
    other arguments), in words."""
    kept = {r.get("workload"): r for r in doc.get("standins", [])}
    out = []
    for w in standins():
        r = kept.get(w.name)
        if r is None:
            out.append(f"{w.name}: not calibrated")
        elif r.get("fingerprint") != fingerprint(w):
            out.append(f"{w.name}: calibrated with {' '.join(r.get('arguments') or [])}, "
                       f"the study passes {' '.join(arguments(w))}")
    return out


def table(doc: dict | None) -> list[dict]:
    """The calibration table: each stand-in's measurements beside its program's, the ratios,
    and whether it is in band (else flagged, with why)."""
    out = []
    for r in (doc or {}).get("standins", []):
        row = dict(r)
        row["share_ratio"] = _ratio(r.get("memops_share"), r.get("paper_share"))
        row["live_ratio"] = _ratio(r.get("max_live"), r.get("paper_max_live"))
        row["in_band"], row["why"] = judge(row)
        if not row["in_band"] and r.get("workload") in FLAGS:
            row["why"] = row["why"] + [FLAGS[r["workload"]]]
        out.append(row)
    return out


def report(notes: list, path: str = DEFAULT_PATH) -> dict:
    """The calibration as the study's findings keep it ({} with a note when there is none):
    where it came from, its table, and the stand-ins it no longer matches."""
    try:
        doc = load(path)
    except LabError as e:
        notes.append(f"calibration not shown: {e}")
        return {}
    if doc is None:
        notes.append("calibration not shown: no workloads/calibration.json (an installed alloclab)")
        return {}
    old = stale(doc)
    if old:
        notes.append("the calibration is stale (remake it: scripts/calibrate): " + "; ".join(old))
    return {"commit": doc.get("commit"), "command": doc.get("command"), "scale": doc.get("scale"),
            "method": doc.get("method"), "rows": table(doc), "stale": old}


def main(argv: list[str] | None = None) -> int:
    """scripts/calibrate [--check] [PATH]: measure every stand-in and write PATH (default
    workloads/calibration.json); with --check, only say which rows are stale or out of band."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    path = args[0] if args else DEFAULT_PATH
    try:
        doc = load(path) if check else calibrate(lambda s: print(s, file=sys.stderr, flush=True), path,
                                                 command=["scripts/calibrate", *args])
    except LabError as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 2
    if doc is None:
        print(f"calibrate: no calibration at {path}", file=sys.stderr)
        return 1
    for r in table(doc):
        print(f"{r['workload']:<14} {r['paper_program']:<12} share {r['memops_share'] * 100:5.1f}% "
              f"({r['share_ratio']:.2f}x)  max live {r['max_live']:>9,} ({r['live_ratio']:.3g}x)  "
              f"{r['seconds']:.2f} s  {'in band' if r['in_band'] else 'OUT: ' + '; '.join(r['why'])}")
    old = stale(doc)
    for s in old:
        print(f"stale: {s}")
    return 1 if old else 0


if __name__ == "__main__":
    raise SystemExit(main())
