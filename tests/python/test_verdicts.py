"""The verdict rules on synthetic result sets: a claim comes out confirmed,
refuted, weaker, stronger or inconclusive from the numbers alone, and a
spread that straddles a threshold is never confirmed."""

import pytest

from conftest import make_row

from alloclab import stats
from alloclab.core.results.runs import StudyRow
from alloclab.experiments.study.analysis import general_summary
from alloclab.experiments.study.text import summary_lines
from alloclab.experiments.study.verdicts import claims, rules
from alloclab.experiments.study.verdicts.data import StudyData


def rows(spec):
    """spec: {(workload, variant, allocator, adv): [time per repeat]} -> result rows (StudyRow)."""
    out = []
    for (w, v, a, adv), times in spec.items():
        for rep, t in enumerate(times, 1):
            out.append(make_row(StudyRow, workload=w, variant=v, allocator=a, adv=adv, repeat=rep, kind="per-class",
                                program_inproc_s=t, program_s=t, wall_s=t))
    return out


def boxed(custom, naive):
    d = StudyData(rows({("boxed_sim", "custom", "mimalloc", 0): custom,
                          ("boxed_sim", "malloc", "mimalloc", 0): naive}))
    return next(r for r in claims.evaluate(d) if r.id == "rq1-boxed-sim")


def test_a_gain_near_the_papers_is_confirmed():
    r = boxed([1.00, 1.00, 1.00], [1.020, 1.025, 1.030])     # 2.0-3.0%, paper 2.3%
    assert r.verdict == "confirmed"
    assert r.n == 3 and r.low == pytest.approx(0.02) and r.high == pytest.approx(0.03)


def test_a_custom_allocator_that_loses_refutes_the_gain():
    assert boxed([1.00, 1.00, 1.00], [0.95, 0.96, 0.97]).verdict == "refuted"


def test_a_spread_straddling_the_band_is_inconclusive_never_confirmed():
    r = boxed([1.00, 1.00, 1.00], [1.02, 1.03, 1.08])        # 2%..8%: straddles 4.6%
    assert r.verdict == "inconclusive"


def test_much_larger_and_much_smaller_gains_are_stronger_and_weaker():
    assert boxed([1.0] * 3, [1.30, 1.40, 1.35]).verdict == "stronger"
    assert boxed([1.0] * 3, [1.002, 1.005, 1.004]).verdict == "weaker"


def test_two_runs_are_too_few_for_a_verdict():
    """min-max of two values holds their median only half the time."""
    r = boxed([1.0, 1.0], [1.30, 1.40])
    assert r.verdict == "inconclusive" and r.n == 2 and r.coverage == pytest.approx(0.5)
    assert "0.50" in r.note and "3 runs" in r.note


def test_more_repeats_narrow_the_interval_instead_of_widening_it():
    """Seven repeats with one disturbed run: min-max would straddle the band, the interval at
    the same probability (the 2nd smallest to the 2nd largest) lies inside it."""
    naive = [1.021, 1.022, 1.023, 1.024, 1.025, 1.026, 1.09]      # one run 9% off
    r = boxed([1.0] * 7, naive)
    assert r.verdict == "confirmed"
    assert r.low == pytest.approx(0.022) and r.high == pytest.approx(0.026)
    assert r.coverage >= rules.LEVEL and r.spread.startswith("2nd smallest to 2nd largest of 7")
    three = boxed([1.0] * 3, [1.022, 1.024, 1.09])
    assert three.verdict == "inconclusive" and three.spread.startswith("min-max of 3")


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


def test_one_timed_run_gives_no_verdict():
    r = boxed([1.0], [1.023])
    assert r.verdict == "inconclusive" and r.n == 1 and "no spread" in r.note


def test_missing_data_is_inconclusive_with_a_reason():
    r = next(x for x in claims.evaluate(StudyData([])) if x.id == "rq2-gap")
    assert r.verdict == "inconclusive" and r.n == 0 and r.note


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
    assert rules.Band(0.18, 0.27).judge(-0.1, 0.1) == "weaker"        # short of the band, may be no effect at all
    assert rules.Band(0.18, 0.27).judge(0.01, 0.1) == "weaker"


def test_a_deterministic_instrument_judges_one_exact_value():
    d = StudyData([], frag=[{"program": "gp_mix/malloc", "allocator": "vam", "adv": "Adv_0",
                               "fragmentation": 1.05}])
    r = next(x for x in claims.evaluate(d) if x.id == "vam-frag")
    assert r.verdict == "confirmed" and r.n == 1 and r.spread.startswith("exact")
    d.frag[0]["fragmentation"] = 1.3
    assert next(x for x in claims.evaluate(d) if x.id == "vam-frag").verdict == "refuted"


def test_region_resilience_takes_region_and_hybrid_workloads_and_is_refuted_by_a_slow_hybrid():
    spec = {}
    for w, kind in (("interp", "region"), ("mempool_iter", "hybrid")):
        for a in ("glibc", "mimalloc"):
            spec[(w, "custom", a, 0)] = [1.0, 1.0, 1.0]
            spec[(w, "custom", a, 3)] = [1.01, 1.02, 1.01] if w == "interp" else [1.3, 1.35, 1.4]
    rs = rows(spec)
    for r in rs:
        r.kind = "region" if r.workload == "interp" else "hybrid"
    res = next(x for x in claims.evaluate(StudyData(rs)) if x.id == "rq3-resilient")
    assert "mempool_iter" in res.what
    assert res.verdict == "refuted"
    # without the hybrid, the regions alone are resilient
    only = [r for r in rs if r.workload == "interp"]
    assert next(x for x in claims.evaluate(StudyData(only)) if x.id == "rq3-resilient").verdict == "confirmed"


def test_a_workload_outside_its_weight_band_is_named_in_the_verdict():
    spec = {("interp", "custom", "mimalloc", 0): [1.0, 1.0], ("interp", "malloc", "mimalloc", 0): [1.15, 1.16],
            ("interp", "malloc", "glibc", 0): [1.3, 1.3]}
    rs = rows(spec)
    for r in rs:
        r.kind = "region"
    d = StudyData(rs, memops={"interp": {"within_band": False}})
    r = next(x for x in claims.evaluate(d) if x.id == "rq2-mudlle")
    assert "interp" in (r.weight_note or "")


def test_the_general_summary_ranks_allocators_by_their_per_repeat_geometric_mean():
    # two programs, three repeats; vam is 0.8x then 0.9x glibc's time on every repeat but the
    # second, where one program's repeat runs 1.5x: the per-repeat means carry it, the median not
    spec = {}
    for w in ("a", "b"):
        spec[(w, "malloc", "glibc", 0)] = [1.0, 1.0, 1.0]
        spec[(w, "malloc", "mimalloc", 0)] = [0.9, 0.9, 0.9]
    spec[("a", "malloc", "vam", 0)] = [0.8, 1.5 * 0.8, 0.8]
    spec[("b", "malloc", "vam", 0)] = [0.9, 0.9, 0.9]
    rs = rows(spec)
    for r in rs:
        r.max_rss_kb = {"glibc": 1000, "mimalloc": 1200, "vam": 900}[r.allocator]
    d = StudyData(rs)
    out = {r["allocator"]: r for r in general_summary(d, [("a", "malloc"), ("b", "malloc")],
                                                              ["glibc", "mimalloc", "vam"], [0])}
    g = (0.8 * 0.9) ** 0.5
    assert out["vam"]["time"] == pytest.approx(g) and out["vam"]["low"] == pytest.approx(g)
    assert out["vam"]["high"] == pytest.approx((1.2 * 0.9) ** 0.5) and out["vam"]["repeats"] == 3
    assert out["mimalloc"]["time"] == pytest.approx(0.9) and out["glibc"]["time"] == pytest.approx(1.0)
    assert out["vam"]["over_best"] == pytest.approx(1.0)
    assert out["mimalloc"]["over_best"] == pytest.approx(0.9 / g)
    assert out["vam"]["rss"] == pytest.approx(0.9) and out["mimalloc"]["rss"] == pytest.approx(1.2)
    lines = summary_lines(list(out.values()))
    assert [ln.split()[0] for ln in lines[1:]] == ["vam", "mimalloc", "glibc"]


def test_an_allocator_missing_a_program_is_not_ranked_on_fewer():
    spec = {(w, "malloc", a, 0): [1.0] for w in ("a", "b") for a in ("glibc", "vam")}
    spec[("a", "malloc", "tcmalloc", 0)] = [0.5]
    d = StudyData(rows(spec))
    names = [r["allocator"] for r in general_summary(d, [("a", "malloc"), ("b", "malloc")],
                                                           ["glibc", "tcmalloc", "vam"], [0])]
    assert names == ["glibc", "vam"]
