"""The rules that turn a spread into a verdict (experiments/study/verdicts/rules.py), at their edges."""

import math
import random

import pytest

from alloclab.experiments.study import stages
from alloclab.experiments.study.verdicts import rules


def test_rules_at_their_edges():
    assert rules.AtMost(0.15).judge(0.10, 0.15) == "confirmed"
    assert rules.AtMost(0.15).judge(0.10, 0.16) == "inconclusive"
    assert rules.AtMost(0.15).judge(0.16, 0.20) == "refuted"
    assert rules.AtLeast(1.0).judge(1.0, 1.5) == "confirmed"
    assert rules.AtLeast(1.0).judge(0.2, 0.8) == "weaker"
    assert rules.AtLeast(1.0).judge(-0.3, -0.01) == "refuted"
    assert rules.AtLeast(1.0).judge(0.5, 1.5) == "inconclusive"
    # "most" is more than half: exactly half is not most, and a spread up to half never confirms it
    assert rules.AtLeast(0.5, strict=True).judge(0.5, 0.5) == "weaker"
    assert rules.AtLeast(0.5, strict=True).judge(0.25, 0.5) == "weaker"
    assert rules.AtLeast(0.5, strict=True).judge(0.5, 0.75) == "inconclusive"
    assert rules.AtLeast(0.5, strict=True).judge(0.75, 1.0) == "confirmed"
    assert rules.AtLeast(0.5).judge(0.5, 0.5) == "confirmed"
    # short of the band but reaching the null: may be no effect at all, so not "weaker"
    assert rules.Band(0.18, 0.27).judge(-0.1, 0.1) == "inconclusive"
    assert rules.Band(0.18, 0.27).judge(-0.118, 0.113) == "inconclusive"   # rq3-parser-mimalloc, a quiet run
    assert rules.Band(0.18, 0.27).judge(0.0, 0.1) == "inconclusive"        # touching the null is reaching it
    assert rules.Band(0.18, 0.27).judge(0.01, 0.1) == "weaker"
    assert rules.AtLeast(1.0).judge(-0.2, 0.8) == "inconclusive"
    assert rules.AtLeast(1.0).judge(0.0, 0.8) == "inconclusive"
    assert rules.AtLeast(0.5, strict=True).judge(0.0, 0.5) == "inconclusive"
    # "up to 44%": an effect, no larger than the paper's largest
    assert rules.UpTo(0.44).judge(0.01, 0.44) == "confirmed"
    assert rules.UpTo(0.44).judge(0.0, 0.30) == "inconclusive"     # reaching no effect: may be none
    assert rules.UpTo(0.44).judge(-0.2, -0.01) == "refuted"        # regions losing
    assert rules.UpTo(0.44).judge(-0.2, 0.0) == "refuted"
    assert rules.UpTo(0.44).judge(0.30, 0.50) == "inconclusive"
    assert rules.UpTo(0.44).judge(0.45, 0.60) == "stronger"


# ---------------------------------------------------------------- judged against the null

BAND = rules.Band(0.18, 0.27)
NULL = [0.05, -0.04, 0.03]          # noise floor 5%: the largest deviation (-4% is 1/0.96 - 1 = 4.2%)


def verdict(values, null=NULL, rule=BAND, **kw):
    return rules.judge(rule, values, null=null, **kw).verdict


def test_the_noise_floor_is_the_nulls_largest_multiplicative_deviation_at_the_intervals_depth():
    assert rules.noise_floor(NULL) == pytest.approx(0.05)
    assert rules.noise_floor([-0.2]) == pytest.approx(0.25)         # a ratio of 0.8 is 1.25 the other way
    # six values: the interval drops one from each end, and the floor drops the largest deviation
    assert rules.noise_floor([0.01, 0.02, -0.03, 0.04, 0.30, 0.05]) == pytest.approx(0.05)
    assert rules.noise_floor([]) is None and rules.noise_floor(None) is None


def test_the_effect_over_the_null_is_the_two_sample_interval_of_the_ratios():
    # three repeats against three null values: the 2nd smallest to the 2nd largest of the nine
    # ratios (1 + value) / (1 + null), which holds the effect over the null with probability 0.8
    j = rules.judge(BAND, [0.22, 0.22, 0.22], null=NULL)
    assert (j.n, j.m, j.k) == (3, 3, 2) and j.coverage == pytest.approx(0.8)
    assert (j.low, j.high) == pytest.approx((1.22 / 1.05 - 1, 1.22 / 0.96 - 1))
    assert (j.judged_low, j.judged_high) == (j.low, j.high)
    assert j.estimate == pytest.approx(1.22 / 1.03 - 1)       # the median of the nine ratios
    assert j.floor == pytest.approx(0.05)                      # still reported: the null's furthest value
    assert j.verdict == "inconclusive"                         # 16.2% .. 27.1%: below 18% at its low end
    assert verdict([0.22, 0.22, 0.22], null=[0.01, 0.0, -0.01]) == "confirmed"


def test_an_effect_whose_interval_over_the_null_holds_no_effect_is_unsettled_not_inconclusive():
    assert verdict([0.01, 0.02, 0.04]) == "unsettled"
    assert verdict([-0.2, 0.0, 0.2]) == "unsettled"
    assert verdict([0.06, 0.08, 0.10], null=[0.07, 0.07, 0.0]) == "unsettled"   # -0.9% .. +10%
    assert verdict([0.07, 0.08, 0.10]) == "weaker"        # 1.07 / 1.05 .. 1.10 / 0.96: clears 0, short of 18%


def test_a_spread_below_the_band_that_reaches_no_effect_is_not_weaker():
    assert verdict([0.06, 0.08, 0.10], null=[0.0, 0.0, 0.0]) == "weaker"
    assert verdict([0.06, 0.08, 0.10], null=[0.07, 0.0, 0.0]) == "weaker"        # one null value trimmed
    assert verdict([0.06, 0.08, 0.10], null=[0.07, 0.07, 0.0]) != "weaker"       # two: it reaches 0


def test_noise_that_could_move_an_effect_across_an_edge_moves_its_interval_across_that_edge():
    assert verdict([0.40, 0.41, 0.42]) == "stronger"                  # low 1.41 / 1.05: 34.3%
    assert verdict([0.30, 0.31, 0.32]) == "inconclusive"              # 24.8% .. 36.5%
    assert verdict([0.30, 0.31, 0.32], null=[0.0, 0.0, 0.0]) == "stronger"
    assert verdict([-0.20, -0.15, -0.10]) == "refuted"                # high 0.85 / 0.96: -11.5%
    assert verdict([-0.20, -0.15, 0.03], null=[0.05, -0.04, -0.04]) == "unsettled"


def test_claims_of_at_most_are_never_unsettled_but_judged_over_the_null():
    assert verdict([0.0, 0.01, 0.02], rule=rules.AtMost(0.15)) == "confirmed"      # -3.8% .. +5.2%
    assert verdict([0.10, 0.11, 0.12], rule=rules.AtMost(0.15)) == "inconclusive"  # high 1.11 / 0.96: 15.6%
    assert verdict([0.25, 0.30, 0.35], rule=rules.AtMost(0.15)) == "refuted"       # low 1.25 / 1.03: 21.4%
    assert verdict([0.01, 0.02, 0.03], rule=rules.AtLeast(0.0)) == "unsettled"
    assert verdict([0.06, 0.07, 0.08], rule=rules.AtLeast(0.0)) == "confirmed"


def test_an_up_to_claim_is_an_effect_claim_unsettled_within_the_noise():
    up = rules.UpTo(0.44)
    assert verdict([0.01, 0.02, 0.04], rule=up) == "unsettled"
    assert verdict([0.20, 0.25, 0.30], rule=up) == "confirmed"
    assert verdict([-0.30, -0.25, -0.20], rule=up) == "refuted"
    assert verdict([0.40, 0.41, 0.42], rule=up) == "inconclusive"               # high 1.41 / 0.96: 46.9%
    text = up.text()
    assert "unsettled" in text and "above 0 and at most 0.44" in text and "stronger" in text


def test_a_margin_claim_is_unsettled_when_the_noise_reaches_its_margin():
    share = rules.AtLeast(0.5, strict=True)
    assert rules.judge(share, [0.75, 0.75, 1.0], null=[0.01, 0.02, 0.0], margin=0.05).verdict == "confirmed"
    assert rules.judge(share, [0.75, 0.75, 1.0], null=[0.06, 0.02, 0.0], margin=0.05).verdict == "unsettled"


def test_too_few_values_are_inconclusive_and_no_null_judges_the_spread_as_it_is():
    j = rules.judge(BAND, [0.20, 0.21], null=[0.0, 0.01])      # 2 against 2: probability 2/3
    assert j.verdict == "inconclusive" and j.coverage == pytest.approx(2 / 3) and not j.verdict == "unsettled"
    j = rules.judge(BAND, [0.20, 0.21, 0.22], null=[0.0])      # 3 against 1: 1/2
    assert j.verdict == "inconclusive" and j.coverage == pytest.approx(0.5)
    j = rules.judge(BAND, [0.20, 0.21, 0.22])
    assert j.verdict == "confirmed" and j.floor is None and (j.judged_low, j.judged_high) == (0.20, 0.22)
    assert rules.judge(BAND, [0.20, 0.21, 0.22], null=[0.0, -1.5, 0.0]).verdict == "inconclusive"  # no ratio


def test_each_look_of_several_is_judged_at_the_corrected_level():
    assert rules.level_for(1) == rules.LEVEL
    assert rules.level_for(2) == pytest.approx(0.875)
    j = rules.judge(BAND, [0.20, 0.21, 0.22], null=[0.0] * 3, looks=2)    # min-max of nine: 0.9
    assert j.verdict == "confirmed" and j.k == 1 and j.coverage == pytest.approx(0.9)
    assert rules.judge(BAND, [0.20, 0.21, 0.22], null=[0.0] * 3, looks=5).verdict == "inconclusive"  # 0.9 < 0.95
    j = rules.judge(BAND, [0.20, 0.21, 0.22, 0.22], null=[0.0] * 4, looks=5)
    assert j.verdict == "confirmed" and j.level == pytest.approx(0.95) and j.coverage >= 0.95
    assert stages.stage_runs(2) == 3 and stages.stage_runs(5) == 4


# ---------------------------------------------------------------- staged repeats do not manufacture verdicts

def _times(rng, n, sigma):
    """N ratios of two runs that differ by nothing but noise (log-normal), as effects."""
    return [math.exp(rng.gauss(0, sigma) - rng.gauss(0, sigma)) - 1.0 for _ in range(n)]


def _staged(rng, rule, looks, sigma=0.05):
    """A claim with no effect in it, judged as the study judges it: the first rounds (three
    repeats), then while unsettled up to LOOKS stages of fresh repeats, cumulative."""
    v = rules.judge(rule, _times(rng, 3, sigma), null=_times(rng, 3, sigma)).verdict
    vals, null = [], []
    for _ in range(looks):
        if v != "unsettled":
            break
        vals += _times(rng, stages.stage_runs(looks), sigma)
        null += _times(rng, stages.stage_runs(looks), sigma)
        v = rules.judge(rule, vals, null=null, looks=looks).verdict
    return v


def _naive(rng, rule, looks, sigma=0.05):
    """Optional stopping without a null or a correction: three more repeats while inconclusive."""
    vals = []
    for _ in range(looks):
        vals += _times(rng, 3, sigma)
        v = rules.judge(rule, vals).verdict
        if v in rules.DECISIVE:
            return v
    return v


def test_a_null_effect_judged_with_many_stages_is_not_decided_more_often_than_the_level_allows():
    """No effect at all: a decisive verdict (any of them: their intervals would all miss the
    median, 0) may come at most as often as 1 - LEVEL. Repeating until the interval separates,
    without the null and the correction, exceeds it (so the simulation can tell)."""
    rng = random.Random(20261128)
    rule = rules.around(0.10)
    trials = 2000
    for looks in (2, 5):
        ours = [_staged(rng, rule, looks) for _ in range(trials)]
        decided = sum(v in rules.DECISIVE for v in ours) / trials
        assert decided <= 1 - rules.LEVEL, (looks, decided)
        assert "unsettled" in ours
    naive = sum(_naive(rng, rule, 10) in rules.DECISIVE for _ in range(trials)) / trials
    assert naive > 1 - rules.LEVEL, naive
