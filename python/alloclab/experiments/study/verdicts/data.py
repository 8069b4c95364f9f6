"""What the claims are measured on: the study's rows, by workload, variant, allocator,
level and repeat, and the other instruments' results; the null (each program's A/A pairs:
its clean and its Adv_3 cell on glibc run twice per round, the second time under the name AGAIN
marks);
and the per-repeat arithmetic the claims share (gains, slowdowns, combinations over programs).

Times are judged on one measure for the whole run (time_measure): the program's CPU time after
littering (program_cpu_s) when every run has it, else the in-process wall time after littering
(program_inproc_s), else wall time minus littering (program_s). CPU time counts only the
moments the program ran, so other processes that take the CPUs away lengthen it far less than
they lengthen wall time (they still cost it caches and migrations: the null measures what is left).

Rows carry the stage they were run in (0: the study's rounds; 1, 2, ...: repeats added for
claims the first rounds left unsettled, experiments/study/stages.py); a StudyData holds the
rows of the stages it is given, so the first look and the staged looks never mix.

API::

    StudyData(rows, drag=None, frag=None, cache=None, memops=None, partial=(), footprint=None,
              stages=(0,))                     # .times() .null() .rss() .cells_read()
    AGAIN, again(name), is_again(name)         # the null's second label
    paired(a, b, f) / gain(...) / slowdown(...) / per_repeat(lists, combine) / geo_effect(effects)
    aa(d, workload, variants, adv=0) -> list   # the null of one program (variants: a tuple), per repeat
    null_between(d, workload, variants, adv, other) -> list   # the null of a ratio of a run at ADV to one at OTHER
    best_allocator(data, workloads) -> str | None
    NAIVE, EMULATOR                            # the naive variants: 2026 Table 4's build, the 2002 emulator

Which variant is a program's naive one (StudyData.naive): the claims of the 2026 paper compare a
custom allocator with `malloc`, the naive build of its Table 4; the 2002 paper compared region
programs with its region emulator (every region allocation a malloc, all freed when the region
is), so its claims take a region program's `emulator` variant where the run has one. A region
program without a `malloc` variant (Subversion, whose pools are switched off only by the
emulator) has the emulator as its naive variant for both papers: it is what 2026's naive build
of a region allocator is too (one malloc per object, freed when the region is).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

from alloclab import stats
from alloclab.core.allocators import AGAIN, again, is_again  # noqa: F401  the null's twin: "glibc~again"

NULL_ALLOCATOR = "glibc"  # the allocator whose clean cell is measured twice (every program runs on it)
MEASURES = ("program_cpu_s", "program_inproc_s", "program_s")
NAIVE = "malloc"          # 2026 Table 4's naive build of a program
EMULATOR = "emulator"     # the 2002 region emulator


@dataclasses.dataclass
class StudyData:
    """What the rules read. rows: the study's results.csv rows (StudyRow); stages: which of
    them to hold (0: the study's own rounds)."""
    rows: list
    drag: list | None = None        # [{"workload", "variant", "total_drag"}]
    frag: list | None = None        # [{"program", "allocator", "adv", "fragmentation"}]
    cache: list | None = None       # [{"program", "allocator", "d1_misses", "ll_misses"}]
    memops: dict | None = None      # workload -> {"memops_share", "paper_share", "within_band"}
    partial: tuple = ()             # workloads that route only part of their allocations through regions
    footprint: dict | None = None   # server variant -> peak footprint in bytes (the workload's own accounting)
    kinds: dict = dataclasses.field(default_factory=dict)   # workload -> kind
    stages: tuple = (0,)
    best: str | None = None         # the best allocator, when fixed by the first rounds (staged looks)

    def __post_init__(self):
        self._t, self._null, self._rss, self._variants = {}, {}, {}, {}
        self._trace: set | None = None
        ok = [r for r in self.rows if r.ok and r.stage in self.stages]
        self.time_measure = next((m for m in MEASURES if ok and all(getattr(r, m) is not None for r in ok)),
                                 "program_s")
        for r in ok:
            rep = (r.stage, r.repeat)
            if is_again(r.allocator):
                cell = (r.workload, r.variant, r.allocator[: -len(AGAIN)], int(r.adv))
                self._null.setdefault(cell, {})[rep] = float(getattr(r, self.time_measure))
                continue
            cell = (r.workload, r.variant, r.allocator, int(r.adv))
            self._variants.setdefault(r.workload, set()).add(r.variant)
            self._rss.setdefault(cell, {})[rep] = float(r.max_rss_kb)
            t = getattr(r, self.time_measure)
            if t is not None:
                self._t.setdefault(cell, {})[rep] = float(t)
        for r in self.rows:
            self.kinds.setdefault(r.workload, r.kind)

    def cells_read(self, *fns) -> set:
        """The cells (workload, variant, allocator, level) that fn(self), for each of FNS, asks for."""
        self._trace = set()
        try:
            for fn in fns:
                fn(self)
            return self._trace
        finally:
            self._trace = None

    def times(self, workload, variant, allocator, adv) -> dict:
        """(stage, repeat) -> time, on the run's time_measure."""
        if self._trace is not None:
            self._trace.add((workload, variant, allocator, int(adv)))
        return self._t.get((workload, variant, allocator, int(adv))) or {}

    def null(self, workload, variant, adv=0) -> tuple[dict, dict]:
        """The null's two sides, (stage, repeat) -> time: the cell on NULL_ALLOCATOR and its twin."""
        if self._trace is not None:
            self._trace.add((workload, variant, NULL_ALLOCATOR, int(adv)))
        return (self._t.get((workload, variant, NULL_ALLOCATOR, int(adv))) or {},
                self._null.get((workload, variant, NULL_ALLOCATOR, int(adv))) or {})

    def naive(self, workload, emulator_first: bool = False) -> str:
        """The variant WORKLOAD's custom allocator is compared with: NAIVE, or EMULATOR for a
        program that ran the emulator and no NAIVE; with EMULATOR_FIRST (the 2002 comparisons)
        EMULATOR wherever it ran. NAIVE when neither ran (the cells read are then empty)."""
        have = self._variants.get(workload, set())
        if EMULATOR in have and (emulator_first or NAIVE not in have):
            return EMULATOR
        return NAIVE

    def rss(self, workload, variant, allocator, adv) -> dict:
        """(stage, repeat) -> peak RSS in KiB."""
        return self._rss.get((workload, variant, allocator, int(adv))) or {}

    def allocators(self) -> list:
        return sorted({r.allocator for r in self.rows if not is_again(r.allocator)})

    def workloads(self, *kinds) -> list:
        return sorted(w for w, k in self.kinds.items() if k in kinds)


def paired(a: dict, b: dict, f: Callable) -> list:
    """f(a[r], b[r]) for every repeat r both sides have."""
    return [f(a[r], b[r]) for r in sorted(set(a) & set(b)) if a[r] > 0 and b[r] > 0]


def gain(d: StudyData, w, faster, slower, alloc, adv) -> list:
    """Per repeat: time(slower) / time(faster) - 1 (the fraction `faster` saves)."""
    return paired(d.times(w, slower, alloc, adv), d.times(w, faster, alloc, adv), lambda s, f: s / f - 1.0)


def slowdown(d: StudyData, w, variant, alloc, adv) -> list:
    """Per repeat: time at adv / time at Adv_0 - 1 (the same repeat index, a different layout)."""
    return paired(d.times(w, variant, alloc, adv), d.times(w, variant, alloc, 0), lambda x, c: x / c - 1.0)


def _aa_by_repeat(d: StudyData, w, v, adv) -> dict:
    own, twin = d.null(w, v, adv)
    return {r: twin[r] / own[r] - 1.0 for r in sorted(set(own) & set(twin)) if own[r] > 0 and twin[r] > 0}


def aa(d: StudyData, w, variants, adv=0) -> list:
    """The null of workload W, per repeat: its twin's time over its own - 1 at level ADV, for the
    first of VARIANTS that has a twin (an effect of exactly nothing, measured in the same rounds)."""
    for v in variants:
        vals = _aa_by_repeat(d, w, v, adv)
        if vals:
            return list(vals.values())
    return []


def null_between(d: StudyData, w, variants, adv, other) -> list:
    """The null of a ratio between a run of W at level ADV and one at OTHER, per repeat.

    At one level, that level's A/A values. Across levels (a slowdown: littered over clean), each
    repeat's two A/A values combined, log(1 + z) = (log(1 + z_adv) + log(1 + z_other)) / sqrt(2):
    an A/A ratio's log holds the noise of two runs at its level, a slowdown's one at each level,
    and this sum holds, for independent runs, the same variance as the slowdown's, v_adv + v_other.
    Taking the clean pair alone would understate a littered run's noise, which is the larger here
    (docs/notes/2026-11-29-littered-null.md); the littered pair alone would count it twice.
    A run without a twin at a littered level (one from before the littered twin) has its clean
    A/A values as the null of every ratio."""
    for v in variants:
        a, b = _aa_by_repeat(d, w, v, adv), _aa_by_repeat(d, w, v, other)
        if not b:
            continue
        if not a:
            return aa(d, w, (v,), 0)
        if adv == other:
            return list(a.values())
        return [math.expm1((math.log1p(a[r]) + math.log1p(b[r])) / math.sqrt(2.0)) for r in sorted(set(a) & set(b))]
    return aa(d, w, variants, 0)


def per_repeat(lists: list, combine: Callable) -> list:
    """Combine several per-repeat lists index by index (geomean or max over programs)."""
    lists = [x for x in lists if x]
    if not lists:
        return []
    n = min(len(x) for x in lists)
    return [combine([x[i] for x in lists]) for i in range(n)]


def geo_effect(effects: list) -> float:
    """Geometric mean of (1 + effect), as an effect."""
    return stats.geomean([1.0 + e for e in effects]) - 1.0


def best_allocator(d: StudyData, workloads) -> str | None:
    """The allocator whose naive runs (d.naive: svn's is its emulator) are fastest, geometric mean
    over the workloads whose naive variant ran, Adv_0; d.best when the study's first rounds fixed
    it (a staged look judges on the allocator they chose)."""
    if d.best:
        return d.best
    workloads = [w for w in workloads if any(d.times(w, d.naive(w), a, 0) for a in d.allocators())]
    best, best_t = None, None
    for a in d.allocators():
        ts = [stats.median(d.times(w, d.naive(w), a, 0).values()) for w in workloads]
        if not ts or any(t is None for t in ts):
            continue
        g = stats.geomean(ts)
        if best_t is None or g < best_t:
            best, best_t = a, g
    return best
