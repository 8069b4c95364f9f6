"""Running the study (a Plan): every program's matrix, then the other instruments, then the
analysis; each run appended to DIR/results.csv as it ends.

The experiment's invariants (the papers' method):
  - one heap profile per program, taken from its naive variant on glibc, and
    every variant and allocator of that program littered with it (2026 §3);
    each row records the sha256 of the profile that littered it;
  - the 2026 paper's taxonomy (experiments/workloads.py): each question takes
    the kinds its figure takes (RQ3: region and hybrid);
  - each repeat litters with its own seed, shared by the variants of a
    program, so spreads include the heap layout's variance;
  - littering time is not program time: 2026 verdicts use the in-process time
    from the end of littering to exit, as the paper's litterer measures.

API::

    run_study(plan, progress=sys.stderr) -> Findings     # .meta["interrupted"] when cut short
    read_results(outdir) -> list[StudyRow]
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import random
import subprocess
import sys
import time

from alloclab import LabError
from alloclab.core import machine
from alloclab.core.load import LoadWatch
from alloclab.core.results.findings import FORMAT, Findings
from alloclab.core.results.runs import RowWriter, StudyRow, read_rows
from alloclab.experiments.ablation import plan as ablation_plan
from alloclab.experiments import workloads
from alloclab.experiments.ablation import run as ablation_run
from alloclab.experiments.study import analysis, calibration, counters, instruments, stages
from alloclab.experiments.study.matrix import RESULTS, StudyInterrupted, matrix_plan, note_stdout, run_program, slug
from alloclab.experiments.study.plan import Plan
from alloclab.experiments.study.programs import Program
from alloclab.measure import profile as profiling


def _sayer(progress):
    return (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)


def profile_workload(naive: Program, outdir: str, timeout: float, say) -> str:
    """Profile a program once, from its naive variant on glibc: the profile
    that litters every variant and allocator of it (2026 §3)."""
    path = os.path.join(outdir, "profiles", f"{slug(naive.workload)}.json")
    say(f"== study profile {naive.workload} (from {naive.name})")
    prof = profiling.run_profile(naive.cmd, out=path, timeout=timeout, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    if prof.run["status"] != "ok":
        raise LabError(f"profiling {naive.name} ended with status {prof.run['status']}")
    return path


def _custom_ops(p: Plan, prog: Program, timeout: float) -> int | None:
    """How many requests PROG's own allocator served, from its counted run; None for a program
    without an allocator of its own, or (with a note) when the count could not be read."""
    if prog.counted is None:
        return None
    try:
        return counters.count(prog, timeout)
    except LabError as e:
        p.notes.append(f"{prog.name}: custom_ops not read ({e})")
        return None


def run_programs(p: Plan, progress, timeout: float = 300) -> list[StudyRow]:
    """Profile each workload once (its naive variant) and run its variants' matrices with that
    profile, round by round: round r runs repeat r of every variant (in an order shuffled per
    round) before round r + 1 begins, so that a ratio between two variants (custom against
    naive) is taken between runs made minutes apart at most, as a ratio within one variant's
    matrix is; the machine's slow drift then moves both sides of it. Every run is appended to
    DIR/results.csv as it ends."""
    say = _sayer(progress)
    rows: list = []
    littered = any(lv.littered for lv in p.advs)
    started = time.monotonic()
    with open(os.path.join(p.outdir, RESULTS), "w", newline="") as f:
        writer = RowWriter(f, StudyRow)
        done = 0
        for workload, progs in p.groups().items():
            naive = next((q for q in progs if q.variant in ("malloc", "real")), progs[0])
            profile_path = None
            if littered:
                try:
                    profile_path = profile_workload(naive, p.outdir, timeout, say)
                except LabError as e:
                    p.notes.append(f"{workload}: no profile ({e}); only its clean runs were made")
            ops = {prog.name: _custom_ops(p, prog, timeout) for prog in progs}
            able = list(progs)
            for rep in range(1, p.repeat + 1):
                order = list(able)
                random.Random(p.seed * 7919 + rep).shuffle(order)
                for prog in order:
                    done += 1
                    say(f"== study [{done}/{len(p.programs) * p.repeat}] {prog.name} round {rep}/{p.repeat}")
                    cp = matrix_plan(p, prog, profile_path, timeout, runs=1, sub=f"round{rep}", first_repeat=rep)
                    if not run_program(p, prog, cp, progress, writer, rows, ops=ops[prog.name]):
                        able.remove(prog)      # it could not run: its later rounds would not either
                    f.flush()
            for prog in progs:
                note_stdout(p, prog, rows)
            _note_output(p, workload, rows)
        p.phases["matrix"] = round(time.monotonic() - started, 1)
        started = time.monotonic()
        p.staged = stages.run_stages(p, rows, progress, writer, f, timeout)
        p.phases["stages"] = round(time.monotonic() - started, 1)
    return rows


def _note_output(p: Plan, workload: str, rows: list) -> None:
    """A real program prints the same with its own allocator and without: a note when not."""
    shas = {r.stdout_sha256 for r in rows if r.workload == workload and r.origin == "real" and r.ok}
    if len(shas) > 1:
        p.notes.append(f"{workload}: its output differed between its variants (custom and naive)")


def read_results(outdir: str) -> list[StudyRow]:
    return read_rows(os.path.join(outdir, RESULTS), StudyRow)


def run_ablation(p: Plan, progress) -> str | None:
    """Vam's design switches one at a time (experiments/ablation) into DIR/ablation/; the path
    of its ablation.json relative to DIR, or None (with a note) when it could not run."""
    vam = next((a for a in p.allocators if a.name == "vam"), None)
    if vam is None:
        p.notes.append("vam is not among the allocators: the ablation was not run")
        return None
    sub = os.path.join(p.outdir, "ablation")
    try:
        ap = ablation_plan.plan("full" if p.mode == "full" else "default", sub, vam,
                                command=["alloclab", "study", f"--{p.mode}", "--ablation"])
        ablation_run.write(ablation_run.run_ablation(ap, progress), sub)
    except LabError as e:
        p.notes.append(f"ablation: {e}")
        return None
    return os.path.join("ablation", "ablation.json")


def _timed(p: Plan, phase: str, fn, *args):
    """fn(*args), its seconds kept in p.phases[PHASE] (meta.phases_s: where a study's time goes)."""
    started = time.monotonic()
    try:
        return fn(*args)
    finally:
        p.phases[phase] = round(time.monotonic() - started, 1)


def _instruments(p: Plan, say, extra: analysis.Extra) -> None:
    """The deterministic instruments (counts under valgrind, not times), after the timed runs and
    side by side on the machine's CPUs (at most two): nothing timed runs meanwhile, and what they
    count does not depend on what else runs. The weights go one workload per task, so that the two
    CPUs stay busy to the end. Each instrument's own seconds go to p.phases (the weights' summed)."""
    weight_tasks = [(f"weights:{w.name}", (instruments.weights, p, say, (w.name,))) for w in workloads.CATALOG]
    tasks = [("memory", (instruments.memory_over_time, p, say)), *weight_tasks,
             ("cache", (instruments.locality, p, say))]  # the longest first
    started = time.monotonic()
    workers = max(1, min(2, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        running = {name: pool.submit(_timed, p, name, *task) for name, task in tasks}
        extra.memory = running["memory"].result()
        extra.cache = running["cache"].result()
        extra.weights = {}
        for name, _ in weight_tasks:
            extra.weights.update(running[name].result())
    p.phases["weights"] = round(sum(p.phases.pop(name, 0.0) for name, _ in weight_tasks), 1)
    p.phases["instruments"] = round(time.monotonic() - started, 1)


def _measure(p: Plan, progress, extra: analysis.Extra) -> list:
    say = _sayer(progress)
    rows = run_programs(p, progress)
    extra.footprints = _timed(p, "server_footprint", instruments.server_footprints, p)
    _instruments(p, say, extra)
    if p.ablation:
        extra.ablation = run_ablation(p, progress)
    return rows


def record(p: Plan, started: str) -> dict:
    """The run record: what a reader needs to obtain this run again (the tree it was made from,
    the command, when); the machine, its load and the allocators' versions are beside it in meta."""
    return machine.record(p.command or ["alloclab", "study", f"--{p.mode}"], started)


def _meta(p: Plan, extra: analysis.Extra, elapsed: float, interrupted: bool, load, started: str) -> dict:
    return {
        "record": record(p, started),
        "format_version": FORMAT.version, "mode": p.mode, "allocators": p.allocator_names,
        "allocator_info": [a.info() for a in p.allocators],
        "advs": [int(lv) for lv in p.advs], "repeat": p.repeat, "scale": p.scale, "memory_scale": p.memory_scale,
        "seed": p.seed, "programs": [dataclasses.asdict(q) for q in p.programs], "elapsed_s": elapsed,
        "notes": p.notes, "interrupted": interrupted, "machine": machine.during(load),
        "ablation": extra.ablation,
        "time_measure": "every timed claim: the program's CPU time after littering (program_cpu_s, user + "
                        "system, littering excluded), falling back to the in-process wall time after littering "
                        "(program_inproc_s) when a run lacks it; each verdict names the measure that judged it",
        "null": "each program's clean cell on glibc measured twice per round (the second as glibc~again): "
                "the A/A ratio is each timed claim's null",
        "staged": p.staged,
        "phases_s": p.phases,
    }


def run_study(p: Plan, progress=sys.stderr) -> Findings:
    """Run the plan; its findings (tables, verdicts, meta), for outputs.write_outputs."""
    start, started = time.monotonic(), machine.utc()
    watch = LoadWatch.start()  # what else the machine did while the study measured
    os.makedirs(p.outdir, exist_ok=True)
    say = _sayer(progress)
    say(f"study ({p.mode}): {len(p.programs)} programs x {len(p.allocators)} allocators x "
        f"{len(p.advs)} littering levels x {p.repeat} run(s) (clean-only variants: glibc, Adv_0)")
    for n in p.notes:
        say(f"note: {n}")
    interrupted = False
    rows: list = []
    extra = analysis.Extra()
    try:
        rows = _measure(p, progress, extra)
    except StudyInterrupted as e:
        interrupted, rows = True, e.rows
    except KeyboardInterrupt:
        interrupted = True
        p.notes.append("interrupted: the report covers what was measured before the interruption")
        try:
            rows = read_results(p.outdir)
        except LabError:
            rows = []
    extra.profiles = analysis.collect_profiles(p.outdir)
    extra.calibration = calibration.report(p.notes)
    findings = analysis.analyse(rows, extra, p.allocator_names, [int(lv) for lv in p.advs], looks=p.looks)
    for w in findings.tables.get("unverified_pairs", []):
        say(f"warning: {w}")
        p.notes.append(w)
    load = watch.stop()
    say(f"machine: {load.words()}")
    findings.meta = _meta(p, extra, time.monotonic() - start, interrupted, load, started)
    return findings
