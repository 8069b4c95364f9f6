"""`alloclab ablation --quick`: every setting of Vam's design switches runs,
ablation.json has the documented shape, and the switches change something."""

import json
import shutil

import pytest

from conftest import run_cli

from alloclab import ablation

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
                     "VAM_BLOCK_OBJECTS", "VAM_PAGE_MAX", "VAM_DISCARD"]
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


def test_the_settings_change_one_switch_at_a_time():
    sets = ablation.settings()
    assert sets[0].switch is None
    defaults = {s.name: s.default for s in ablation.SWITCHES}

    def switches(env):
        return {k: v for k, v in env.items() if k in defaults}

    assert switches(sets[0].env()) == defaults
    for s in sets[1:]:
        changed = {k for k, v in switches(s.env()).items() if v != defaults[k]}
        assert changed == {s.switch}
    # the same environment size for every setting: the stack does not move with the value
    assert len({sum(len(k) + len(v) for k, v in s.env().items()) for s in sets}) == 1
