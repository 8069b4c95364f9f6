"""bench/littered_slowdown: runs the study's general programs clean and
littered, and summarises each allocator's slowdown from the saved runs."""

import json
import math
import statistics
import subprocess
import sys

import pytest

from conftest import ROOT

from alloclab.core.results.runs import read_rows

SCRIPT = f"{ROOT}/bench/littered_slowdown"


def run(*args, timeout=600):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=timeout)


ALLOCS = ("glibc", "vam")   # two allocators, so that wins and ratios are not 1 by construction


@pytest.fixture(scope="module")
def bench(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("littered")
    cp = run("--size", "quick", "--repeat", "1", "--adv", "3", "--allocators", ",".join(ALLOCS), "-o", str(out))
    return cp, out


def _medians(out, prog):
    """(allocator, adv) -> median program_s of the ok runs saved for one program."""
    rows = read_rows(str(out / "runs" / prog.replace("/", "-") / "results.csv"))
    cells = {}
    for r in rows:
        if r.ok:
            cells.setdefault((r.allocator, int(r.adv)), []).append(r.program_s)
    return {k: statistics.median(v) for k, v in cells.items()}


def test_every_general_program_gets_a_slowdown_and_a_geometric_mean(bench):
    cp, out = bench
    assert cp.returncode == 0, cp.stderr[-3000:]
    doc = json.loads((out / "slowdown.json").read_text())
    assert doc["adv"] == 3 and doc["repeat"] == 1
    progs = doc["per_program"]
    for name in ("mempool_iter/malloc", "gp_mix/malloc", "gp_mix/reap", "server/malloc"):
        assert name in progs, sorted(progs)
    # Each slowdown is the littered median over the clean median of that allocator's own runs.
    for prog, per in progs.items():
        med = _medians(out, prog)
        for a in ALLOCS:
            assert per[a] == pytest.approx(med[(a, 3)] / med[(a, 0)], rel=1e-9), (prog, a)
    # The geometric mean and the wins follow from the table.
    for a in ALLOCS:
        logs = [math.log(per[a]) for per in progs.values()]
        assert doc["geomean"][a] == pytest.approx(math.exp(sum(logs) / len(logs)), rel=1e-9)
    assert sum(doc["wins"].values()) == len(progs)
    for a in ALLOCS:
        assert doc["wins"][a] == sum(1 for per in progs.values() if min(per, key=per.get) == a)
    # Clean-heap ratios against glibc: glibc is 1, vam's is the geomean of its clean medians over glibc's.
    assert doc["clean_vs_glibc"]["glibc"] == {"time": 1.0, "rss": 1.0}
    ratios = [math.log(_medians(out, p)[("vam", 0)] / _medians(out, p)[("glibc", 0)]) for p in progs]
    assert doc["clean_vs_glibc"]["vam"]["time"] == pytest.approx(math.exp(sum(ratios) / len(ratios)), rel=1e-9)
    md = (out / "slowdown.md").read_text()
    assert "| mempool_iter/malloc |" in md and "| geometric mean |" in md


def test_report_only_summarises_the_saved_runs_without_running_again(bench):
    cp, out = bench
    before = json.loads((out / "slowdown.json").read_text())
    (out / "slowdown.json").unlink()
    cp2 = run("--size", "quick", "--repeat", "1", "--adv", "3", "--allocators", ",".join(ALLOCS), "--report-only",
              "-o", str(out), timeout=120)
    assert cp2.returncode == 0, cp2.stderr[-2000:]
    assert json.loads((out / "slowdown.json").read_text())["per_program"] == before["per_program"]


def test_bad_arguments_fail_with_a_message(tmp_path):
    cp = run("--repeat", "0", "-o", str(tmp_path))
    assert cp.returncode == 2 and "--repeat" in cp.stderr
    cp = run("--allocators", "no-such-allocator", "--report-only", "-o", str(tmp_path))
    assert cp.returncode == 2 and "no-such-allocator" in cp.stderr
