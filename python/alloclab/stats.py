"""The lab's statistics, each computed in exactly one place.

Every consumer (compare's summary, the study's verdicts, the benchmarks under
bench/) takes medians, spreads, geometric means and intervals from here, so a
number printed in one report means the same thing in every other.

API::

    median(xs) -> float | None
    spread(xs) -> Spread | None                 # median, min, max, mean, n
    geomean(xs) -> float | None                 # positive values only; None when there are none
    bootstrap_interval(xs, stat=median, level=0.95, resamples=2000, seed=1) -> (low, high) | None
    ratio_spread(num, den) -> Spread | None     # paired: per-index ratios num[i] / den[i]
    interval_kind(n) -> str                     # the words the reports use for a spread of n values

A spread is min-max over the repeats: with the few repeats a lab run makes
(3-5), a bootstrap interval adds little over the range and hides how few
values there were, so the range is the default and the bootstrap is offered
where many values exist (pooled over programs or runs).
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics as _st
from typing import Callable, Iterable, Sequence


def _clean(xs: Iterable) -> list[float]:
    out = []
    for x in xs:
        if x is None:
            continue
        try:
            v = float(x)
        except (TypeError, ValueError):
            continue
        if math.isfinite(v):
            out.append(v)
    return out


def median(xs: Iterable) -> float | None:
    v = _clean(xs)
    return _st.median(v) if v else None


@dataclasses.dataclass(frozen=True)
class Spread:
    median: float
    low: float      # min over the values
    high: float     # max over the values
    mean: float
    n: int

    def as_dict(self) -> dict:
        return {"median": self.median, "min": self.low, "max": self.high, "mean": self.mean, "n": self.n}


def spread(xs: Iterable) -> Spread | None:
    v = _clean(xs)
    if not v:
        return None
    return Spread(_st.median(v), min(v), max(v), _st.fmean(v), len(v))


def geomean(xs: Iterable) -> float | None:
    v = [x for x in _clean(xs) if x > 0]
    if not v:
        return None
    return math.exp(sum(math.log(x) for x in v) / len(v))


def bootstrap_interval(xs: Sequence, stat: Callable = None, level: float = 0.95, resamples: int = 2000,
                       seed: int = 1) -> tuple[float, float] | None:
    """Percentile bootstrap interval of stat (default: the median) over xs."""
    v = _clean(xs)
    if not v:
        return None
    if len(v) == 1:
        return v[0], v[0]
    f = stat or _st.median
    rng = random.Random(seed)
    n = len(v)
    boots = sorted(f([v[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
    lo_i = int(math.floor((1 - level) / 2 * (resamples - 1)))
    hi_i = int(math.ceil((1 + level) / 2 * (resamples - 1)))
    return boots[lo_i], boots[hi_i]


def ratio_spread(num: Sequence, den: Sequence) -> Spread | None:
    """Spread of the paired ratios num[i] / den[i] (pairs with a missing or zero side are dropped)."""
    rs = []
    for a, b in zip(num, den):
        if a is None or b is None:
            continue
        a, b = float(a), float(b)
        if b > 0 and a >= 0:
            rs.append(a / b)
    return spread(rs)


def interval_kind(n: int) -> str:
    return f"min-max of {n} run{'s' if n != 1 else ''}"
