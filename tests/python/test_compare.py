"""`alloclab compare` end to end, its files, failures and interruption."""

import csv
import json
import os

import pytest

from conftest import peers_installed, peers_on_disk, run_cli
from alloclab import LabError
from alloclab.core import allocators, runner
from alloclab.core.levels import Cell, Level
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


def read_rows(d):
    with open(os.path.join(d, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


def test_compare_end_to_end(work, tmp_path, libdir):
    peer = (peers_installed() or ["glibc"])[0]
    allocs = "glibc" if peer == "glibc" else f"glibc,{peer}"
    out = tmp_path / "cmp"
    r = run_cli("compare", "--allocators", allocs, "--adv", "0,3", "--repeat", "2", "--cache", "off",
                "-o", str(out), "--", work)
    assert r.returncode == 0, r.stderr
    rows = read_rows(out)
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
    rows = read_rows(out)
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
    rows = read_rows(out2)
    assert [row["status"] for row in rows] == ["timeout"]


def test_differing_stdout_is_flagged(tmp_path, libdir):
    out = tmp_path / "rand"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--repeat", "3", "--cache", "off",
                "--no-warmup", "-o", str(out), "--", "sh", "-c", "echo $$")
    assert r.returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["stdout_differs"]) >= 2
    assert "stdout differs" in r.stdout


@pytest.mark.parametrize("args,message", [
    (["--allocators", "glibc,nosuch"], "unknown allocator 'nosuch'"),
    (["--allocators", "/nonexistent/libx.so"], "does not exist"),
    (["--adv", "0,5"], "Adv_5"),
    (["--repeat", "0"], "--repeat"),
    (["--baseline", "jemalloc"], "baseline"),
])
def test_compare_bad_input(work, tmp_path, args, message):
    r = run_cli("compare", "--allocators", "glibc", "--cache", "off", *args, "-o", str(tmp_path / "x"),
                "--", work) if "--allocators" not in args else \
        run_cli("compare", "--cache", "off", *args, "-o", str(tmp_path / "x"), "--", work)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr


def test_compare_missing_program(tmp_path):
    r = run_cli("compare", "--allocators", "glibc", "-o", str(tmp_path / "x"), "--", "no-such-program-xyz")
    assert r.returncode == 2 and "not found" in r.stderr
    r = run_cli("compare", "--allocators", "glibc", "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "no command" in r.stderr


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
    rows = read_rows(out)
    assert len(rows) == 2          # the profile run was call 1; runs 2 and 3 finished
    assert (out / "summary.json").exists() and (out / "report.html").exists()
    assert "interrupted" in (out / "report.html").read_text()


def test_a_variant_is_its_allocator_with_variables_set():
    v = allocators.find("glibc@VAM_ORDER=fifo@OTHER=a=b")
    assert v.name == "glibc@VAM_ORDER=fifo@OTHER=a=b" and v.path is None
    assert v.environ == {"VAM_ORDER": "fifo", "OTHER": "a=b"}  # a value may hold "="
    assert allocators.find("glibc@EMPTY=").environ == {"EMPTY": ""}
    assert allocators.find("glibc").env == ()
    for bad, says in [("glibc@VAM_ORDER", "expected NAME@VAR=VALUE"), ("glibc@", "expected NAME@VAR=VALUE"),
                      ("@X=1", "expected NAME@VAR=VALUE"), ("glibc@1X=2", "not an environment variable"),
                      ("glibc@X=1@X=2", "given twice"), ("glibc@LD_PRELOAD=/x.so", "set by the lab"),
                      ("glibc@LITTER_SEED=3", "set by the lab"), ("glibc@ALLOCLAB_PAD=1", "set by the lab"),
                      ("nosuchmalloc@X=1", "unknown allocator 'nosuchmalloc'")]:
        with pytest.raises(LabError, match=says):
            allocators.find(bad)


def test_compare_runs_a_variant_with_its_variables_clean_and_littered(tmp_path):
    """The variable reaches the program on every run of the variant, littered or not, and
    only there: each allocator's runs print the same line, the two allocators different ones."""
    out = tmp_path / "cmp"
    r = run_cli("compare", "--allocators", "glibc,glibc@VARIANT_PROBE=on", "--adv", "0,3", "--runs", "2",
                "--cache", "off", "-o", str(out), "--", "sh", "-c", 'echo "probe=$VARIANT_PROBE"')
    assert r.returncode == 0, r.stderr
    rows = read_rows(out)
    assert {row["status"] for row in rows} == {"ok"}
    by = {}
    for row in rows:
        by.setdefault(row["allocator"], set()).add(row["stdout_sha256"])
    assert set(by) == {"glibc", "glibc@VARIANT_PROBE=on"}
    assert all(len(h) == 1 for h in by.values()), by
    assert by["glibc"] != by["glibc@VARIANT_PROBE=on"]
    assert "stdout differs" in r.stdout


def test_a_malformed_variant_is_refused_before_anything_runs(tmp_path):
    r = run_cli("compare", "--allocators", "glibc,vam@VAM_ORDER", "--adv", "0", "-o", str(tmp_path / "o"),
                "--", "true")
    assert r.returncode == 2 and "expected NAME@VAR=VALUE" in r.stderr
    assert not (tmp_path / "o").exists()


def test_api_finds_allocators():
    assert allocators.find("glibc").path is None
    with pytest.raises(LabError):
        allocators.find("definitely-not-an-allocator")


@pytest.mark.parametrize("name", ["jemalloc", "mimalloc", "tcmalloc"])
def test_a_peer_is_found_exactly_when_its_library_is_on_disk(name):
    """Against a listing of the disk made without the registry: a peer installed here is found,
    at one of its files, with a version; one that is not raises NotInstalled."""
    on_disk = peers_on_disk()[name]
    if on_disk:
        a = allocators.find(name)
        assert os.path.realpath(a.path) in on_disk and a.version != "unknown"
    else:
        with pytest.raises(allocators.NotInstalled, match=f"allocator '{name}' is not installed"):
            allocators.find(name)


def test_find_looks_where_the_registry_says(tmp_path, monkeypatch):
    """A fake system: one library directory holding a jemalloc, ldconfig knowing nothing. find()
    returns that file (version from its name), and raises NotInstalled once it is gone."""
    lib = tmp_path / "libjemalloc.so.2"
    lib.write_bytes(b"\x7fELF" + bytes(60))
    monkeypatch.setattr(allocators, "_ldconfig", lambda: {})
    monkeypatch.setattr(allocators, "_package_version", lambda path: None)
    monkeypatch.setattr(allocators, "SYSTEM_LIBDIRS", [str(tmp_path)])
    a = allocators.find("jemalloc")
    assert (a.name, a.path, a.version) == ("jemalloc", str(lib), "2")
    v = allocators.find("jemalloc@X=1")
    assert (v.name, v.path, v.env) == ("jemalloc@X=1", str(lib), (("X", "1"),))
    lib.unlink()
    with pytest.raises(allocators.NotInstalled):
        allocators.find("jemalloc")
    assert "jemalloc" not in [x.name for x in allocators.available()]
