"""The study's tables (experiments/study/analysis.py): the general-purpose allocators ranked by
their per-repeat geometric mean, on the programs every one of them ran."""

import pytest

from conftest import study_rows

from alloclab.experiments.study.analysis import _rq2, _rq3, general_summary
from alloclab.experiments.study.text import summary_lines
from alloclab.experiments.study.verdicts.data import StudyData


def test_the_general_summary_ranks_allocators_by_their_per_repeat_geometric_mean():
    # two programs, three repeats; vam is 0.8x then 0.9x glibc's time on every repeat but the
    # second, where one program's repeat runs 1.5x: the per-repeat means carry it, the median not
    spec = {}
    for w in ("a", "b"):
        spec[(w, "malloc", "glibc", 0)] = [1.0, 1.0, 1.0]
        spec[(w, "malloc", "mimalloc", 0)] = [0.9, 0.9, 0.9]
    spec[("a", "malloc", "vam", 0)] = [0.8, 1.5 * 0.8, 0.8]
    spec[("b", "malloc", "vam", 0)] = [0.9, 0.9, 0.9]
    rs = study_rows(spec)
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
    d = StudyData(study_rows(spec))
    names = [r["allocator"] for r in general_summary(d, [("a", "malloc"), ("b", "malloc")],
                                                           ["glibc", "tcmalloc", "vam"], [0])]
    assert names == ["glibc", "vam"]


def test_a_region_program_without_a_malloc_variant_is_compared_with_its_emulator_in_rq2_and_rq3():
    spec = {("svn", "custom", "glibc", 0): [1.0] * 3, ("svn", "emulator", "glibc", 0): [1.2] * 3,
            ("svn", "custom", "glibc", 3): [1.1] * 3, ("svn", "emulator", "glibc", 3): [1.5] * 3}
    rs = study_rows(spec)
    for r in rs:
        r.kind = "region"
    d = StudyData(rs)
    rq2 = _rq2(d, {"svn": ["emulator", "custom"]}, ["glibc"])
    assert [(x["variant"], x["naive"]) for x in rq2] == [("custom", "emulator")]
    assert rq2[0]["median"] == pytest.approx(1.0 / 1.2)
    rq3 = {x["variant"]: x["median"] for x in _rq3(d, ["glibc"], [0, 3])}
    assert rq3 == pytest.approx({"custom": 1.1, "emulator": 1.5 / 1.2})
