"""What the claims are measured on: the study's rows, by workload, variant, allocator,
level and repeat, and the other instruments' results; and the per-repeat arithmetic the
claims share (gains, slowdowns, combinations over programs).

API::

    StudyData(rows, drag=None, frag=None, cache=None, memops=None, partial=(), footprint=None)
    paired(a, b, f) / gain(...) / slowdown(...) / per_repeat(lists, combine) / geo_effect(effects)
    best_allocator(data, workloads, variant="malloc") -> str | None
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from alloclab import stats


@dataclasses.dataclass
class StudyData:
    """What the rules read. rows: the study's results.csv rows (StudyRow)."""
    rows: list
    drag: list | None = None        # [{"workload", "variant", "total_drag"}]
    frag: list | None = None        # [{"program", "allocator", "adv", "fragmentation"}]
    cache: list | None = None       # [{"program", "allocator", "d1_misses", "ll_misses"}]
    memops: dict | None = None      # workload -> {"memops_share", "paper_share", "within_band"}
    partial: tuple = ()             # workloads that route only part of their allocations through regions
    footprint: dict | None = None   # server variant -> peak footprint in bytes (the workload's own accounting)
    kinds: dict = dataclasses.field(default_factory=dict)   # workload -> kind

    def __post_init__(self):
        self._t = {}
        self._rss = {}
        for r in self.rows:
            if not r.ok:
                continue
            cell = (r.workload, r.variant, r.allocator, int(r.adv))
            self._rss.setdefault(cell, {})[r.repeat] = float(r.max_rss_kb)
            for metric in ("program_inproc_s", "program_s", "wall_s"):
                t = getattr(r, metric)
                if t is not None:
                    self._t.setdefault(cell + (metric,), {})[r.repeat] = float(t)
            self.kinds.setdefault(r.workload, r.kind)

    def times(self, workload, variant, allocator, adv, metric="program_inproc_s") -> dict:
        """repeat -> time; falls back to program_s when the in-process time is missing."""
        t = self._t.get((workload, variant, allocator, adv, metric))
        if not t and metric == "program_inproc_s":
            t = self._t.get((workload, variant, allocator, adv, "program_s"))
        return t or {}

    def rss(self, workload, variant, allocator, adv) -> dict:
        """repeat -> peak RSS in KiB."""
        return self._rss.get((workload, variant, allocator, adv)) or {}

    def allocators(self) -> list:
        return sorted({r.allocator for r in self.rows})

    def workloads(self, *kinds) -> list:
        return sorted(w for w, k in self.kinds.items() if k in kinds)


def paired(a: dict, b: dict, f: Callable) -> list:
    """f(a[r], b[r]) for every repeat r both sides have."""
    return [f(a[r], b[r]) for r in sorted(set(a) & set(b)) if a[r] > 0 and b[r] > 0]


def gain(d: StudyData, w, faster, slower, alloc, adv, metric="program_inproc_s") -> list:
    """Per repeat: time(slower) / time(faster) - 1 (the fraction `faster` saves)."""
    return paired(d.times(w, slower, alloc, adv, metric), d.times(w, faster, alloc, adv, metric),
                  lambda s, f: s / f - 1.0)


def slowdown(d: StudyData, w, variant, alloc, adv, metric="program_inproc_s") -> list:
    """Per repeat: time at adv / time at Adv_0 - 1 (the same repeat index, a different layout)."""
    return paired(d.times(w, variant, alloc, adv, metric), d.times(w, variant, alloc, 0, metric),
                  lambda x, c: x / c - 1.0)


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


def best_allocator(d: StudyData, workloads, variant="malloc") -> str | None:
    """The allocator whose naive runs are fastest (geometric mean over the workloads that have
    VARIANT, Adv_0: a real program's naive variant may be another, svn's emulator)."""
    workloads = [w for w in workloads if any(d.times(w, variant, a, 0) for a in d.allocators())]
    best, best_t = None, None
    for a in d.allocators():
        ts = [stats.median(d.times(w, variant, a, 0).values()) for w in workloads]
        if not ts or any(t is None for t in ts):
            continue
        g = stats.geomean(ts)
        if best_t is None or g < best_t:
            best, best_t = a, g
    return best
