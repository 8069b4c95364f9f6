"""Cache counts (measure/cache.py): perf asked for where it cannot count, and the littering's own
counts subtracted."""

import pytest


from alloclab import LabError
from alloclab.measure import cache


def test_cache_perf_without_counters_is_an_error(monkeypatch):
    monkeypatch.setattr(cache, "perf_works", lambda: False)
    monkeypatch.setattr(cache.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(LabError, match="counts nothing"):
        cache.detect("perf")


def test_negative_cache_differences_are_warned_about():
    res = {"instructions": 100, "d1_refs": 10, "d1_misses": 5, "ll_refs": 1, "ll_misses": 1}
    alone = {"instructions": 50, "d1_refs": 20, "d1_misses": 2, "ll_refs": 1, "ll_misses": 1}
    plain = {"instructions": 40, "d1_refs": 5, "d1_misses": 3, "ll_refs": 1, "ll_misses": 1}
    cache.split_littering(res, alone, plain)
    assert res["program_d1_refs"] == 0 and res["litter_only"]["d1_misses"] == 0
    assert any("d1_misses" in w and "fewer than plain" in w for w in res["warnings"])
    assert any("d1_refs" in w and "reported as 0" in w for w in res["warnings"])
    assert res["program_instructions"] == 90
