"""The rules that turn a claim's measurement into a verdict.

A measurement is a list of values, one per repeat of the study
(the repeats litter with different seeds, so they sample heap layouts too);
its spread is the interval that holds their median with probability at least
LEVEL (0.75), whatever their distribution: a pair of order statistics
(stats.median_interval), min-max for three to five repeats, the second from
each end for six to eight, narrower still with more. A fixed probability
keeps a verdict's meaning when repeats are added: min-max of seven holds the
median with probability 0.98 and only widens with each repeat, so more runs
would leave more claims inconclusive. A rule turns the spread into a verdict:

  confirmed     the whole spread lies inside the paper's band
  stronger      the whole spread lies beyond the band, in the claimed direction
  weaker        the whole spread lies short of the band and clears the null value (a spread
                that reaches it may be no effect at all: inconclusive)
  refuted       the whole spread lies at or beyond the null value (no effect, or the
                opposite one), or above an upper bound the paper states
  inconclusive  the spread straddles a threshold, or too few repeats of a timed
                measure for the level (one or two): never counted as confirmed

Instruments that are deterministic (callgrind, cachegrind, the drag and
fragmentation simulators) give one exact value: their spread is that value.

API::

    Rule: Band(lo, hi, null=0.0) | AtMost(hi) | AtLeast(lo, null=0.0) | around(value)
    judge(rule, values, exact=False) -> (verdict, low, high, n, coverage, k)
    spread_words(n, coverage, exact, k=1) -> str
    LEVEL                                   # the probability a verdict's interval holds the median
"""

from __future__ import annotations

import dataclasses

from alloclab import stats

VERDICTS = ("confirmed", "weaker", "stronger", "refuted", "inconclusive")
LEVEL = 0.75  # what min-max of three repeats, the default study's, holds


# ---------------------------------------------------------------- rules

@dataclasses.dataclass(frozen=True)
class Band:
    """The paper reports an effect between lo and hi (null: no effect)."""
    lo: float
    hi: float
    null: float = 0.0

    def text(self) -> str:
        return (f"confirmed if the whole spread lies within [{self.lo:.3g}, {self.hi:.3g}]; stronger if "
                f"all of it is above; weaker if all of it is below the band and above {self.null:.3g} (a "
                f"spread that reaches {self.null:.3g} may be no effect at all); refuted if all of it is at "
                f"or below {self.null:.3g}; otherwise inconclusive")

    def judge(self, low: float, high: float) -> str:
        if high <= self.null:
            return "refuted"
        if low >= self.lo and high <= self.hi:
            return "confirmed"
        if low > self.hi:
            return "stronger"
        if high < self.lo and low > self.null:
            return "weaker"  # a smaller effect than the paper's, and an effect: the spread clears the null
        return "inconclusive"


@dataclasses.dataclass(frozen=True)
class AtMost:
    """The paper bounds the effect from above."""
    hi: float

    def text(self) -> str:
        return (f"confirmed if the whole spread is at most {self.hi:.3g}; refuted if all of it is above; "
                f"otherwise inconclusive")

    def judge(self, low: float, high: float) -> str:
        if high <= self.hi:
            return "confirmed"
        if low > self.hi:
            return "refuted"
        return "inconclusive"


@dataclasses.dataclass(frozen=True)
class AtLeast:
    """The paper bounds the effect from below (null: no effect). strict: the bound itself
    does not count ("most" is more than half, so exactly half is not most)."""
    lo: float
    null: float = 0.0
    strict: bool = False

    def text(self) -> str:
        bound = f"above {self.lo:.3g}" if self.strict else f"at least {self.lo:.3g}"
        below = f"at or below {self.lo:.3g}" if self.strict else "below it"
        return (f"confirmed if the whole spread is {bound}; weaker if all of it is {below} and above "
                f"{self.null:.3g}; refuted if all of it is at or below {self.null:.3g}; otherwise inconclusive")

    def judge(self, low: float, high: float) -> str:
        if high <= self.null:
            return "refuted"
        if low > self.lo or (low == self.lo and not self.strict):
            return "confirmed"
        if (high < self.lo or (high == self.lo and self.strict)) and low > self.null:
            return "weaker"  # below the bound, and an effect: the spread clears the null
        return "inconclusive"


def around(value: float) -> Band:
    """A point value the paper reports: half to twice it counts as the same finding."""
    return Band(value / 2.0, value * 2.0)


def judge(rule, values, exact: bool = False):
    """(verdict, low, high, n, coverage, k) for the per-repeat values of one measurement:
    low-high, the k-th smallest to the k-th largest, is the interval that holds their
    median with probability `coverage` (stats.median_interval at LEVEL); exact values
    are their own interval (coverage 1). Fewer repeats than LEVEL needs give the
    interval and no verdict."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if exact:
        low, high = min(vals), max(vals)
        return rule.judge(low, high), low, high, len(vals), 1.0, 1
    iv = stats.median_interval(vals, LEVEL)
    verdict = rule.judge(iv.low, iv.high) if iv.reached else "inconclusive"
    return verdict, iv.low, iv.high, iv.n, iv.coverage, iv.k


def spread_words(n: int, coverage: float, exact: bool, k: int = 1) -> str:
    """How a verdict row's interval (the k-th smallest to the k-th largest of n) was taken,
    in the words the reports print."""
    if exact:
        return "exact (deterministic instrument)"
    if n == 0:
        return "nothing measured"
    ends = "min-max" if k == 1 else f"{_ordinal(k)} smallest to {_ordinal(k)} largest"
    return f"{ends} of {n} repeat{'s' if n != 1 else ''}: holds the median with probability {coverage:.2f}"


def _ordinal(k: int) -> str:
    if k % 100 in (11, 12, 13):
        return f"{k}th"
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"
