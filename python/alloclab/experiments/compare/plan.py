"""What a comparison runs: the plan, built once (by the command line, the study or a bench
script) from typed values, and checked before anything runs.

A comparison runs every cell (an allocator at a littering level) `runs`
times, round-robin over the cells, after `warmup` unrecorded rounds; each
round visits the cells in a new seeded random order (shuffle), and every
cell of a round litters with that round's seed (repeat_seed).

An A/A null: with a twin (allocators.measured_again of one of the allocators), that allocator's
cells run a second time in every round, at every level or at twin_levels, under the name
NAME~again; the ratio of the two is an effect of nothing measured in the same rounds as the
effects compared (round_order keeps the two apart).

API::

    ComparePlan(cmd, allocators, levels, baseline, ...)   # .cells, .twin_pairs, .check()
    round_order(cells, pairs, seed, rep, shuffle=True) -> list   # the cells as round REP visits them
    default_baseline(allocators, levels) -> Cell          # glibc (else the first) at the lowest level
    repeat_seed(seed, rep) -> int
    CACHE_METHODS
"""

from __future__ import annotations

import dataclasses
import random

from alloclab import LabError
from alloclab.core.allocators import AGAIN, Allocator, is_again
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
    twin: Allocator | None = None   # an A/A null's twin: one of the allocators under NAME~again
    twin_levels: tuple | None = None  # the levels its cells run at (None: every level)

    @property
    def cells(self) -> list[tuple[Allocator, Level]]:
        return self.base_cells + self.twin_cells

    @property
    def base_cells(self) -> list[tuple[Allocator, Level]]:
        return [(a, lv) for a in self.allocators for lv in self.levels]

    @property
    def twin_cells(self) -> list[tuple[Allocator, Level]]:
        if self.twin is None:
            return []
        return [(self.twin, lv) for lv in (self.levels if self.twin_levels is None else self.twin_levels)]

    @property
    def twin_pairs(self) -> list[tuple[tuple, tuple]]:
        """Each twin cell with its original, as (name, level) keys: ((original), (twin))."""
        return [((a.name[: -len(AGAIN)], lv), (a.name, lv)) for a, lv in self.twin_cells]

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
        if self.twin is not None and (not is_again(self.twin.name) or self.twin.name[: -len(AGAIN)] not in names):
            raise LabError(f"the twin {self.twin.name!r} is not one of the allocators ({', '.join(names)}) "
                           "measured again")
        if self.baseline.allocator not in names or self.baseline.level not in self.levels:
            raise LabError(f"baseline {self.baseline.key!r} is not a cell of this comparison "
                           f"(allocators {', '.join(names)}; levels "
                           f"{', '.join(lv.label for lv in self.levels)})")
        return self


def default_baseline(allocators: list, levels: list) -> Cell:
    """glibc when it is compared (else the first allocator) at Adv_0 (else the lowest level)."""
    names = [a.name for a in allocators]
    return Cell("glibc" if "glibc" in names else names[0], Level.ADV_0 if 0 in levels else min(levels))


# Shuffles of one round tried before its order is taken as it falls (a twin and its original are
# apart in two orders of three in a round of six cells; fewer than three cells cannot be kept apart).
ORDER_TRIES = 200


def round_order(cells: list, pairs: list, seed: int, rep: int, shuffle: bool = True) -> list:
    """CELLS ((Allocator, Level) pairs) in the order repeat REP visits them: shuffled with the
    round's own generator (seed, rep); with an A/A twin (PAIRS: ((original), (twin)) keys, as
    ComparePlan.twin_pairs), shuffled again by the same generator until no twin runs next to its
    original, within the round or across from the last run of the round before (whose order is
    found the same way; repeat 1 follows the unmeasured warm-up). Runs next to each other share a
    spell of the machine's noise (docs/notes/2026-11-29-effect-over-null.md), which a twin beside its
    original would hide from the null. A round with no twin, or whose first shuffle keeps them apart,
    is in the order it always had; after ORDER_TRIES shuffles the last one stands (fewer than three
    cells). A fixed order (SHUFFLE false) is the cells' own."""
    if not shuffle:
        return list(cells)
    keys = [frozenset(pair) for pair in pairs]

    def apart(order, before):
        seq = ([before] if before is not None else []) + [(a.name, lv) for a, lv in order]
        return not any(frozenset((x, y)) in keys for x, y in zip(seq, seq[1:]))

    before, order = None, list(cells)
    for r in (range(1, rep + 1) if keys else (rep,)):
        rng = random.Random(seed * 1000003 + r)
        for _ in range(ORDER_TRIES):
            order = list(cells)
            rng.shuffle(order)
            if not keys or apart(order, before):
                break
        before = (order[-1][0].name, order[-1][1]) if order else None
    return order


def repeat_seed(seed: int, rep: int) -> int:
    """The littering seed of repeat `rep` (0 = the warm-up): each repeat samples
    its own heap layout, and every cell of one repeat shares it, so cells
    compared within a round see the same layout. splitmix64 of (seed, rep)."""
    z = (int(seed) * 0x9E3779B97F4A7C15 + (rep + 1) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF
