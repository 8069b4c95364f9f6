"""What a comparison runs: the plan, built once (by the command line, the study or a bench
script) from typed values, and checked before anything runs.

A comparison runs every cell (an allocator at a littering level) `runs`
times, round-robin over the cells, after `warmup` unrecorded rounds; each
round visits the cells in a new seeded random order (shuffle), and every
cell of a round litters with that round's seed (repeat_seed).

API::

    ComparePlan(cmd, allocators, levels, baseline, ...)   # .cells, .check()
    default_baseline(allocators, levels) -> Cell          # glibc (else the first) at the lowest level
    repeat_seed(seed, rep) -> int
    CACHE_METHODS
"""

from __future__ import annotations

import dataclasses

from alloclab import LabError
from alloclab.core.allocators import Allocator
from alloclab.core.levels import Cell, Level
from alloclab.measure import cache
from alloclab.measure.litter import DEFAULT_SEED

DEFAULT_TIMEOUT = 600.0
CACHE_METHODS = cache.METHODS


@dataclasses.dataclass
class ComparePlan:
    """One comparison: the program, the cells, how often and how each runs, where it writes."""

    cmd: list
    allocators: list            # Allocator, each once
    levels: list                # Level, each once
    baseline: Cell              # the cell every ratio is taken to
    runs: int = 5               # measured runs per cell
    warmup: int = 1             # unrecorded runs per cell before the measured ones
    outdir: str = "out/compare"
    timeout: float | None = DEFAULT_TIMEOUT
    cache: str = "off"          # off | perf | cachegrind | auto (measure.cache)
    profile: str | None = None  # the profile to litter with; None: profile the program first (on glibc)
    seed: int = DEFAULT_SEED
    shuffle: bool = True
    prepare: str | None = None  # a shell command before every run, untimed
    show_output: bool = False   # the program's stdout and stderr go to the terminal (not hashed)
    report: bool = True         # write report.html (and its plots)
    rss_every: float | None = None  # also run each cell once more, its RSS sampled this often (s)
    first_repeat: int = 1       # the rounds are repeats first_repeat .. first_repeat + runs - 1 (their
                                # seeds and order), so one comparison may be run a round at a time

    @property
    def cells(self) -> list[tuple[Allocator, Level]]:
        return [(a, lv) for a in self.allocators for lv in self.levels]

    @property
    def littered(self) -> bool:
        return any(lv.littered for lv in self.levels)

    def check(self) -> ComparePlan:
        """LabError for a plan that cannot run; the plan itself otherwise."""
        if self.runs < 1:
            raise LabError("--repeat must be at least 1")
        if self.first_repeat < 1:
            raise LabError("the first repeat is repeat 1 or later")
        if self.timeout is not None and self.timeout <= 0:
            raise LabError("--timeout must be positive")
        if self.rss_every is not None and not 0.001 <= self.rss_every <= 10:
            raise LabError("--rss-series takes an interval from 1 to 10000 ms")
        if self.cache not in CACHE_METHODS:
            raise LabError(f"--cache must be one of {', '.join(CACHE_METHODS)}")
        names = [a.name for a in self.allocators]
        if len(set(names)) != len(names):
            raise LabError("an allocator is listed twice")
        if not self.levels:
            raise LabError("no littering level given")
        if self.baseline.allocator not in names or self.baseline.level not in self.levels:
            raise LabError(f"baseline {self.baseline.key!r} is not a cell of this comparison "
                           f"(allocators {', '.join(names)}; levels "
                           f"{', '.join(lv.label for lv in self.levels)})")
        return self


def default_baseline(allocators: list, levels: list) -> Cell:
    """glibc when it is compared (else the first allocator) at Adv_0 (else the lowest level)."""
    names = [a.name for a in allocators]
    return Cell("glibc" if "glibc" in names else names[0], Level.ADV_0 if 0 in levels else min(levels))


def repeat_seed(seed: int, rep: int) -> int:
    """The littering seed of repeat `rep` (0 = the warm-up): each repeat samples
    its own heap layout, and every cell of one repeat shares it, so cells
    compared within a round see the same layout. splitmix64 of (seed, rep)."""
    z = (int(seed) * 0x9E3779B97F4A7C15 + (rep + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF
