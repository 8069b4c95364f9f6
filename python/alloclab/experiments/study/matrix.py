"""One program's matrix in the study: its cells (every allocator at every level, or the cells a
stage runs again), the null's twin beside them, and its runs appended to the study's rows.

The null: every program a timed claim reads (all but the clean-only variants) runs its cells
on glibc twice in every round, the second time under the name "glibc~again"
(verdicts/data.AGAIN): its clean cell, and its Adv_3 cell when it runs littered (TWIN_LEVELS).
The two are the same command on the same allocator and the same littered heap (a round's cells
share its seed), interleaved and shuffled with the other cells, so their ratio is an effect of
exactly nothing measured under the same conditions as the effects judged: the run's noise for
that program on a clean heap and on a littered one (the littered runs' noise is the larger:
docs/notes/2026-11-29-littered-null.md).

API::

    StudyMatrix(ComparePlan)                # .only: the cells to run; .twin, .twin_levels: the null's twins
    TWIN_LEVELS                             # the levels whose glibc cell has a twin (when it runs)
    twin_of(allocator) -> Allocator         # glibc measured a second time, under AGAIN's name
    matrix_plan(p, prog, profile_path, timeout, only=None, runs=None, seed=None, sub="", first_repeat=1)
    run_program(p, prog, matrix, progress, writer, rows, stage=0) -> bool
    StudyInterrupted
"""

from __future__ import annotations

import dataclasses
import os
import re

from alloclab import LabError
from alloclab.core.allocators import Allocator, measured_again
from alloclab.core.levels import Cell, Level
from alloclab.core.results.runs import StudyRow, read_rows
from alloclab.experiments.compare.plan import ComparePlan
from alloclab.experiments.compare.run import run_matrix
from alloclab.experiments.study.plan import Plan
from alloclab.experiments.study.programs import Program
from alloclab.experiments.study.verdicts.data import NULL_ALLOCATOR

RESULTS = "results.csv"
TWIN_LEVELS = (Level.ADV_0, Level.ADV_3)   # the clean heap, and the littered heap the claims judge


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)


class StudyInterrupted(Exception):
    def __init__(self, rows):
        super().__init__("interrupted")
        self.rows = rows


@dataclasses.dataclass
class StudyMatrix(ComparePlan):
    """A comparison whose cells are ONLY (every allocator at every level when None), plus the
    null's twin (ComparePlan.twin) at each of its twin_levels when there is one."""

    only: list | None = None      # (Allocator, Level) pairs

    @property
    def base_cells(self) -> list:
        return list(self.only) if self.only is not None else super().base_cells


def twin_of(allocator: Allocator) -> Allocator:
    return measured_again(allocator)


def matrix_plan(p: Plan, prog: Program, profile_path: str | None, timeout: float, only=None,
                runs: int | None = None, seed: int | None = None, sub: str = "",
                first_repeat: int = 1) -> StudyMatrix:
    """PROG's matrix: ONLY, (allocator name, level) pairs, or every cell the plan gives it; the
    twins (glibc's cells of TWIN_LEVELS that run) unless PROG is clean-only. FIRST_REPEAT: its
    rounds are the repeats from that one on (the study runs one round of every variant of a
    workload before the next round)."""
    glibc = next(a for a in p.allocators if a.name == NULL_ALLOCATOR)
    if only is None:
        allocs = [glibc] if prog.clean_only else p.allocators
        levels = [Level.ADV_0] if (prog.clean_only or profile_path is None) else p.advs
        cells = None
    else:
        by_name = {a.name: a for a in p.allocators}
        wanted = {(n, Level.of(int(lv))) for n, lv in only if n in by_name}
        wanted.add((NULL_ALLOCATOR, Level.ADV_0))
        if profile_path is None:
            wanted = {(n, lv) for n, lv in wanted if not lv.littered}
        allocs = [a for a in p.allocators if any(n == a.name for n, _ in wanted)]
        levels = sorted({lv for _, lv in wanted})
        cells = [(by_name[n], lv) for a in allocs for n, lv in sorted(wanted) if n == a.name]
    # glibc's levels in this matrix: every level of a whole matrix, the wanted ones of a stage's
    ran = set(levels) if cells is None else {lv for a, lv in cells if a.name == NULL_ALLOCATOR}
    twins = tuple(lv for lv in TWIN_LEVELS if lv in ran)
    return StudyMatrix(prog.cmd, allocs, levels, Cell(NULL_ALLOCATOR, Level.ADV_0), runs=runs or p.repeat,
                       warmup=0 if only is not None or first_repeat > 1 else int(p.warmup),
                       outdir=os.path.join(p.outdir, "runs", slug(prog.name), sub), timeout=timeout, cache="off",
                       profile=profile_path if any(lv.littered for lv in levels) else None,
                       seed=p.seed if seed is None else seed, report=False, only=cells,
                       twin=None if prog.clean_only else twin_of(glibc), twin_levels=twins,
                       first_repeat=first_repeat)


def _note_matrix(p: Plan, prog: Program, summary) -> None:
    bad = [c for c in summary.cells if c.ok == 0]
    notes = [f"{prog.name}: no successful run in " + ", ".join(c.name for c in bad)] if bad else []
    if summary.stdout_differs:
        notes.append(f"{prog.name}: stdout differed between runs")
    p.notes.extend(n for n in notes if n not in p.notes)   # one matrix per round: say it once


def note_stdout(p: Plan, prog: Program, rows: list) -> None:
    """A note when PROG's successful runs (over every round) did not all print the same."""
    shas = {r.stdout_sha256 for r in rows if r.program == prog.name and r.ok and r.stdout_sha256}
    note = f"{prog.name}: stdout differed between runs"
    if len(shas) > 1 and note not in p.notes:
        p.notes.append(note)


def run_program(p: Plan, prog: Program, cp: StudyMatrix, progress, writer, rows, stage: int = 0,
                ops: int | None = None) -> bool:
    """One program's matrix CP into ROWS and the study's CSV; False when it could not run. OPS: the
    requests the program's own allocator served in its counted run (custom_ops of every row)."""
    try:
        summary = run_matrix(cp, progress=progress)
    except LabError as e:
        p.notes.append(f"{prog.name}: {e}")
        return False
    for r in read_rows(os.path.join(cp.outdir, RESULTS)):
        row = StudyRow.of(r, program=prog.name, workload=prog.workload, variant=prog.variant, kind=prog.kind,
                          origin=prog.origin, stage=stage, custom_ops=ops)
        rows.append(row)
        writer.write(row)
    if summary.meta.interrupted:
        p.notes.append(f"interrupted during {prog.name}: the report covers the runs finished before")
        raise StudyInterrupted(rows)
    _note_matrix(p, prog, summary)
    return True
