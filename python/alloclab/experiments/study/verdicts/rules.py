"""The rules that turn a claim's measurement into a verdict, judged against the run's own noise.

A measurement is a list of values, one per repeat of the study (the repeats litter with
different seeds, so they sample heap layouts too); its interval is the pair of order
statistics that holds their median with probability at least LEVEL (0.75), whatever their
distribution (stats.median_interval): min-max for three to five repeats, the second from each
end for six to eight, narrower still with more. A fixed probability keeps a verdict's meaning
when repeats are added.

A timed measurement also has its *null*: the same ratio taken between two runs that differ by
nothing (one cell measured twice in every round under two labels, an A/A pair), one value per
repeat. A timed claim is judged on its *effect over its null*: the interval of the shift between
the repeats' log ratios and the null's (stats.shift_interval, the two-sample Mann-Whitney /
Hodges-Lehmann interval: for three repeats against three null values, the 2nd smallest to the
2nd largest of the nine ratios (1 + value) / (1 + null), probability 0.80). Its premise is that
the null's values are drawn like the repeats' but for the effect, which is what an A/A pair
measured in the same interleaved rounds is for. Noise enters once, from both sides: a busy run
spreads the null, and the interval with it. (The null's furthest value from no effect, its
*noise floor*, is reported beside it; a claim that counts programs within a margin is unsettled
when that floor reaches its margin.) The verdicts:

  unsettled     the interval of the effect over its null holds no effect: this run could not tell
                the effect from its noise. Only for claims of an effect (Band, AtLeast, UpTo); a
                claim of at most so much is judged on the interval as it is
  confirmed     the whole interval lies inside the paper's band
  stronger      the whole interval lies beyond the band, in the claimed direction
  weaker        the whole interval lies short of the band and clears no effect (an interval that
                reaches it may be no effect at all: inconclusive, or unsettled when timed)
  refuted       the whole interval lies at or beyond no effect (or the opposite one), or above an
                upper bound the paper states
  inconclusive  the interval straddles an edge of the band, or too few values for the level (two
                repeats against two null values reach 2/3): never counted as confirmed

A measurement with no null (the deterministic instruments') is judged on the interval of its
median (stats.median_interval: min-max of three to five repeats).

Repeats added in stages (experiments/study/stages.py) judge the staged repeats alone, fresh
ones, at the level corrected for the most looks the study may take (Bonferroni: each look at
1 - (1 - LEVEL) / looks), so that repeating until the interval separates does not manufacture
verdicts.

Instruments that are deterministic (callgrind, cachegrind, the drag and fragmentation
simulators) give one exact value: their interval is that value, with no null.

API::

    Rule: Band(lo, hi, null=0.0) | AtMost(hi) | AtLeast(lo, null=0.0) | UpTo(hi) | around(value)
    judge(rule, values, null=None, exact=False, looks=1, margin=None) -> Judgement | None
    effect_over_null(values, null, level=LEVEL) -> stats.ShiftInterval | None   # as effects
    noise_floor(null_values, level=LEVEL) -> float | None
    level_for(looks) -> float              # the Bonferroni-corrected level of one of LOOKS looks
    spread_words(n, coverage, exact, k=1, m=0) -> str
    LEVEL, VERDICTS, DECISIVE
"""

from __future__ import annotations

import dataclasses
import math

from alloclab import stats

VERDICTS = ("confirmed", "weaker", "stronger", "refuted", "inconclusive", "unsettled")
DECISIVE = ("confirmed", "weaker", "stronger", "refuted")
LEVEL = 0.75  # what min-max of three repeats, the default study's, holds


# ---------------------------------------------------------------- rules

_SPREAD = "the interval (of the effect over its null when the claim is timed)"
_UNSETTLED = "unsettled if a timed claim's effect over its null holds no effect; "


@dataclasses.dataclass(frozen=True)
class Band:
    """The paper reports an effect between lo and hi (null: no effect)."""
    lo: float
    hi: float
    null: float = 0.0
    effect = True   # a claim of an effect: a spread within the noise floor is unsettled

    def text(self) -> str:
        return (_UNSETTLED + f"otherwise confirmed if {_SPREAD} lies wholly within [{self.lo:.3g}, "
                f"{self.hi:.3g}]; stronger if all of it is above; weaker if all of it is below the band and "
                f"above {self.null:.3g} (a spread that reaches {self.null:.3g} may be no effect at all); "
                f"refuted if all of it is at or below {self.null:.3g}; otherwise inconclusive")

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
    """The paper bounds the effect from above (no effect satisfies it: never unsettled)."""
    hi: float
    effect = False

    def text(self) -> str:
        return (f"confirmed if {_SPREAD} is wholly at most {self.hi:.3g}; refuted if all of it is above; "
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
    effect = True

    def text(self) -> str:
        bound = f"above {self.lo:.3g}" if self.strict else f"at least {self.lo:.3g}"
        below = f"at or below {self.lo:.3g}" if self.strict else "below it"
        return (_UNSETTLED + f"otherwise confirmed if {_SPREAD} is wholly {bound}; weaker if all of it is "
                f"{below} and above {self.null:.3g}; refuted if all of it is at or below {self.null:.3g}; "
                f"otherwise inconclusive")

    def judge(self, low: float, high: float) -> str:
        if high <= self.null:
            return "refuted"
        if low > self.lo or (low == self.lo and not self.strict):
            return "confirmed"
        if (high < self.lo or (high == self.lo and self.strict)) and low > self.null:
            return "weaker"  # below the bound, and an effect: the spread clears the null
        return "inconclusive"


@dataclasses.dataclass(frozen=True)
class UpTo:
    """The paper reports an effect of up to hi, its largest: an effect (above no effect) no larger
    than hi. Larger is stronger; none, or the opposite one, refutes it."""
    hi: float
    effect = True

    def text(self) -> str:
        return (_UNSETTLED + f"otherwise confirmed if {_SPREAD} lies wholly above 0 and at most {self.hi:.3g}; "
                f"stronger if all of it is above {self.hi:.3g}; refuted if all of it is at or below 0; "
                f"otherwise inconclusive")

    def judge(self, low: float, high: float) -> str:
        if high <= 0.0:
            return "refuted"
        if low > 0.0 and high <= self.hi:
            return "confirmed"
        if low > self.hi:
            return "stronger"
        return "inconclusive"


def around(value: float) -> Band:
    """A point value the paper reports: half to twice it counts as the same finding."""
    return Band(value / 2.0, value * 2.0)


# ---------------------------------------------------------------- judging

def level_for(looks: int) -> float:
    """The level of one look when a claim may be looked at LOOKS times (Bonferroni: the looks
    together miss the median with probability at most 1 - LEVEL)."""
    return 1.0 - (1.0 - LEVEL) / max(1, int(looks))


def _deviation(z: float) -> float:
    """How far the ratio 1 + z lies from 1, multiplicatively, as a fraction (0.25 for 0.8 and 1.25)."""
    r = 1.0 + z
    return max(r, 1.0 / r) - 1.0 if r > 0 else math.inf


def noise_floor(null_values, level: float = LEVEL) -> float | None:
    """The k-th largest multiplicative deviation of the null's values from no effect, k the depth
    at which stats.median_interval takes the interval at LEVEL for that many values (the largest
    of up to five); None without a null."""
    devs = sorted((_deviation(z) for z in (null_values or ()) if z is not None), reverse=True)
    if not devs:
        return None
    iv = stats.median_interval(devs, level)
    return devs[iv.k - 1]


@dataclasses.dataclass(frozen=True)
class Judgement:
    """A verdict and what it rests on."""
    verdict: str
    low: float               # the interval of the values' median
    high: float
    n: int
    coverage: float          # its probability of holding the median
    k: int                   # low, high: the k-th smallest and k-th largest value
    level: float             # the probability asked for (LEVEL, or corrected for several looks)
    judged_low: float | None = None    # the interval the rule saw
    judged_high: float | None = None
    floor: float | None = None         # the noise floor (None: no null)
    m: int = 0               # the null's values the interval was set against (0: none)
    estimate: float | None = None      # the effect over its null (None: no null; the median is the estimate)
    why: str = ""


def effect_over_null(values, null, level: float = LEVEL):
    """The interval of the effect over its null (stats.shift_interval on log(1 + value)), as
    effects: how far the repeats' ratios lie from the null's, multiplicatively. None when a
    value is no ratio (1 + value <= 0) or either side is empty."""
    if any(1.0 + v <= 0.0 for v in list(values) + list(null)):
        return None
    iv = stats.shift_interval([math.log1p(v) for v in values], [math.log1p(z) for z in null], level)
    if iv is None:
        return None
    return dataclasses.replace(iv, low=math.expm1(iv.low), high=math.expm1(iv.high),
                               estimate=math.expm1(iv.estimate))


def judge(rule, values, null=None, exact: bool = False, looks: int = 1, margin: float | None = None):
    """The verdict on per-repeat VALUES of one measurement (None when there are none). NULL: the
    null's per-repeat values (None: no null measured, as for deterministic instruments); LOOKS:
    how many looks the study may take at this claim (the level is corrected for them); MARGIN:
    for a claim that counts programs within a margin of each other (values that are no ratios,
    so nothing to compare with a shift), the run is unsettled when its noise floor reaches the margin."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if exact:
        low, high = min(vals), max(vals)
        return Judgement(rule.judge(low, high), low, high, len(vals), 1.0, 1, 1.0, low, high,
                         why="exact: a deterministic instrument")
    level = level_for(looks)
    iv = stats.median_interval(vals, level)
    nulls = [z for z in (null or ()) if z is not None]
    floor = noise_floor(nulls, level)
    base = dict(low=iv.low, high=iv.high, n=iv.n, coverage=iv.coverage, k=iv.k, level=level, floor=floor)
    if floor is None:
        if not iv.reached:
            return Judgement("inconclusive", **base, why=f"{iv.n} repeats cannot reach probability {level:.3g}")
        return Judgement(rule.judge(iv.low, iv.high), **base, judged_low=iv.low, judged_high=iv.high,
                         why="no null measured: the spread judged as it is")
    if margin is not None:
        if not iv.reached:
            return Judgement("inconclusive", **base, why=f"{iv.n} repeats cannot reach probability {level:.3g}")
        if floor >= margin:
            return Judgement("unsettled", **base, why=f"the noise floor ({floor:.1%}) reaches the claim's "
                                                      f"margin ({margin:.0%})")
        return Judgement(rule.judge(iv.low, iv.high), **base, judged_low=iv.low, judged_high=iv.high,
                         why=f"the noise floor ({floor:.1%}) is below the claim's margin ({margin:.0%})")
    sh = effect_over_null(vals, nulls, level)
    if sh is None:
        return Judgement("inconclusive", **base, why="a value is no ratio: nothing to set against the null")
    base.update(low=sh.low, high=sh.high, coverage=sh.coverage, k=sh.k, m=sh.m, estimate=sh.estimate,
                judged_low=sh.low, judged_high=sh.high)
    if not sh.reached:
        return Judgement("inconclusive", **base,
                         why=f"{sh.n} repeats against {sh.m} null values cannot reach probability {level:.3g}")
    if rule.effect and sh.low < 0.0 < sh.high:
        return Judgement("unsettled", **base, why="the effect over its null holds no effect: this run "
                                                  "could not tell the effect from its noise")
    return Judgement(rule.judge(sh.low, sh.high), **base, why="the effect over its null")


def spread_words(n: int, coverage: float, exact: bool, k: int = 1, m: int = 0) -> str:
    """How a verdict row's interval was taken (the k-th smallest to the k-th largest of n values,
    or of the n * m differences between n repeats and m null values), in the words the reports print."""
    if exact:
        return "exact (deterministic instrument)"
    if n == 0:
        return "nothing measured"
    ends = "min-max" if k == 1 else f"{_ordinal(k)} smallest to {_ordinal(k)} largest"
    if m:
        return (f"{ends} of the {n * m} ratios of {n} repeat{'s' if n != 1 else ''} to {m} null value"
                f"{'s' if m != 1 else ''}: holds the effect over the null with probability {coverage:.2f}")
    return f"{ends} of {n} repeat{'s' if n != 1 else ''}: holds the median with probability {coverage:.2f}"


def _ordinal(k: int) -> str:
    if k % 100 in (11, 12, 13):
        return f"{k}th"
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"
