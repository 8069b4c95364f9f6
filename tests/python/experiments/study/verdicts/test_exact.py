"""The claims measured by deterministic instruments (experiments/study/verdicts/exact.py), as their
papers measured them: 2002 Table 4's peak footprint against freeing each object at its last use,
Figure 7's drag of the region programs' own objects, and the Vam paper's 512 KiB L2 with the
32 MiB last level beside it."""

import pytest

from conftest import study_rows

from alloclab.experiments.study.verdicts import claims
from alloclab.experiments.study.verdicts.data import StudyData
from alloclab.measure import cache


def verdict(d, cid):
    return next(x for x in claims.evaluate(d) if x.id == cid)


def rows(spec):
    rs = study_rows(spec)
    for r in rs:
        r.kind = "region"
    return rs


# ---------------------------------------------------------------- regions-footprint and drag-regions

def drag_row(w, variant, actual, immediate, total=1.3):
    return {"workload": w, "variant": variant, "objects": 10, "total_drag": total,
            "peak_bytes_actual": actual, "peak_bytes_immediate": immediate}


def test_regions_footprint_is_the_peak_with_regions_over_freeing_at_last_use():
    drag = [drag_row("compiler", "emulator", 1300, 1000), drag_row("interp", "emulator", 1100, 1000),
            drag_row("compiler", "reap", 5000, 1000),                  # reaps: not the regions
            drag_row("xalloc_parser", "malloc", 9000, 1000)]           # hybrid: no regions in its naive variant
    r = verdict(StudyData([], drag=drag), "regions-footprint")
    assert r.verdict == "confirmed" and r.measured == pytest.approx(0.20)
    assert r.spread.startswith("exact") and "freed at its last use" in r.what
    drag[0]["peak_bytes_actual"] = 2900                               # mean (190% + 10%) / 2: above 63%
    assert verdict(StudyData([], drag=drag), "regions-footprint").verdict == "stronger"


def test_regions_footprint_does_not_compare_regions_with_reaps():
    """The old measure was peak RSS with the custom regions over with reaps: without the drag
    instrument the claim is not measured, whatever the RSS says."""
    spec = {("interp", "custom", "glibc", 0): [1.0] * 3, ("interp", "reap", "glibc", 0): [1.0] * 3}
    rs = rows(spec)
    for r in rs:
        r.max_rss_kb = 1200 if r.variant == "custom" else 1000
    r = verdict(StudyData(rs), "regions-footprint")
    assert r.verdict == "inconclusive" and r.n == 0


def test_drag_regions_takes_the_region_workloads_with_emulated_regions_only():
    drag = [drag_row("compiler", "emulator", 1, 1, total=2.0), drag_row("interp", "emulator", 1, 1, total=1.5),
            drag_row("xalloc_parser", "malloc", 1, 1, total=1.0), drag_row("interp", "reap", 1, 1, total=1.0)]
    r = verdict(StudyData([], drag=drag), "drag-regions")
    assert r.measured == pytest.approx((2.0 * 1.5) ** 0.5) and r.verdict == "confirmed"
    assert "xalloc_parser" not in r.what and "own objects" in r.what


# ---------------------------------------------------------------- vam-locality at the paper's L2

def cache_rows(geometry, vam, glibc):
    return [{"program": f"p{i}/malloc", "allocator": a, "ll_misses": m, "geometry": geometry}
            for i, (v, g) in enumerate(zip(vam, glibc)) for a, m in (("vam", v), ("glibc", g))]


def test_vam_locality_is_judged_at_a_512_kib_last_level_with_32_mib_beside_it():
    rs = cache_rows(cache.L2_512K, [60, 60], [100, 100]) + cache_rows(cache.GEOMETRY, [99, 99], [100, 100])
    r = verdict(StudyData([], cache=rs), "vam-locality")
    assert r.measured == pytest.approx(0.40) and r.verdict == "confirmed"
    assert "524288,8,64" in r.what and "I1 32768,8,64" in r.what and "32 MiB" in r.what and "+1.0%" in r.what
    # at the 32 MiB last level alone the claim is not judged
    r = verdict(StudyData([], cache=cache_rows(cache.GEOMETRY, [60], [100])), "vam-locality")
    assert r.verdict == "inconclusive" and r.n == 0
