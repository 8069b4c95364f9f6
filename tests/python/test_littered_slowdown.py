"""bench/littered_slowdown: runs the study's general programs clean and
littered, and summarises each allocator's slowdown from the saved runs."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = f"{ROOT}/bench/littered_slowdown"


def run(*args, timeout=600):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def bench(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("littered")
    cp = run("--size", "quick", "--repeat", "1", "--adv", "3", "--allocators", "glibc", "-o", str(out))
    return cp, out


def test_every_general_program_gets_a_slowdown_and_a_geometric_mean(bench):
    cp, out = bench
    assert cp.returncode == 0, cp.stderr[-3000:]
    doc = json.loads((out / "slowdown.json").read_text())
    assert doc["adv"] == 3 and doc["repeat"] == 1
    progs = doc["per_program"]
    for name in ("mempool_iter/malloc", "gp_mix/malloc", "gp_mix/reap", "server/malloc"):
        assert name in progs, sorted(progs)
    assert all(v["glibc"] > 0 for v in progs.values())
    assert doc["geomean"]["glibc"] > 0
    # one allocator: it is the least slowed on every program, and equal to itself on a clean heap
    assert doc["wins"]["glibc"] == len(progs)
    assert doc["clean_vs_glibc"]["glibc"] == {"time": 1.0, "rss": 1.0}
    md = (out / "slowdown.md").read_text()
    assert "| mempool_iter/malloc |" in md and "| geometric mean |" in md


def test_report_only_summarises_the_saved_runs_without_running_again(bench):
    cp, out = bench
    before = json.loads((out / "slowdown.json").read_text())
    (out / "slowdown.json").unlink()
    cp2 = run("--size", "quick", "--repeat", "1", "--adv", "3", "--allocators", "glibc", "--report-only",
              "-o", str(out), timeout=120)
    assert cp2.returncode == 0, cp2.stderr[-2000:]
    assert json.loads((out / "slowdown.json").read_text())["per_program"] == before["per_program"]


def test_bad_arguments_fail_with_a_message(tmp_path):
    cp = run("--repeat", "0", "-o", str(tmp_path))
    assert cp.returncode == 2 and "--repeat" in cp.stderr
    cp = run("--allocators", "no-such-allocator", "--report-only", "-o", str(tmp_path))
    assert cp.returncode == 2 and "no-such-allocator" in cp.stderr
