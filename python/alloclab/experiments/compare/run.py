"""Running a comparison (a ComparePlan): the profile littering samples from, the warm-up,
the measured rounds, and the cache counts, each run appended to DIR/results.csv as it ends.

run_matrix() profiles the command once (on glibc, unless the plan names a
profile), then runs every cell `warmup` times unrecorded and `runs` times
measured, round-robin over the cells so that drift in the machine hits every
cell alike (each round visits the cells in a new seeded random order, so no
cell always follows the same neighbour; an A/A twin never runs next to its
original: plan.round_order). Each measured run is appended to
DIR/results.csv and flushed as soon as it ends; when the matrix stops early
(Ctrl-C, an exception) the rows written so far stay, and the summary and
report are still written from them.

With --rss-series each cell runs once more after the rounds, its resident memory
sampled over time into DIR/rss_series.csv (unrecorded in the timings: sampling
is not free). Cache behaviour (perf or cachegrind, see alloclab.measure.cache) is measured
once per cell — cachegrind is deterministic, so repeats would add nothing.

When the program leaves no profile (it crashed under the profiling shim), the
littered cells are not run: they stay in the summary with no runs and a note
(meta.skipped), and the clean cells run as usual.

API::

    run_matrix(plan, progress=sys.stderr) -> Summary   # also DIR/summary.json (and report.html)
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys

from alloclab.core import allocators, machine, runner
from alloclab.core.levels import cell_key
from alloclab.core.progress import Progress
from alloclab.core.results.runs import RowWriter, RunRow
from alloclab.core.results.series import write_rss_series
from alloclab.core.results.summary import Meta, Summary, write_summary
from alloclab.experiments.compare import report
from alloclab.experiments.compare.plan import ComparePlan, repeat_seed, round_order
from alloclab.experiments.compare.summary import summarise
from alloclab.measure import cache, litter
from alloclab.measure import profile as profiling

RSS_SERIES = "rss_series.csv"


@dataclasses.dataclass
class _Matrix:
    """A comparison as it runs: its plan, what it records, and where it says so."""

    plan: ComparePlan
    meta: Meta
    cells: list                    # (Allocator, Level) still to run (the littered ones go when unprofiled)
    profile_path: str
    say: object
    rows: list = dataclasses.field(default_factory=list)

    def setup(self, a, level, seed):
        return litter.setup_level(a, level, self.profile_path, seed, measured=True)


def _sayer(progress):
    return (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)


def _profile(plan: ComparePlan, path: str, say) -> str | None:
    """DIR/profile.json, the profile every littered cell samples from; a note when there is none."""
    if not plan.littered:
        return None
    allocators.shim("litter")  # fail early when the shims are not built
    if plan.profile is not None:
        if os.path.abspath(plan.profile) != os.path.abspath(path):
            # byte for byte: every matrix littered with one profile records one sha256
            shutil.copyfile(plan.profile, path)
        return None
    say(f"profiling: {' '.join(plan.cmd)}")
    try:
        prof = profiling.run_profile(plan.cmd, out=path, timeout=plan.timeout, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
    except profiling.NoProfile as e:
        note = f"littered cells not run: {e}"
        say(f"WARNING: {note}")
        return note
    say(f"profile: {prof.allocations} allocations, max_live {prof.max_live}, "
        f"{len(prof.sizes)} sizes below {prof.cutoff}")
    for w in profiling.warnings(prof):
        say(f"WARNING: {w}")
    if prof.run["status"] != "ok":
        say(f"WARNING: the profiled run ended with status {prof.run['status']}; "
            "the profile covers what it did until then")
    return None


def _meta(plan: ComparePlan, method: str, profile_path: str, skipped: str | None) -> Meta:
    cells = plan.cells
    littered = plan.littered and not skipped
    meta = Meta(
        command=list(plan.cmd), started_utc=machine.utc(), machine=machine.machine_info(),
        allocators=[{"name": a.name, "path": a.path, "version": a.version} for a in plan.allocators],
        advs={lv.label: {"multiplier": lv.multiplier, "occupancy": lv.occupancy} for lv in plan.levels},
        repeat=plan.runs, order="round-robin, shuffled per round" if plan.shuffle else "round-robin, fixed order",
        timeout_s=plan.timeout, seed=plan.seed,
        seeds="per repeat: splitmix64(seed, repeat), shared by every cell of the repeat (column seed)",
        program_time="program_s = wall_s - litter_s; program_inproc_s = from the end of littering to exit, "
                     "inside the process (the litter shim's run_ms; empty when the process left without "
                     "running its destructors)",
        baseline=plan.baseline.key, cache_method=method,
        cache_geometry=cache.GEOMETRY if method == "cachegrind" else None,
        profile=profile_path if os.path.exists(profile_path) else None,
        cells=[[a.name, lv] for a, lv in cells],
        profile_sha256=(runner.file_sha256(profile_path) if littered else "") or None,
        warmup=int(plan.warmup))
    if skipped:
        meta.skipped = {"cells": [[a.name, lv] for a, lv in cells if lv.littered], "reason": skipped}
    return meta


def _start(plan: ComparePlan, say) -> _Matrix:
    runner.check_command(plan.cmd)
    plan.check()
    os.makedirs(plan.outdir, exist_ok=True)
    profile_path = os.path.join(plan.outdir, "profile.json")
    skipped = _profile(plan, profile_path, say)
    method = cache.detect(plan.cache)
    if plan.cache == "auto":
        say(f"--cache auto: {_auto_choice(method)}")
    cells = [(a, lv) for a, lv in plan.cells if not (skipped and lv.littered)]
    return _Matrix(plan, _meta(plan, method, profile_path, skipped), cells, profile_path, say)


def _auto_choice(method: str) -> str:
    """What --cache auto chose, and why, in words."""
    if method == "perf":
        return "perf (the hardware counters count here)"
    if method == "cachegrind":
        geometry = " ".join(f"{k}={v}" for k, v in cache.GEOMETRY.items())
        return (f"cachegrind ({geometry}), as perf cannot count cache misses here: each cell runs once "
                "more under Valgrind, some 50x slower than a plain run (--cache off skips it)")
    return "off: neither perf's counters nor valgrind work here"


def _warmups(m: _Matrix, prog: Progress) -> None:
    p, n = m.plan, len(m.cells)
    for wi in range(p.warmup):
        for i, (a, lv) in enumerate(m.cells, 1):
            preload, env = m.setup(a, lv, repeat_seed(p.seed, 0))
            label = f"[warm-up {wi * n + i}/{p.warmup * n}] {a.name} {lv.label}"
            prog.begin(label)
            r, _ = litter.run_logged(p.cmd, preload, env, p.timeout, p.prepare, p.show_output)
            m.say(prog.done(f"{label} {r.wall_s:.3f}s {r.status}"))


def _row(m: _Matrix, k: int, a, lv, rep: int, rep_seed: int, r, log, started: str) -> RunRow:
    litter_s = log.litter_s
    row = RunRow(run=k, allocator=a.name, adv=lv, multiplier=lv.multiplier, occupancy=lv.occupancy, repeat=rep,
                 seed=rep_seed if lv.littered else None,
                 profile_sha256=(m.meta.profile_sha256 or "") if lv.littered else "",
                 wall_s=round(r.wall_s, 6), user_s=round(r.user_s, 6), sys_s=round(r.sys_s, 6),
                 max_rss_kb=r.max_rss_kb, exit_code=r.exit_code, signal=r.signal, status=r.status,
                 stdout_sha256=r.stdout_sha256 or "", litter_s=round(litter_s, 6),
                 program_s=round(max(0.0, r.wall_s - litter_s), 6),
                 program_inproc_s=None if log.inproc_s is None else round(log.inproc_s, 6), started_utc=started,
                 program_cpu_s=None if log.cpu_s is None else round(log.cpu_s, 6),
                 private_dirty_kb=r.private_dirty_kb, lazyfree_kb=r.lazyfree_kb, anon_huge_kb=r.anon_huge_kb)
    if r.ok and lv.littered and not log.littered:
        m.say(f"WARNING: {a.name} {lv.label}: the litter shim logged no littering; "
              "this run's litter time is unknown (status set to no_litter_log)")
        row.status = "no_litter_log"
    return row


def _rounds(m: _Matrix, prog: Progress, writer: RowWriter, f) -> None:
    p = m.plan
    total = len(m.cells) * p.runs
    k = 0
    first = len(m.cells) * (p.first_repeat - 1)   # the run numbers of the rounds before, run apart
    for rep in range(p.first_repeat, p.first_repeat + p.runs):
        order = round_order(m.cells, p.twin_pairs, p.seed, rep, p.shuffle)
        rep_seed = repeat_seed(p.seed, rep)
        for a, lv in order:
            preload, env = m.setup(a, lv, rep_seed)
            started = machine.utc()
            prog.begin(f"[{k + 1}/{total}] {a.name} {lv.label} repeat {rep}", k, total)
            r, log = litter.run_logged(p.cmd, preload, env, p.timeout, p.prepare, p.show_output)
            k += 1
            row = _row(m, first + k, a, lv, rep, rep_seed, r, log, started)
            writer.write(row)
            f.flush()
            m.rows.append(row)
            tail = r.stderr_tail.strip()
            extra = "" if r.ok else f" {r.status.upper()}" + (f" ({tail.splitlines()[-1][:120]})" if tail else "")
            m.say(prog.done(f"[{k}/{total}] {a.name} {lv.label} repeat {rep} {r.wall_s:.3f}s{extra}", k, total))


def _rss_series(m: _Matrix, prog: Progress) -> None:
    """Each cell run once more, unrecorded in the timings, its resident memory sampled every
    plan.rss_every seconds (DIR/rss_series.csv)."""
    p, series = m.plan, {}
    for i, (a, lv) in enumerate(m.cells, 1):
        preload, env = m.setup(a, lv, repeat_seed(p.seed, 1))
        label = f"[rss {i}/{len(m.cells)}] {a.name} {lv.label}"
        prog.begin(label, i - 1, len(m.cells))
        r = runner.run(p.cmd, preload=preload, env=env, timeout=p.timeout, rss_every=p.rss_every)
        series[(a.name, lv)] = r.rss_series or []
        peak = max((kb for _, kb in r.rss_series or []), default=0)
        m.say(prog.done(f"{label} {len(r.rss_series or [])} samples, peak {peak / 1024:.1f} MiB {r.status}",
                        i, len(m.cells)))
    write_rss_series(os.path.join(p.outdir, RSS_SERIES), series)
    m.meta.rss_series = {"file": RSS_SERIES, "every_s": p.rss_every}


def _cache_counts(m: _Matrix, prog: Progress) -> None:
    """Each cell's counts once, the littering's own counts measured alone and subtracted; the
    progress line gives the time left."""
    p, method = m.plan, m.meta.cache_method
    results, plain_true = {}, {}
    workdir = os.path.join(p.outdir, "cache")
    limit = None if p.timeout is None else p.timeout * 50
    true = [shutil.which("true") or "/bin/true"]
    for i, (a, lv) in enumerate(m.cells, 1):
        preload, env = m.setup(a, lv, repeat_seed(p.seed, 1))
        tag = f"{a.name}-{lv.label}"
        prog.begin(f"[cache {i}/{len(m.cells)}] {a.name} {lv.label} {method}", i - 1, len(m.cells))
        res = cache.measure(p.cmd, method, preload=preload, env=env, workdir=workdir, tag=tag, timeout=limit)
        # The counts include the littering before main; measure that
        # alone (the same littering in front of `true`) and subtract.
        alone = plain = None
        if env and "LITTER_PROFILE" in env:
            alone = cache.measure(true, method, preload=preload, env=env, workdir=workdir,
                                  tag=tag + "-litter-only", timeout=limit)
            if a.name not in plain_true:
                bare, bare_env = litter.setup(a, None, 0, 0)
                plain_true[a.name] = cache.measure(true, method, preload=bare, env=bare_env, workdir=workdir,
                                                   tag=f"{a.name}-true", timeout=limit)
            plain = plain_true[a.name]
        cache.split_littering(res, alone, plain)
        results[cell_key(a.name, lv)] = res
        m.say(prog.done(f"[cache {i}/{len(m.cells)}] {a.name} {lv.label} {method}: D1 misses "
                        f"{res['d1_misses']} LL misses {res['ll_misses']}"
                        + (f" ({res['error']})" if res.get("error") else ""), i, len(m.cells)))
    m.meta.cache_results = results


def run_matrix(plan: ComparePlan, progress=sys.stderr) -> Summary:
    """Run the plan and write DIR/results.csv, summary.json (and plots, report.html with
    plan.report); returns the summary."""
    say = _sayer(progress)
    m = _start(plan, say)
    prog = Progress(progress)
    try:
        with open(os.path.join(plan.outdir, "results.csv"), "w", newline="", encoding="utf-8") as f:
            writer = RowWriter(f)
            f.flush()
            _warmups(m, prog)
            _rounds(m, prog, writer, f)
            if plan.rss_every:
                _rss_series(m, Progress(progress))
            if m.meta.cache_method != "off":
                _cache_counts(m, Progress(progress))
    except KeyboardInterrupt:
        prog.cancel()
        m.meta.interrupted = True
        say("interrupted: writing the summary and report from the runs finished so far")
    finally:
        m.meta.finished_utc = machine.utc()
        summary = summarise(m.rows, m.meta)
        write_summary(summary, plan.outdir)
        if plan.report:
            report.write_report(summary, plan.outdir)
    return summary
