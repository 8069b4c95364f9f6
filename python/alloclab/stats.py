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
    median_interval(xs, level=0.75) -> MedianInterval | None  # order statistics that hold the median
    shift_interval(xs, ys, level=0.75) -> ShiftInterval | None  # how far xs lie from ys: two samples
    interval_kind(n) -> str                     # the words the reports use for a spread of n values

A spread is min-max over the repeats: with the few repeats a lab run makes
(3-5), a bootstrap interval adds little over the range and hides how few
values there were, so the range is the default and the bootstrap is offered
where many values exist (pooled over programs or runs). A verdict, which must
not change its meaning with the number of repeats, takes median_interval: a
pair of order statistics chosen for a stated probability of holding the
median, which narrows as repeats are added where min-max only widens.
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


@dataclasses.dataclass(frozen=True)
class MedianInterval:
    low: float
    high: float
    coverage: float  # the probability that [low, high] holds the median
    n: int
    k: int           # low and high are the k-th smallest and k-th largest values
    level: float     # the probability asked for

    @property
    def reached(self) -> bool:
        """n values were enough for the level asked (min-max of two values holds the median
        only half the time; three are the fewest that reach 0.75)."""
        return self.coverage >= self.level


def median_interval(xs: Iterable, level: float = 0.75) -> MedianInterval | None:
    """The distribution-free interval for the median of the values' population.

    For n independent draws the k-th smallest and k-th largest hold the median with
    probability 1 - 2 P(Binomial(n, 1/2) <= k - 1), whatever the distribution. The
    interval taken is the narrowest such pair whose probability is at least LEVEL;
    when even min-max falls short (too few values), min-max with its own, lower,
    coverage (`reached` is then false). At 0.75: min-max for 3 to 5 values (0.75,
    0.875, 0.94), the 2nd from each end for 6 to 8 (0.78-0.93), the 3rd for 9 and
    10, the 4th for 11 to 13."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, not {level!r}")
    v = sorted(_clean(xs))
    n = len(v)
    if n == 0:
        return None

    def cover(k: int) -> float:
        return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2.0 ** n

    k = 1
    while 2 * (k + 1) <= n + 1 and cover(k + 1) >= level:
        k += 1
    return MedianInterval(v[k - 1], v[n - k], cover(k), n, k, level)


@dataclasses.dataclass(frozen=True)
class ShiftInterval:
    low: float          # the k-th smallest of the n * m differences x - y
    high: float         # the k-th largest
    coverage: float     # its probability of holding the shift
    n: int              # how many xs
    m: int              # how many ys
    k: int
    level: float
    reached: bool       # coverage >= level
    estimate: float     # the median of the differences (the Hodges-Lehmann estimate of the shift)


def _rank_sum_counts(n: int, m: int) -> list[int]:
    """How many of the C(n + m, n) orderings of n xs among m ys have U = u (the count of pairs
    with the x above the y), for u = 0 .. n * m: the Mann-Whitney distribution with no ties."""
    # f[j][u]: orderings of i xs among j ys with U = u, built up one x at a time (the new x is
    # the largest x; it lies above some number t of the j ys).
    f = [[1] for _ in range(m + 1)]               # i = 0: one ordering, U = 0
    for i in range(1, n + 1):
        g = []
        for j in range(m + 1):
            row = [0] * (i * j + 1)
            for t in range(j + 1):                # the new x above exactly t ys
                # the other i - 1 xs lie among the t ys below it (their U counts pairs with those t)
                for u, c in enumerate(f[t]):
                    if c:
                        row[u + t] += c
            g.append(row)
        f = g
    return f[m]


def shift_interval(xs: Iterable, ys: Iterable, level: float = 0.75) -> ShiftInterval | None:
    """The distribution-free interval for the shift between two independent samples (the
    Mann-Whitney / Hodges-Lehmann interval): if the xs are drawn as the ys moved by delta, the
    k-th smallest and k-th largest of the n * m differences x - y hold delta with probability
    1 - 2 P(U <= k - 1), U the Mann-Whitney count of n and m values, whatever their common shape.
    The interval taken is the narrowest pair whose probability is at least LEVEL; when even
    the widest falls short, the widest with its own, lower, coverage (`reached` is then false).
    At 0.75: three values against three give the 2nd of nine differences from each end (0.80)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, not {level!r}")
    x, y = _clean(xs), _clean(ys)
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        return None
    d = sorted(a - b for a in x for b in y)
    counts = _rank_sum_counts(n, m)
    total = float(math.comb(n + m, n))

    def cover(k: int) -> float:
        return 1.0 - 2.0 * sum(counts[:k]) / total

    k = 1
    while 2 * (k + 1) <= n * m + 1 and cover(k + 1) >= level:
        k += 1
    c = cover(k)
    return ShiftInterval(d[k - 1], d[n * m - k], c, n, m, k, level, c >= level, _st.median(d))


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return f


def _beta_inc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _beta_inc(df / 2.0, 0.5, df / (df + t * t))


def t_critical(df: int, level: float = 0.95) -> float:
    """The t with P(|T| >= t) = 1 - level (bisection on t_two_sided_p)."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > 1.0 - level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclasses.dataclass(frozen=True)
class PairedRatio:
    """Paired ratios a_i / b_i summarised on the log scale (a paired t-test of log a - log b)."""
    geomean: float   # exp(mean log ratio)
    low: float       # the `level` confidence interval of the geometric mean ratio
    high: float
    p: float         # two-sided p of "the ratio is 1"
    n: int
    below: int       # ratios < 1
    above: int       # ratios > 1

    @property
    def clear(self) -> bool:
        """The interval excludes 1: the one rule compare and the ablation judge by."""
        return self.high < 1.0 or self.low > 1.0

    @property
    def standing(self) -> str:
        """Where the numerator stands against the denominator: "first" (the interval lies below 1),
        "behind" (above 1) or "tied" (it holds 1)."""
        return "first" if self.high < 1.0 else "behind" if self.low > 1.0 else "tied"


def paired_ratio(ratios: Iterable, level: float = 0.95) -> PairedRatio | None:
    """The geometric mean of paired ratios with its confidence interval and p.

    The ratios are taken as log-normal around a common factor: the paired t-test
    on their logarithms. One disturbed round widens the interval (the test errs
    towards "not clear"); n = 1 gives an interval of (0, inf) and p = 1."""
    v = [math.log(r) for r in _clean(ratios) if r > 0]
    n = len(v)
    if n == 0:
        return None
    below, above = sum(1 for x in v if x < 0), sum(1 for x in v if x > 0)
    m = _st.fmean(v)
    if n == 1:
        return PairedRatio(math.exp(m), 0.0, math.inf, 1.0, 1, below, above)
    se = _st.stdev(v) / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if m == 0.0 else 0.0
        return PairedRatio(math.exp(m), math.exp(m), math.exp(m), p, n, below, above)
    half = t_critical(n - 1, level) * se
    return PairedRatio(math.exp(m), math.exp(m - half), math.exp(m + half), t_two_sided_p(m / se, n - 1), n,
                       below, above)


def interval_kind(n: int) -> str:
    return f"min-max of {n} run{'s' if n != 1 else ''}"
