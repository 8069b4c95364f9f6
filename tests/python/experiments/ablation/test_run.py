"""`alloclab ablation --quick` (experiments/ablation/run.py): every setting of Vam's design switches
runs, ablation.json has the documented shape, and the switches change something."""

import json
import shutil

import pytest

from conftest import run_cli



ROW_KEYS = {"program", "switch", "value", "is_default", "n", "time_ratio", "time_lo", "time_hi",
            "d1_ratio", "ll_ratio", "rss_ratio", "winner"}


@pytest.fixture(scope="module")
def quick_ablation(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("ablation")
    cp = run_cli("ablation", "--quick", "-o", str(out), timeout=900)
    data = json.loads((out / "ablation.json").read_text()) if (out / "ablation.json").exists() else None
    return cp, out, data


def test_the_quick_ablation_writes_json_and_markdown(quick_ablation):
    cp, out, data = quick_ablation
    assert cp.returncode == 0, cp.stderr[-3000:]
    assert data is not None
    assert (out / "ablation.md").read_text().startswith("# Ablation of Vam's design switches")
    assert data["format_version"] == 1 and data["kind"] == "ablation"
    assert data["command"][:2] == ["alloclab", "ablation"]
    assert isinstance(data["geometry"], str) and isinstance(data["notes"], list)
    names = [s["name"] for s in data["switches"]]
    assert names == ["VAM_CLASSES", "VAM_BLOCK_ALLOC", "VAM_ORDER", "VAM_HEADERS", "VAM_BLOCK_PAGES",
                     "VAM_BLOCK_OBJECTS", "VAM_PAGE_MAX", "VAM_DISCARD", "VAM_LARGE_QUICK"]
    for s in data["switches"]:
        assert s["default"] in s["values"] and len(s["values"]) >= 2


def test_every_program_has_a_row_per_setting_and_one_winner_per_switch(quick_ablation):
    _, _, data = quick_ablation
    programs = sorted({r["program"] for r in data["rows"]})
    assert programs, "no rows"
    for r in data["rows"]:
        assert set(r) == ROW_KEYS
    for p in programs:
        for s in data["switches"]:
            rows = [r for r in data["rows"] if r["program"] == p and r["switch"] == s["name"]]
            assert sorted(r["value"] for r in rows) == sorted(s["values"])
            default = next(r for r in rows if r["is_default"])
            assert default["value"] == s["default"]
            assert default["time_ratio"] == 1.0 and default["n"] >= 2
            assert sum(r["winner"] for r in rows) == 1
            best = next(r for r in rows if r["winner"])
            assert best["time_ratio"] == min(r["time_ratio"] for r in rows)


def test_no_setting_changes_a_programs_output_or_makes_it_fail(quick_ablation):
    _, _, data = quick_ablation
    bad = [n for n in data["notes"] if "differed" in n or "ended" in n]
    assert not bad, bad


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_layout_switches_change_the_cache_behaviour(quick_ablation):
    """A switch that did nothing would leave cachegrind's counts exactly equal (the
    environments have one size and the interpreters fixed hash seeds)."""
    _, _, data = quick_ablation
    for name in ("VAM_CLASSES", "VAM_BLOCK_ALLOC", "VAM_ORDER", "VAM_HEADERS", "VAM_BLOCK_PAGES",
                 "VAM_BLOCK_OBJECTS", "VAM_PAGE_MAX"):
        moved = [r for r in data["rows"] if r["switch"] == name and not r["is_default"]
                 and r["d1_ratio"] is not None and r["d1_ratio"] != 1.0]
        assert moved, f"{name}: no setting changed the D1 misses"


def test_the_control_and_every_alternative_get_a_paired_verdict(quick_ablation):
    """Across the programs, a setting is faster or slower than the default only when its
    paired interval excludes 1; the A/A control is reported the same way."""
    cp, _, data = quick_ablation
    c = data["control"]
    assert c["rounds"] >= 2 and c["low"] <= c["ratio"] <= c["high"] and c["verdict"] in ("faster", "slower", "level")
    assert "A/A control (the default again)" in cp.stderr
    for sw in data["summary"]:
        for v in sw["values"]:
            t = v["time_paired"]
            if v["is_default"]:
                assert t is None
                continue
            assert t["verdict"] == ("faster" if t["high"] < 1 else "slower" if t["low"] > 1 else "level")
        assert set(sw["clearly_faster"]) == {v["value"] for v in sw["values"]
                                             if (v["time_paired"] or {}).get("verdict") == "faster"}
