"""The study's real programs with allocators of their own (experiments/study/programs.py,
counters.py): each allocator is shown on in the custom variant and off in the naive one by
its own counter, the output is the same either way, a missing program is left out with a
note, and a pair its counter does not show on and off is dropped with a warning."""

import pytest

from conftest import make_row

from alloclab.core import runner
from alloclab.core.results.runs import StudyRow
from alloclab.experiments.study import analysis, counters, programs

# each real program with an allocator of its own -> its naive variant
PAIRS = {"sqlite3": "malloc", "python3": "malloc", "svn": "emulator", "gst-launch": "malloc"}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    notes = []
    progs = programs.real_programs(str(tmp_path_factory.mktemp("real")), 0.05, notes)
    return {p.name: p for p in progs}, notes


@pytest.mark.parametrize("workload", sorted(PAIRS))
def test_the_allocators_own_counter_shows_it_on_and_off_and_the_output_is_the_same(real, workload):
    progs, notes = real
    custom, naive = progs.get(f"{workload}/custom"), progs.get(f"{workload}/{PAIRS[workload]}")
    if custom is None or naive is None:
        pytest.fail(f"{workload} is not available here ({'; '.join(notes)}): scripts/bootstrap installs the "
                    "packages, `make real` builds SQLite's shell with lookaside")
    on, off = counters.count(custom, 120), counters.count(naive, 120)
    assert on > 0 and off == 0, (workload, on, off)
    shas = []
    for p in (custom, naive):
        r = runner.run(p.cmd, timeout=120)
        assert r.ok, (p.name, r.status, r.stderr_tail)
        shas.append(r.stdout_sha256)
    assert shas[0] == shas[1], workload
    assert custom.own_allocator and custom.own_kind == naive.own_kind


def test_each_allocator_is_filed_as_what_it_is(real):
    progs, _ = real
    kinds = {p.workload: (p.own_kind, p.kind) for p in progs.values() if p.own_allocator}
    assert kinds.get("python3") == (programs.SMALL_GENERAL, "general")      # pymalloc: not per-class
    assert kinds.get("gst-launch") == (programs.SMALL_GENERAL, "general")   # GSlice
    assert kinds.get("svn") == (programs.REGION, "region")                  # APR pools
    assert kinds.get("sqlite3") == (programs.PER_CLASS, "per-class")        # lookaside's fixed-size slots
    assert progs["gcc"].counted is None and not progs["gcc"].own_allocator


def test_a_missing_program_is_left_out_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setenv("ALLOCLAB_REAL", str(tmp_path / "nothing-built"))
    real_which = programs.shutil.which
    monkeypatch.setattr(programs.shutil, "which",
                        lambda name: None if name in ("svn", "gst-launch-1.0") else real_which(name))
    notes = []
    names = {p.workload for p in programs.real_programs(str(tmp_path), 0.05, notes)}
    assert not names & {"sqlite3", "svn", "gst-launch"}, names
    text = " ".join(notes)
    assert "sqlite3 with lookaside is not built" in text and "svn is not installed" in text
    assert "gst-launch-1.0 is not installed" in text


def test_a_counter_without_its_line_is_an_error_not_a_zero():
    assert counters.parse("apr", "apr: pid=7 pool_ops=12 malloc_ops=0\n") == 12
    assert counters.parse("lookaside", "x\nSuccessful lookaside attempts:       3057\n") == 3057
    with pytest.raises(Exception, match="printed no count"):
        counters.parse("gslice", "nothing here\n")


def _rows(workload, kind, variant_ops, times):
    out = []
    for (variant, ops), t in zip(variant_ops, times):
        for rep in (1, 2, 3):
            out.append(make_row(StudyRow, program=f"{workload}/{variant}", workload=workload, variant=variant,
                                kind=kind, origin="real", repeat=rep, custom_ops=ops, program_inproc_s=t,
                                program_s=t, wall_s=t))
    return out


def test_a_pair_its_counter_does_not_show_on_and_off_is_dropped_with_a_warning():
    # Debian's sqlite3 (no lookaside compiled in): 0 both ways; python3 shown on and off
    rows = _rows("sqlite3", "per-class", [("custom", 0), ("malloc", 0)], [1.0, 1.2]) + \
        _rows("boxed", "per-class", [("custom", None), ("malloc", None)], [1.0, 1.1])
    rows += _rows("python3", "per-class", [("custom", 5000), ("malloc", 0)], [1.0, 1.3])
    for r in rows:
        if r.workload == "boxed":
            r.origin = "bundled"
    kept, warnings = counters.drop_unverified(rows)
    assert len(warnings) == 1 and warnings[0].startswith("sqlite3: custom_ops does not show")
    assert "custom 0, naive 0" in warnings[0]
    assert {(r.workload, r.variant) for r in kept} == {("sqlite3", "malloc"), ("python3", "custom"),
                                                       ("python3", "malloc"), ("boxed", "custom"), ("boxed", "malloc")}
    f = analysis.analyse(rows, analysis.Extra(), ["glibc"], [0])
    assert f.tables["unverified_pairs"] == warnings
    assert {x["workload"] for x in f.tables["rq1"]} == {"python3", "boxed"}   # sqlite3 never judged
    # a naive run whose allocator still served requests is no evidence either
    rows2 = _rows("svn", "region", [("custom", 10), ("emulator", 3)], [1.0, 1.1])
    assert "naive 3" in counters.drop_unverified(rows2)[1][0]


def test_a_region_program_whose_naive_variant_is_the_emulator_leaves_the_best_allocator_found():
    from alloclab.experiments.study.verdicts.data import StudyData, best_allocator
    rows = _rows("svn", "region", [("custom", 10), ("emulator", 0)], [1.0, 1.1])
    rows += _rows("interp", "region", [("custom", None), ("malloc", None)], [1.0, 1.2])
    for r in rows[6:]:
        r.origin = "bundled"
    d = StudyData(rows)
    assert best_allocator(d, d.workloads("region")) == "glibc"
