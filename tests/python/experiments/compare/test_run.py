"""A comparison run end to end (experiments/compare/run.py): its files, failures, cache counts,
variants and interruption."""

import json
import os

import pytest

from conftest import csv_rows, peers_installed, run_cli

from alloclab.core import allocators, runner
from alloclab.core.levels import Cell, Level
from alloclab.core.results.runs import read_rows
from alloclab.experiments.compare.plan import ComparePlan
from alloclab.experiments.compare.run import run_matrix


WORK = r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  static void *volatile p[20000];
  unsigned long sum = 0;
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 20000; i++) p[i] = malloc(16 + (i % 7) * 8);
    for (int i = 0; i < 20000; i++) { sum += (unsigned long)i; free(p[i]); }
  }
  printf("%lu\n", sum);
  return 0;
}
"""

@pytest.fixture(scope="module")
def work(cbuild):
    return cbuild(WORK, "work")


def test_compare_end_to_end(work, tmp_path, libdir):
    peer = (peers_installed() or ["glibc"])[0]
    allocs = "glibc" if peer == "glibc" else f"glibc,{peer}"
    out = tmp_path / "cmp"
    r = run_cli("compare", "--allocators", allocs, "--adv", "0,3", "--repeat", "2", "--cache", "off",
                "-o", str(out), "--", work)
    assert r.returncode == 0, r.stderr
    rows = csv_rows(out)
    n_alloc = len(allocs.split(","))
    assert len(rows) == n_alloc * 2 * 2
    for col in ("allocator", "adv", "repeat", "wall_s", "user_s", "sys_s", "max_rss_kb", "exit_code",
                "stdout_sha256", "status"):
        assert col in rows[0]
    assert {row["status"] for row in rows} == {"ok"}
    assert len({row["stdout_sha256"] for row in rows}) == 1
    # Round-robin: the first len(cells) rows are repeat 1 of every cell.
    assert [row["repeat"] for row in rows[: n_alloc * 2]] == ["1"] * (n_alloc * 2)
    assert all(0 < int(row["max_rss_kb"]) < 20000 for row in rows)  # the program's, not Python's
    for row in rows:   # littering time comes from the shim's log and is split off
        assert (float(row["litter_s"]) > 0) == (row["adv"] == "3")
        assert float(row["program_s"]) == pytest.approx(float(row["wall_s"]) - float(row["litter_s"]), abs=2e-6)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["baseline"] == "glibc/Adv_0"
    base = next(c for c in summary["cells"] if c["allocator"] == "glibc" and c["adv"] == 0)
    assert base["wall_s_ratio"] == pytest.approx(1.0)
    assert (out / "profile.json").exists()
    html = (out / "report.html").read_text()
    assert "glibc" in html and "Adv_3" in html and "Cache measurement: <b>off</b>" in html
    assert all((out / f).exists() for f in ("time.png", "wall.png", "user.png", "rss.png"))
    assert "data:image/png;base64," in html
    assert "x base" in r.stdout and "glibc" in r.stdout
    assert "[4/" in r.stderr or "[8/" in r.stderr      # progress lines


def test_compare_with_cachegrind(cbuild, tmp_path, libdir):
    tiny = cbuild(r"""
    #include <stdlib.h>
    int main(void) { static void *volatile p[300]; for (int i = 0; i < 300; i++) p[i] = malloc(32);
                     for (int i = 0; i < 300; i++) free(p[i]); return 0; }
    """, "tiny")
    out = tmp_path / "cg"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0,10", "--repeat", "1", "--cache", "cachegrind",
                "-o", str(out), "--", tiny)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["meta"]["cache_method"] == "cachegrind"
    assert summary["meta"]["cache_geometry"]["D1"] == "32768,8,64"
    cells = {c["adv"]: c["cache"] for c in summary["cells"]}
    for adv in (0, 10):
        assert cells[adv]["d1_misses"] > 0 and cells[adv]["ll_misses"] > 0, cells[adv]
        assert cells[adv]["error"] is None
    # Littering runs under cachegrind too: more instructions before main,
    # measured alone on `true` and subtracted from the program's counts.
    assert cells[10]["instructions"] > cells[0]["instructions"]
    assert cells[0]["litter_only"] is None and cells[0]["program_d1_misses"] == cells[0]["d1_misses"]
    alone = cells[10]["litter_only"]
    assert alone["instructions"] > 0
    assert cells[10]["program_instructions"] == cells[10]["instructions"] - alone["instructions"]
    # With the littering subtracted, what is left is the program's own work,
    # which littering changes only somewhat (its mallocs take other paths).
    assert 0.5 * cells[0]["instructions"] < cells[10]["program_instructions"] < 1.5 * cells[0]["instructions"]
    html = (out / "report.html").read_text()
    assert "D1=32768,8,64" in html and "LL=33554432,16,64" in html
    assert (out / "cache.png").exists()


def test_timeouts_and_crashes_are_recorded_not_hidden(cbuild, tmp_path, libdir):
    flaky = cbuild(r"""
    #include <stdlib.h>
    #include <unistd.h>
    #include <signal.h>
    int main(void) {
      const char *m = getenv("LD_PRELOAD");
      if (m && getenv("LITTER_PROFILE")) raise(SIGSEGV);   /* crashes when littered */
      return 0;
    }
    """, "flaky")
    out = tmp_path / "flaky"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0,1", "--repeat", "2", "--cache", "off",
                "--no-warmup", "-o", str(out), "--", flaky)
    assert r.returncode == 1          # the Adv_1 cell has no successful run
    rows = csv_rows(out)
    assert len(rows) == 4
    assert {row["status"] for row in rows if row["adv"] == "1"} == {"crashed"}
    assert {row["signal"] for row in rows if row["adv"] == "1"} == {"11"}
    assert {row["status"] for row in rows if row["adv"] == "0"} == {"ok"}
    assert "2 crashed" in r.stdout
    assert (out / "report.html").exists()

    sleeper = cbuild("#include <unistd.h>\nint main(void) { sleep(30); return 0; }\n", "sleeper")
    out2 = tmp_path / "slow"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--repeat", "1", "--cache", "off",
                "--no-warmup", "--timeout", "0.5", "-o", str(out2), "--", sleeper)
    assert r.returncode == 1
    rows = csv_rows(out2)
    assert [row["status"] for row in rows] == ["timeout"]


def test_differing_stdout_is_flagged(tmp_path, libdir):
    out = tmp_path / "rand"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--repeat", "3", "--cache", "off",
                "--no-warmup", "-o", str(out), "--", "sh", "-c", "echo $$")
    assert r.returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["stdout_differs"]) >= 2
    assert "stdout differs" in r.stdout


def test_interrupt_keeps_finished_rows(work, tmp_path, monkeypatch, libdir):
    real = runner.run
    calls = {"n": 0}

    def run_then_interrupt(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(runner, "run", run_then_interrupt)
    out = tmp_path / "int"
    plan = ComparePlan([work], [allocators.find("glibc")], [Level.ADV_0, Level.ADV_1], Cell("glibc", Level.ADV_0),
                       runs=3, outdir=str(out), cache="off", warmup=0)
    summary = run_matrix(plan, progress=None)
    assert summary.meta.interrupted is True
    rows = csv_rows(out)
    assert len(rows) == 2          # the profile run was call 1; runs 2 and 3 finished
    assert (out / "summary.json").exists() and (out / "report.html").exists()
    assert "interrupted" in (out / "report.html").read_text()


def test_compare_runs_a_variant_with_its_variables_clean_and_littered(tmp_path):
    """The variable reaches the program on every run of the variant, littered or not, and
    only there: each allocator's runs print the same line, the two allocators different ones."""
    out = tmp_path / "cmp"
    r = run_cli("compare", "--allocators", "glibc,glibc@VARIANT_PROBE=on", "--adv", "0,3", "--runs", "2",
                "--cache", "off", "-o", str(out), "--", "sh", "-c", 'echo "probe=$VARIANT_PROBE"')
    assert r.returncode == 0, r.stderr
    rows = csv_rows(out)
    assert {row["status"] for row in rows} == {"ok"}
    by = {}
    for row in rows:
        by.setdefault(row["allocator"], set()).add(row["stdout_sha256"])
    assert set(by) == {"glibc", "glibc@VARIANT_PROBE=on"}
    assert all(len(h) == 1 for h in by.values()), by
    assert by["glibc"] != by["glibc@VARIANT_PROBE=on"]
    assert "stdout differs" in r.stdout


# ---- every row carries the program's memory at exit and its CPU time

def test_compare_writes_the_new_columns(tmp_path, exit_memory):
    out = tmp_path / "cmp"
    p = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--runs", "2", "--cache", "off", "-o", str(out),
                "--", exit_memory, "exit")
    # the program exits 7 on purpose: the runs count as failed, and still carry their memory
    rows = read_rows(str(out / "results.csv"))
    assert len(rows) == 2
    for r in rows:
        assert 32768 <= r.private_dirty_kb <= 40000, p.stderr
        assert 16000 <= r.lazyfree_kb <= 16500
        assert r.program_cpu_s is not None and 0 <= r.program_cpu_s <= r.wall_s + 0.05


def test_cache_auto_says_what_it_chose_and_why(tmp_path):
    from alloclab.measure import cache
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--repeat", "1", "--cache", "auto",
                "-o", str(tmp_path / "o"), "--", "true")
    assert r.returncode == 0, r.stderr
    chosen = cache.detect("auto")
    line = next((x for x in r.stderr.splitlines() if x.startswith("--cache auto: ")), None)
    assert line is not None and line.startswith(f"--cache auto: {chosen}"), r.stderr
    if chosen == "cachegrind":
        assert "perf cannot count" in line and "D1=32768,8,64" in line, line
        assert "[cache 1/1] glibc Adv_0 cachegrind: D1 misses" in r.stderr, r.stderr


def test_rss_series_samples_each_cell_once_more_and_plots_it(tmp_path, libdir):
    """A program that holds 40 MiB, then frees it: every cell's series climbs to about 40 MiB and
    comes down; the measured rounds are not the sampled run (results.csv keeps its rows)."""
    from alloclab.core.levels import Level
    from alloclab.core.results.series import read_rss_series
    prog = ("import time; x = [bytearray(1 << 20) for _ in range(40)]; time.sleep(0.15); "
            "del x; time.sleep(0.15)")
    out = tmp_path / "rss"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0,1", "--repeat", "1", "--cache", "off",
                "--rss-series", "5", "-o", str(out), "--", "python3", "-c", prog)
    assert r.returncode == 0, r.stderr
    series = read_rss_series(str(out / "rss_series.csv"))
    assert set(series) == {("glibc", Level.of(0)), ("glibc", Level.of(1))}
    for samples in series.values():
        peak = max(kb for _, kb in samples)
        assert 40 * 1024 < peak < 200 * 1024, samples
        assert samples[-1][1] < peak - 30 * 1024, samples   # the 40 MiB went back before the end
        assert [t for t, _ in samples] == sorted(t for t, _ in samples)
    assert len(json.loads((out / "summary.json").read_text())["cells"]) == 2
    assert json.loads((out / "summary.json").read_text())["meta"]["rss_series"] == \
        {"file": "rss_series.csv", "every_s": 0.005}
    assert (out / "rss_series.png").exists()
    assert "sampled every 5 ms" in (out / "report.html").read_text()
    assert "[rss 2/2] glibc Adv_1" in r.stderr


def test_a_comparison_run_a_round_at_a_time_gives_the_rows_of_one_run_whole(tmp_path, work, libdir):
    """first_repeat: rounds 2 and 3 run apart carry the repeat numbers, littering seeds and run
    numbers they have when the three rounds run in one go."""
    from alloclab.experiments.compare.plan import repeat_seed
    glibc = allocators.find("glibc")

    def plan(out, **kw):
        return ComparePlan([work], [glibc], [Level.ADV_0, Level.ADV_1], Cell("glibc", Level.ADV_0), warmup=0,
                           cache="off", report=False, seed=11, outdir=str(tmp_path / out), **kw)
    run_matrix(plan("whole", runs=3), progress=None)
    whole = [(r["repeat"], r["seed"], r["run"], r["adv"]) for r in csv_rows(tmp_path / "whole")]
    profile = str(tmp_path / "whole" / "profile.json")
    apart = []
    for rep in (1, 2, 3):
        run_matrix(plan(f"r{rep}", runs=1, first_repeat=rep, profile=profile), progress=None)
        apart += [(r["repeat"], r["seed"], r["run"], r["adv"]) for r in csv_rows(tmp_path / f"r{rep}")]
    assert apart == whole
    assert {s for _, s, _, adv in whole if adv == "1"} == {str(repeat_seed(11, k)) for k in (1, 2, 3)}
    with pytest.raises(Exception, match="first repeat"):
        plan("bad", runs=1, first_repeat=0).check()
