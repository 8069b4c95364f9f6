"""The lab's statistics (alloclab/stats.py): the paired comparison that decides whether two cells
of a comparison differ (Student's t computed here, no SciPy, checked against tabulated values),
and the median interval a verdict takes, checked for the coverage it claims."""

import math
import random

import pytest


from alloclab import stats


@pytest.mark.parametrize("t,df,p", [(12.706205, 1, 0.05), (2.776445, 4, 0.05), (2.262157, 9, 0.05),
                                    (3.249836, 9, 0.01), (1.0, 1, 0.5), (0.0, 5, 1.0), (1.959964, 10 ** 6, 0.05)])
def test_t_two_sided_p_matches_the_tables(t, df, p):
    assert stats.t_two_sided_p(t, df) == pytest.approx(p, rel=1e-5, abs=1e-9)
    if p < 1:
        assert stats.t_critical(df, 1 - p) == pytest.approx(t, rel=1e-5)


def test_paired_ratio_is_a_t_interval_of_the_log_ratios():
    pr = stats.paired_ratio([0.5, 2.0])              # logs ±log 2: mean 0, sd log2 * sqrt 2
    assert pr.geomean == pytest.approx(1.0) and pr.n == 2 and (pr.below, pr.above) == (1, 1)
    half = 12.706205 * math.log(2)                   # t(0.975, 1) * sd / sqrt 2
    assert (pr.low, pr.high) == (pytest.approx(math.exp(-half), rel=1e-5), pytest.approx(math.exp(half), rel=1e-5))
    assert pr.p == pytest.approx(1.0)
    steady = stats.paired_ratio([0.90, 0.92, 0.88, 0.91, 0.90])
    assert steady.high < 1 and steady.p < 0.001 and steady.below == 5 and steady.clear
    assert not pr.clear and stats.paired_ratio([1.2, 1.25, 1.22]).clear        # clear either way
    # one disturbed round (3x) widens the interval: the test errs towards "not clear"
    assert stats.paired_ratio([0.95] * 8 + [3.0]).p > 0.05
    same = stats.paired_ratio([0.9] * 3)
    assert (same.low, same.high, same.p) == (pytest.approx(0.9), pytest.approx(0.9), 0.0)
    one = stats.paired_ratio([0.8])
    assert one.p == 1.0 and one.high == math.inf
    assert stats.paired_ratio([]) is None and stats.paired_ratio([float("nan"), 0.0]) is None


def test_a_paired_ratios_standing_is_where_its_interval_lies_against_one():
    assert stats.paired_ratio([0.90, 0.92, 0.88]).standing == "first"
    assert stats.paired_ratio([1.10, 1.12, 1.08]).standing == "behind"
    assert stats.paired_ratio([0.9, 1.1, 1.0]).standing == "tied"
    assert stats.paired_ratio([0.5]).standing == "tied"  # one round: (0, inf) holds 1


def test_the_median_interval_holds_the_median_as_often_as_it_says():
    """Coverage by simulation: skewed draws, the true median known."""
    import random
    rng = random.Random(7)
    for n in (3, 5, 7, 9, 12):
        hits = 0
        trials = 4000
        for _ in range(trials):
            xs = [rng.expovariate(1.0) for _ in range(n)]        # median ln 2
            iv = stats.median_interval(xs, 0.75)
            hits += iv.low <= 0.6931471805599453 <= iv.high
        expect = stats.median_interval(range(n), 0.75).coverage
        assert expect >= 0.75 and abs(hits / trials - expect) < 0.03, (n, hits / trials, expect)


def test_the_median_interval_rejects_a_level_outside_zero_to_one():
    with pytest.raises(ValueError):
        stats.median_interval([1, 2, 3], 1.0)
    assert stats.median_interval([], 0.75) is None


def test_the_shift_interval_holds_the_shift_with_its_stated_probability():
    # the Mann-Whitney counts of three against three: 20 orderings, U from 0 to 9
    assert stats._rank_sum_counts(3, 3) == [1, 1, 2, 3, 3, 3, 3, 2, 1, 1]
    assert sum(stats._rank_sum_counts(4, 5)) == 126
    iv = stats.shift_interval([10, 11, 12], [0, 1, 2])
    assert (iv.k, iv.low, iv.high, iv.estimate) == (2, 9, 11, 10) and iv.coverage == pytest.approx(0.8)
    assert iv.reached and (iv.n, iv.m) == (3, 3)
    assert not stats.shift_interval([1, 2], [0, 1]).reached          # 2 against 2: 2/3 at best
    assert stats.shift_interval([], [1]) is None
    with pytest.raises(ValueError):
        stats.shift_interval([1], [1], level=1.0)
    # simulated: two samples of one distribution moved apart by 0.3; the interval misses the
    # shift no more often than its coverage allows
    rng = random.Random(7)
    for n, m in ((3, 3), (4, 6), (8, 8)):
        misses, trials = 0, 2000
        for _ in range(trials):
            xs = [rng.lognormvariate(0, 0.5) + 0.3 for _ in range(n)]
            ys = [rng.lognormvariate(0, 0.5) for _ in range(m)]
            iv = stats.shift_interval(xs, ys)
            misses += not iv.low <= 0.3 <= iv.high
        assert misses / trials <= 1 - iv.coverage + 0.03, (n, m, misses / trials, iv.coverage)
