"""Staged repeats: the cells of timed claims the study's rounds left unsettled run again, in
fresh interleaved rounds, until every such claim separates from its noise or the time budget is
spent.

A claim is unsettled when the interval of its effect over its null holds no effect (verdicts/rules.py). Each
stage runs, for every program such a claim reads, the cells it reads (its measurement's and its
null's, found by evaluating the claim on a StudyData that records what it is asked for), glibc's
clean cell and the null's twins (matrix.TWIN_LEVELS), STAGE_RUNS rounds each, with a littering seed of its own.
A staged claim is judged on the staged repeats alone (they are independent of the rounds that
selected it), cumulatively over the stages, every look at the level corrected for the most
looks the plan allows (Bonferroni: plan.looks looks together miss the median with probability
at most 1 - LEVEL), so that stopping when an interval separates does not manufacture verdicts.
A stage runs only when the time its cells took in the first rounds says it fits in what is left
of the budget.

API::

    stage_runs(looks) -> int            # rounds per stage: the fewest whose interval reaches the level
    run_stages(p, rows, progress, writer, f, timeout) -> dict   # what was run, for the findings' meta
"""

from __future__ import annotations

import os
import random
import time

from alloclab import stats
from alloclab.experiments.study import analysis
from alloclab.experiments.study.matrix import TWIN_LEVELS, matrix_plan, run_program, slug
from alloclab.experiments.study.plan import Plan
from alloclab.experiments.study.verdicts import claims
from alloclab.experiments.study.verdicts.data import NULL_ALLOCATOR
from alloclab.experiments.study.verdicts.rules import level_for

SEED_STEP = 7919  # stage k litters with seeds drawn from plan.seed + k * SEED_STEP


def stage_runs(looks: int) -> int:
    """The fewest repeats whose interval, set against as many of the null's, holds the effect over
    the null at the level of one of LOOKS looks (verdicts/rules.py)."""
    level = level_for(looks)
    n = 3
    while not stats.shift_interval(range(n), range(n), level).reached:
        n += 1
    return n


def _wanted(need: dict, programs: list) -> dict:
    """Program -> the (allocator, level) cells to run again, from the unsettled claims' cells."""
    by_key = {(q.workload, q.variant): q for q in programs if not q.clean_only}
    out: dict = {}
    for cells in need.values():
        for w, v, a, adv in cells:
            q = by_key.get((w, v))
            if q is not None:
                out.setdefault(q.name, (q, set()))[1].add((a, adv))
    for q, cells in out.values():
        cells.add((NULL_ALLOCATOR, 0))
    return out


def _cost(rows: list, q, cells, runs: int) -> float:
    """Seconds RUNS rounds of Q's CELLS (and the twins) took in the first rounds' measure, wall time."""
    per_cell = []
    for a, adv in sorted(cells):
        ts = [r.wall_s for r in rows if r.program == q.name and r.allocator == a and int(r.adv) == adv
              and r.stage == 0]
        per_cell.append(stats.median(ts) or 0.0)
        if a == NULL_ALLOCATOR and adv in TWIN_LEVELS:
            per_cell.append(stats.median(ts) or 0.0)   # its twin
    return runs * sum(per_cell)


def run_stages(p: Plan, rows: list, progress, writer, f, timeout: float) -> dict:
    """Run the stages into ROWS and the study's CSV (writer, f); what ran, for the findings."""
    say = (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)
    runs, spent, ran = stage_runs(p.looks), 0.0, []
    for k in range(1, p.looks + 1):
        if p.stage_budget <= 0:
            break
        extra = analysis.Extra()
        need = claims.unsettled_cells(analysis.study_data(rows, extra), analysis.staged_data(rows, extra), p.looks)
        if not need:
            break
        wanted = _wanted(need, p.programs)
        cost = sum(_cost(rows, q, cells, runs) for q, cells in wanted.values())
        if spent + cost > p.stage_budget:
            p.notes.append(f"stage {k}: {', '.join(sorted(need))} still unsettled; another {runs} rounds of their "
                           f"cells would take about {cost:.0f} s, over what is left of the {p.stage_budget:.0f} s budget")
            break
        say(f"== study stage {k} of at most {p.looks}: {runs} rounds for {', '.join(sorted(need))}")
        start = time.monotonic()
        for rep in range(1, runs + 1):     # round by round over the programs, as the study's rounds go
            order = list(wanted.values())
            random.Random((p.seed + k * SEED_STEP) * 7919 + rep).shuffle(order)
            for q, cells in order:
                prof = os.path.join(p.outdir, "profiles", f"{slug(q.workload)}.json")
                cp = matrix_plan(p, q, prof if os.path.exists(prof) else None, timeout, only=sorted(cells), runs=1,
                                 seed=p.seed + k * SEED_STEP, sub=os.path.join(f"stage{k}", f"round{rep}"),
                                 first_repeat=rep)
                ops = next((r.custom_ops for r in rows if r.program == q.name), None)  # its counted run's
                run_program(p, q, cp, progress, writer, rows, stage=k, ops=ops)
                f.flush()
        spent += time.monotonic() - start
        ran.append({"stage": k, "claims": sorted(need), "programs": sorted(wanted), "runs": runs,
                    "seconds": round(time.monotonic() - start, 1)})
    return {"looks": p.looks, "runs_per_stage": runs, "budget_s": p.stage_budget, "spent_s": round(spent, 1),
            "stages": ran}
