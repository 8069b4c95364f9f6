"""The claims on the programs where the 2026 paper found no effect, or a small one (175.vpr and
geometry_nodes, claims.py's last rows), judged at their edges on synthetic result sets; and the
rule that a program feeds only the rules of papers it has a counterpart in (claims.for_paper)."""

import pytest

from conftest import study_rows

from alloclab.experiments.study.verdicts import claims
from alloclab.experiments.study.verdicts.data import StudyData


def _data(spec, twins=None):
    """Rows of SPEC, every workload a region one; TWINS: {workload: times} of the null's twin
    (the naive variant on glibc, clean, measured again), whose own cell is 2.0 per repeat (slower than
    on mimalloc, so mimalloc is the best allocator)."""
    spec = dict(spec)
    for w, twin in (twins or {}).items():
        spec.setdefault((w, "malloc", "glibc", 0), [2.0] * len(twin))
        spec[(w, "malloc", "glibc~again", 0)] = twin
    rs = study_rows(spec)
    for r in rs:
        r.kind = "region"
    return StudyData(rs)


def _verdict(d, cid):
    return next(r for r in claims.evaluate(d) if r.id == cid)


@pytest.mark.parametrize("naive, verdict", [
    ([1.00, 1.01, 1.02], "confirmed"),      # 0..2%: equal or nearly equal
    ([0.98, 1.00, 1.049], "confirmed"),     # up to 4.9%, under the 5% taken as nearly equal
    ([1.03, 1.04, 1.051], "inconclusive"),  # straddles 5%
    ([1.06, 1.08, 1.10], "refuted"),        # naive clearly slower than nearly equal
])
def test_vpr_naive_is_nearly_equal_to_its_regions_at_the_edges(naive, verdict):
    spec = {("vpr", "custom", "mimalloc", 0): [1.0] * 3, ("vpr", "malloc", "mimalloc", 0): naive,
            ("vpr", "custom", "glibc", 0): [1.0] * 3}
    r = _verdict(_data(spec, {"vpr": [2.0] * 3}), "rq2-vpr")
    assert r.verdict == verdict, (naive, r.judged_low, r.judged_high)
    assert "vpr (175.vpr)" in r.what and "mimalloc" in r.what


def test_vpr_nearly_equal_widened_by_its_noise_floor_is_no_longer_confirmed():
    spec = {("vpr", "custom", "mimalloc", 0): [1.0] * 3, ("vpr", "malloc", "mimalloc", 0): [1.02, 1.03, 1.04],
            ("vpr", "custom", "glibc", 0): [1.0] * 3}
    quiet = _verdict(_data(spec, {"vpr": [2.0, 2.0, 2.0]}), "rq2-vpr")
    noisy = _verdict(_data(spec, {"vpr": [2.0 * 1.02, 2.0, 2.0 * 0.99]}), "rq2-vpr")
    assert quiet.verdict == "confirmed" and quiet.noise_floor == pytest.approx(0.0)
    assert noisy.noise_floor == pytest.approx(0.02)
    assert noisy.judged_high == pytest.approx(1.04 * 1.02 - 1) and noisy.verdict == "inconclusive"


@pytest.mark.parametrize("naive, verdict", [
    ([1.13, 1.14, 1.15], "confirmed"),      # the paper's 14%
    ([1.08, 1.10, 1.27], "confirmed"),      # within half to twice 14%: 7% .. 28%
    ([1.30, 1.35, 1.40], "stronger"),
    ([1.03, 1.04, 1.05], "weaker"),         # a gain, but under 7%
    ([1.00, 1.03, 1.09], "inconclusive"),   # reaches no effect and the band
    ([0.95, 0.96, 0.97], "refuted"),        # naive faster than the LinearAllocator
])
def test_geometry_nodes_regions_gain_at_the_edges(naive, verdict):
    spec = {("geometry_nodes", "custom", "mimalloc", 0): [1.0] * 3,
            ("geometry_nodes", "malloc", "mimalloc", 0): naive, ("geometry_nodes", "custom", "glibc", 0): [1.0] * 3}
    r = _verdict(_data(spec, {"geometry_nodes": [2.0, 2.0 * 1.005, 2.0]}), "rq2-geometry")
    assert r.verdict == verdict, (naive, r.judged_low, r.judged_high)


def test_geometry_nodes_gain_within_the_noise_is_unsettled():
    spec = {("geometry_nodes", "custom", "mimalloc", 0): [1.0] * 3,
            ("geometry_nodes", "malloc", "mimalloc", 0): [1.01, 1.03, 1.02],
            ("geometry_nodes", "custom", "glibc", 0): [1.0] * 3}
    r = _verdict(_data(spec, {"geometry_nodes": [2.0 * 1.05, 2.0 * 0.97, 2.0]}), "rq2-geometry")
    assert r.verdict == "unsettled" and r.noise_floor == pytest.approx(0.05)


def _littered(workload, slow, twin=(2.0, 2.0, 2.0)):
    """WORKLOAD's naive variant at 1.0 clean and at SLOW[allocator] under Adv_3."""
    spec = {}
    for a, at3 in slow.items():
        spec[(workload, "malloc", a, 0)] = [1.0] * 3 if a != "glibc" else [2.0] * 3
        spec[(workload, "malloc", a, 3)] = at3 if a != "glibc" else [2.0 * t for t in at3]
    return _data(spec, {workload: list(twin)})


@pytest.mark.parametrize("cid, workload", [("rq3-vpr-little", "vpr"), ("rq3-geometry-little", "geometry_nodes")])
def test_little_impact_from_littering_at_the_edges(cid, workload):
    calm = {"glibc": [1.02, 1.03, 1.04], "mimalloc": [0.99, 1.0, 1.01], "jemalloc": [1.0, 1.01, 1.02]}
    assert _verdict(_littered(workload, calm), cid).verdict == "confirmed"
    # the largest over the allocators judges: one allocator 9.5% slower is still little, 10.5% straddles
    edge = dict(calm, glibc=[1.05, 1.07, 1.095])
    assert _verdict(_littered(workload, edge), cid).verdict == "confirmed"
    over = dict(calm, glibc=[1.06, 1.08, 1.105])
    assert _verdict(_littered(workload, over), cid).verdict == "inconclusive"
    hurt = dict(calm, mimalloc=[1.15, 1.18, 1.2])          # as mudlle's 18% on mimalloc
    r = _verdict(_littered(workload, hurt), cid)
    assert r.verdict == "refuted" and workload in r.what


def test_little_impact_is_held_to_the_largest_of_as_many_null_values():
    calm = {"glibc": [1.05, 1.06, 1.07], "mimalloc": [1.0] * 3, "jemalloc": [1.0] * 3}
    quiet = _verdict(_littered("vpr", calm), "rq3-vpr-little")
    noisy = _verdict(_littered("vpr", calm, twin=(2.0 * 1.04, 2.0 * 0.99, 2.0 * 1.04)), "rq3-vpr-little")
    assert quiet.verdict == "confirmed" and quiet.noise_floor == pytest.approx(0.0)
    # three allocators: each repeat's null is the largest of three draws from the pooled A/A values
    assert len(noisy.null) == 3 and all(z in (pytest.approx(0.04), pytest.approx(-0.01)) for z in noisy.null)
    assert noisy.verdict == "inconclusive"          # 7% widened by 4%: above 10%


def _region_set():
    spec = {}
    for w in ("interp", "vpr", "geometry_nodes"):
        for v in ("malloc", "custom", "reap"):
            for a in ("glibc", "mimalloc"):
                spec[(w, v, a, 0)] = [1.0, 1.01, 1.02] if v != "malloc" else [1.1, 1.11, 1.12]
                spec[(w, v, a, 3)] = [1.0, 1.01, 1.02]
        spec[(w, "malloc", "glibc~again", 0)] = [1.1, 1.11 * 1.01, 1.12]
        spec[(w, "custom", "glibc~again", 0)] = [1.0, 1.01, 1.02]
        spec[(w, "talloc", "glibc", 0)] = [1.2] * 3
    return _data(spec)


def test_geometry_nodes_feeds_no_rule_of_the_2002_paper_nor_of_2005():
    d = _region_set()
    rows = {r.id: r for r in claims.evaluate(d)}
    for cid in ("rq2-2002", "reaps-vs-regions", "reaps-vs-talloc"):       # the 2002 paper's region rules
        assert "vpr" in rows[cid].what and "interp" in rows[cid].what, cid
        assert "geometry_nodes" not in rows[cid].what, cid
    for cid in ("rq2-gap", "rq3-resilient"):                               # the 2026 paper's: both enter
        assert "vpr" in rows[cid].what and "geometry_nodes" in rows[cid].what, cid
    # the 2005 paper has neither
    only = claims.for_paper(d, "2005")
    assert "geometry_nodes" not in only.workloads("region") and "vpr" not in only.workloads("region")
    assert "interp" in only.workloads("region")


def test_the_cells_a_2002_claim_reruns_leave_out_geometry_nodes():
    d = _region_set()
    view = claims.for_paper(d, "2002")
    assert not any(r.workload == "geometry_nodes" for r in view.rows)
    assert view.times("vpr", "talloc", "glibc", 0) and not view.times("geometry_nodes", "talloc", "glibc", 0)
    assert claims.for_paper(d, "2026") is d                                # nothing to drop: the same data
