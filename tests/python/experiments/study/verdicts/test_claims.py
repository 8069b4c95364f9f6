"""The papers' claims on synthetic result sets (experiments/study/verdicts/claims.py): a claim comes
out confirmed, refuted, weaker, stronger or inconclusive from the numbers alone, and a spread that
straddles a threshold is never confirmed."""

import pytest

from conftest import study_rows

from alloclab.experiments.study.verdicts import claims, rules
from alloclab.experiments.study.verdicts.data import StudyData


def boxed(custom, naive):
    d = StudyData(study_rows({("boxed_sim", "custom", "mimalloc", 0): custom,
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


def test_one_timed_run_gives_no_verdict():
    r = boxed([1.0], [1.023])
    assert r.verdict == "inconclusive" and r.n == 1 and "no spread" in r.note


def test_missing_data_is_inconclusive_with_a_reason():
    r = next(x for x in claims.evaluate(StudyData([])) if x.id == "rq2-gap")
    assert r.verdict == "inconclusive" and r.n == 0 and r.note


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
    rs = study_rows(spec)
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
    rs = study_rows(spec)
    for r in rs:
        r.kind = "region"
    d = StudyData(rs, memops={"interp": {"within_band": False}})
    r = next(x for x in claims.evaluate(d) if x.id == "rq2-mudlle")
    assert "interp" in (r.weight_note or "")
