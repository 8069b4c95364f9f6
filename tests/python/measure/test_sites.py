"""Allocation sites (measure/sites.py over liballoclab_sites.so): named, exact, ranked, diffed and
exported for DHAT's viewer."""
import json
import os
import subprocess

import pytest

from conftest import ROOT, run_cli
from alloclab.core import allocators
from alloclab.measure import sites

PATTERN = os.path.join(ROOT, "tests", "lab", "sites_pattern.c")


@pytest.fixture(scope="module")
def pattern(tmp_path_factory, libdir):
    """sites_pattern built without -rdynamic: its functions are named by addr2line alone."""
    try:
        allocators.shim("sites")
    except Exception as e:  # noqa: BLE001 - the message says what is missing
        pytest.fail(f"liballoclab_sites.so is not built: {e}")
    exe = tmp_path_factory.mktemp("sites") / "pattern"
    subprocess.run(["cc", "-O1", "-g", "-fno-builtin", "-pthread", PATTERN, "-o", str(exe)], check=True)
    return str(exe)


def profiled(tmp_path, exe, name="p"):
    out = tmp_path / f"{name}.json"
    r = run_cli("profile", "--stacks", "-o", str(out), "--", exe)
    assert r.returncode == 0, r.stderr
    return out


def test_each_function_is_named_with_its_exact_totals(tmp_path, pattern):
    profiled(tmp_path, pattern)
    prof = sites.load(tmp_path / "p.json.sites")
    rows = {f.function: c for f, c in sites.by_function(prof.sites).items()}
    assert (rows["make_small"].calls, rows["make_small"].bytes, rows["make_small"].temporaries) == (1500, 150000, 1500)
    assert (rows["make_big"].calls, rows["make_big"].peak_bytes) == (5, 5 << 20)
    assert (rows["grow_buffer"].calls, rows["grow_buffer"].bytes) == (10, 32736)
    assert (rows["leak_some"].leaked_bytes, rows["leak_some"].leaked_objects) == (640, 10)
    first = sites.top(sites.by_function(prof.sites), "peak_bytes", 1)[0][0]
    assert first.function == "make_big" and first.location.endswith("sites_pattern.c:24")


def test_the_command_prints_the_rankings_and_writes_dhat(tmp_path, pattern):
    out = profiled(tmp_path, pattern)
    dhat = tmp_path / "p.dhat.json"
    r = run_cli("sites", str(out), "--top", "3", "--dhat", str(dhat))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    peak = lines.index("top 3 by peak bytes:")
    assert "make_big" in lines[peak + 1] and "5.0 MiB" in lines[peak + 1]
    calls = lines.index("top 3 by calls:")
    assert "make_small" in lines[calls + 1] and "1,500" in lines[calls + 1]
    d = json.loads(dhat.read_text())
    assert d["dhatFileVersion"] == 2 and d["ftbl"][0] == "[root]" and d["tg"] > 0
    for pp in d["pps"]:
        assert {"tb", "tbk", "tl", "mb", "mbk", "gb", "gbk", "eb", "ebk", "fs"} <= set(pp)
        assert all(0 <= i < len(d["ftbl"]) for i in pp["fs"])
    assert sum(pp["tbk"] for pp in d["pps"]) >= 1525


def test_diff_of_two_profiles_lists_the_largest_change_first(tmp_path, pattern):
    a = sites.load(profiled(tmp_path, pattern, "a").with_suffix(".json.sites"))
    b = sites.load(profiled(tmp_path, pattern, "b").with_suffix(".json.sites"))
    assert all(c.bytes_change == 0 and c.calls_a == c.calls_b for c in sites.diff(a, b)
               if c.function.function in ("make_small", "make_big", "grow_buffer", "leak_some"))
    b.sites = [s for s in b.sites if s.function.function != "make_big"]
    top = sites.diff(a, b)[0]
    assert top.function.function == "make_big" and top.bytes_change == -(5 << 20)


def test_a_profile_without_stacks_and_a_foreign_file_are_refused(tmp_path, pattern):
    out = tmp_path / "plain.json"
    assert run_cli("profile", "-o", str(out), "--", pattern).returncode == 0
    r = run_cli("sites", str(out))
    assert r.returncode == 2 and "without allocation sites" in r.stderr
    bad = tmp_path / "sites.1.json"
    bad.write_text('{"kind": "alloclab-profile"}')
    with pytest.raises(sites.SitesError, match="not an alloclab sites record"):
        sites.load(bad)
    (tmp_path / "empty").mkdir()
    with pytest.raises(sites.SitesError, match="no sites"):
        sites.load(tmp_path / "empty")
