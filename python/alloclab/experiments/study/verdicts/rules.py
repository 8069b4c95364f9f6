"""The rules that turn a claim's measurement into a verdict, judged against the run's own noise.

A measurement is a list of values, one per repeat of the study (the repeats litter with
different seeds, so they sample heap layouts too); its interval is the pair of order
statistics that holds their median with probability at least LEVEL (0.75), whatever their
distribution (stats.median_interval): min-max for three to five repeats, the second from each
end for six to eight, narrower still with more. A fixed probability keeps a verdict's meaning
when repeats are added.

A timed measurement also has its *null*: the same ratio taken between two runs that differ by
nothing (one cell measured twice in every round under two labels, an A/A pair), one value per
repeat. Its *noise floor* is the k-th largest multiplicative deviation of the null from no
effect, max(1 + z, 1 / (1 + z)) - 1, with k the depth at which the level takes the interval
(the largest of three to five, the second largest of six to eight): what this run's noise did
to a ratio with no effect in it. The verdicts:

  unsettled     the interval lies within the noise floor (1 / (1 + floor) - 1 .. floor): this
                run could not tell the effect from no effect. Only for claims of an effect
                (Band, AtLeast); a claim of at most so much is judged on the widened interval
  confirmed     the whole widened interval lies inside the paper's band
  stronger      the whole widened interval lies beyond the band, in the claimed direction
  weaker        the whole widened interval lies short of the band and clears no effect (an
                interval that reaches it may be no effect at all: inconclusive)
  refuted       the whole widened interval lies at or beyond no effect (or the opposite one),
                or above an upper bound the paper states
  inconclusive  the widened interval straddles an edge, or too few repeats of a timed
                measure for the level (one or two): never counted as confirmed

The widened interval is the interval stretched by the noise floor on both sides,
multiplicatively: (1 + low) / (1 + floor) - 1 .. (1 + high) * (1 + floor) - 1. A run whose noise
moves an effect across an edge also widens its interval across that edge, so a busy run turns a
decisive verdict into inconclusive or unsettled instead of into another decisive one.

Repeats added in stages (experiments/study/stages.py) judge the staged repeats alone, fresh
ones, at the level corrected for the most looks the study may take (Bonferroni: each look at
1 - (1 - LEVEL) / looks), so that repeating until the interval separates does not manufacture
verdicts.

Instruments that are deterministic (callgrind, cachegrind, the drag and fragmentation
simulators) give one exact value: their interval is that value, with no null.

API::

    Rule: Band(lo, hi, null=0.0) | AtMost(hi) | AtLeast(lo, null=0.0) | UpTo(hi) | around(value)
    judge(rule, values, null=None, exact=False, looks=1, margin=None) -> Judgement | None
    noise_floor(null_values, level=LEVEL) -> float | None
    widen(low, high, floor) -> (low, high)
    level_for(looks) -> float              # the Bonferroni-corrected level of one of LOOKS looks
    spread_words(n, coverage, exact, k=1) -> str
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

_SPREAD = "the spread (widened by the noise floor when the claim is timed)"
_UNSETTLED = "unsettled if a timed claim's spread lies within its noise floor; "


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


def widen(low: float, high: float, floor: float) -> tuple[float, float]:
    """The interval low..high (effects) stretched by the noise floor on both sides, multiplicatively."""
    return (1.0 + low) / (1.0 + floor) - 1.0, (1.0 + high) * (1.0 + floor) - 1.0


def within_noise(low: float, high: float, floor: float) -> bool:
    """The interval lies within the noise floor: no further from no effect than the null went."""
    return 1.0 / (1.0 + floor) - 1.0 <= low and high <= floor


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
    judged_low: float | None = None    # the interval the rule saw: widened by the noise floor
    judged_high: float | None = None
    floor: float | None = None         # the noise floor (None: no null)
    why: str = ""


def judge(rule, values, null=None, exact: bool = False, looks: int = 1, margin: float | None = None):
    """The verdict on per-repeat VALUES of one measurement (None when there are none). NULL: the
    null's per-repeat values (None: no null measured, as for deterministic instruments); LOOKS:
    how many looks the study may take at this claim (the level is corrected for them); MARGIN:
    for a claim that counts programs within a margin of each other (values that are no ratios,
    so nothing to widen), the run is unsettled when its noise floor reaches the margin."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    if exact:
        low, high = min(vals), max(vals)
        return Judgement(rule.judge(low, high), low, high, len(vals), 1.0, 1, 1.0, low, high,
                         why="exact: a deterministic instrument")
    level = level_for(looks)
    iv = stats.median_interval(vals, level)
    floor = noise_floor(null, level)
    base = dict(low=iv.low, high=iv.high, n=iv.n, coverage=iv.coverage, k=iv.k, level=level, floor=floor)
    if not iv.reached:
        return Judgement("inconclusive", **base, why=f"{iv.n} repeats cannot reach probability {level:.3g}")
    if floor is None:
        return Judgement(rule.judge(iv.low, iv.high), **base, judged_low=iv.low, judged_high=iv.high,
                         why="no null measured: the spread judged as it is")
    if margin is not None:
        if floor >= margin:
            return Judgement("unsettled", **base, why=f"the noise floor ({floor:.1%}) reaches the claim's "
                                                      f"margin ({margin:.0%})")
        return Judgement(rule.judge(iv.low, iv.high), **base, judged_low=iv.low, judged_high=iv.high,
                         why=f"the noise floor ({floor:.1%}) is below the claim's margin ({margin:.0%})")
    if rule.effect and within_noise(iv.low, iv.high, floor):
        return Judgement("unsettled", **base, why=f"the spread lies within the noise floor (±{floor:.1%})")
    wl, wh = widen(iv.low, iv.high, floor)
    return Judgement(rule.judge(wl, wh), **base, judged_low=wl, judged_high=wh,
                     why=f"the spread widened by the noise floor (±{floor:.1%})")


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
