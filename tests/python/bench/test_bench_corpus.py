"""bench/corpus: real Debian programs timed under each allocator through `alloclab compare`.

The bench takes libvam from build/release (or $ALLOCLAB_BENCH_BUILD); programs from /usr/bin and
/bin, or the directories in $ALLOCLAB_CORPUS_PATH (here: a directory holding only sort, so that every
other program is missing).
"""

import json
import math
import os
import runpy
import shutil
import subprocess
import sys
import types

import pytest

from alloclab import stats
from alloclab.core import allocators

from conftest import ROOT  # noqa: E402
from bench import synthetic  # noqa: E402
BUILD = os.path.abspath(os.environ.get("ALLOCLAB_BENCH_BUILD") or os.path.join(ROOT, "build", "release"))
BENCH = os.path.join(ROOT, "bench", "corpus")
LIBVAM = os.path.join(BUILD, "src", "vam", "libvam.so")


def _bench_module():
    """The script's definitions (run as a module that is not __main__: nothing runs)."""
    return types.SimpleNamespace(**runpy.run_path(BENCH, run_name="bench_corpus"))


def _run_with_sort_alone(tmp_path, *args):
    """bench/corpus at its quick size, one round, into tmp_path/out, where sort is the only
    program installed; (the finished process, the output directory)."""
    if not os.path.exists(LIBVAM):
        pytest.fail(f"{LIBVAM} is not built (cmake --build {BUILD})")
    only = tmp_path / "bin"
    only.mkdir()
    os.symlink(shutil.which("sort", path="/usr/bin:/bin"), only / "sort")
    out = tmp_path / "out"
    env = dict(os.environ, ALLOCLAB_BENCH_BUILD=BUILD, ALLOCLAB_CORPUS_PATH=str(only))
    cp = subprocess.run([sys.executable, BENCH, "--size", "quick", "--rounds", "1", *args, "-o", str(out)],
                        capture_output=True, text=True, env=env, timeout=300)
    assert cp.returncode == 0, cp.stdout + cp.stderr[-3000:]
    return cp, out


def test_corpus_times_one_program_and_reports_the_missing_ones(tmp_path):
    cp, out = _run_with_sort_alone(tmp_path, "--programs", "sort,jq,lua5.4")
    doc = json.loads((out / "corpus.json").read_text())
    # every allocator found, glibc (the baseline) first; vam from the build tree
    names = [a["name"] for a in doc["allocator_info"]]
    # vam's library named by its path in the checkout (when built there), not by where the checkout lies
    rel = os.path.relpath(LIBVAM, ROOT)
    assert names[0] == "glibc" and doc["allocator_info"][names.index("vam")]["path"] == \
        (LIBVAM if rel.startswith("..") else rel)
    assert names == [a.name for a in allocators.available()]
    # where the run came from, as a study records it
    assert doc["record"]["command"][:2] == ["bench/corpus", "--size"] and doc["machine"]["load"]
    # the missing programs: named with their package, no row, no number
    assert set(doc["skipped"]) == {"jq", "lua5.4"}
    assert "not installed (Debian package jq)" in doc["skipped"]["jq"]
    assert "skipping jq" in cp.stderr and "skipping lua5.4" in cp.stderr
    assert set(doc["programs"]) == {"sort"} and doc["problems"] == []
    md = (out / "corpus.md").read_text()
    assert "Skipped: jq (" in md and "lua5.4 (" in md
    assert _bench_module().render_doc(doc) == md  # the JSON alone gives the report again
    table = md.split("\n\n")[1]  # the first table: each allocator's time over glibc's
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| program")]
    assert [r.split("|")[1].strip() for r in rows] == ["sort"]
    # the row is the compare's own runs: vam's time over glibc's in the one round
    summary = json.loads((out / "runs" / "sort" / "summary.json").read_text())
    # the A/A null's twin (mimalloc by default, else glibc) ran in the same compare, as its last cell
    twin = "mimalloc" if "mimalloc" in names else "glibc"
    assert doc["twin"] == twin and doc["programs"]["sort"]["times"][twin + "~again"]
    assert summary["meta"]["cache_method"] == "off"
    assert [a for _, a in summary["meta"]["cells"]] == [0] * (len(names) + 1)
    assert summary["cells"][-1]["allocator"].endswith("~again")
    # a peer given by path is named after its file by compare (libtcmalloc_minimal.so.4): cells by order
    t = [dict(c["program_s_runs"]) for c in summary["cells"]]
    cells = [c.strip() for c in rows[0].split("|")[2:-1]]
    assert cells[0] == f"{t[0][1]:.3f}" and len(cells) == len(names) + 1
    for i, name in enumerate(names[1:] + [twin + "~again"], 1):  # one round: no interval to speak of
        assert cells[i] == f"{t[i][1] / t[0][1]:.3f} [0.000–∞]", name


def test_a_variant_of_vam_runs_with_its_variables_beside_vam(tmp_path):
    """vam@VAR=VALUE is the build's libvam with VAR set: compare is given the library and the
    variables, and both cells are timed (given the library alone, compare saw vam twice and
    refused the run)."""
    _, out = _run_with_sort_alone(tmp_path, "--programs", "sort", "--allocators", "vam,vam@VAM_ORDER=fifo",
                                  "--twin", "none")
    doc = json.loads((out / "corpus.json").read_text())
    assert doc["problems"] == []
    assert [a["name"] for a in doc["allocator_info"]] == ["glibc", "vam", "vam@VAM_ORDER=fifo"]
    assert set(doc["programs"]["sort"]["times"]) == {"glibc", "vam", "vam@VAM_ORDER=fifo"}
    info = {a["name"]: a for a in doc["allocator_info"]}
    assert info["vam@VAM_ORDER=fifo"]["env"] == ["VAM_ORDER=fifo"] and "env" not in info["vam"]
    # compare timed the variant as its own cell, on the same library
    summary = json.loads((out / "runs" / "sort" / "summary.json").read_text())
    meta = {m["name"]: m for m in summary["meta"]["allocators"]}
    assert set(meta) == {"glibc", "vam", "vam@VAM_ORDER=fifo"}
    assert meta["vam@VAM_ORDER=fifo"]["path"] == meta["vam"]["path"] == LIBVAM


def test_an_allocator_is_spelled_for_compare_with_its_variables():
    spelled = _bench_module().spelled
    assert spelled(allocators.Allocator("glibc", None, "2.36")) == "glibc"
    assert spelled(allocators.Allocator("glibc@MALLOC_ARENA_MAX=1", None, "2.36", (("MALLOC_ARENA_MAX", "1"),))) \
        == "glibc@MALLOC_ARENA_MAX=1"
    assert spelled(allocators.Allocator("vam@A=1@B=2", "/x/libvam.so", "0.1", (("A", "1"), ("B", "2")))) \
        == "/x/libvam.so@A=1@B=2"
    assert spelled(allocators.Allocator("mimalloc", "/lib/libmimalloc.so.2", "2.0")) == "/lib/libmimalloc.so.2"


def test_geometric_mean_row_is_paired_by_round():
    mod = _bench_module()
    results = {"a": {"glibc_s": 1.0, "per_round": {"vam": {1: 0.5, 2: 0.6, 3: 0.55}}},
               "b": {"glibc_s": 2.0, "per_round": {"vam": {1: 2.0, 2: 1.5, 3: 1.8}}}}
    md = mod.report(["a", "b"], ["glibc", "vam"], results, 3)
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]] for r in md.splitlines()[2:]}
    per_round = [math.sqrt(0.5 * 2.0), math.sqrt(0.6 * 1.5), math.sqrt(0.55 * 1.8)]
    pr = stats.paired_ratio(per_round)
    assert rows["geometric mean"][1] == f"{pr.geomean:.3f} [{pr.low:.3f}–{pr.high:.3f}]"
    pa = stats.paired_ratio([0.5, 0.6, 0.55])
    assert rows["a"] == ["1.000", f"{pa.geomean:.3f} [{pa.low:.3f}–{pa.high:.3f}]"]
    assert pa.high < 1.0  # a clear lead shows as an interval below 1
    # a program an allocator has no runs of has no number
    results["b"]["per_round"] = {}
    md = mod.report(["a", "b"], ["glibc", "vam"], results, 3)
    assert "| b | 2.000 | – |" in md and "| geometric mean | – | – |" in md


def test_corpus_rejects_unknown_programs_and_keeps_out_the_studys():
    cp = subprocess.run([sys.executable, BENCH, "--programs", "jq,nope"], capture_output=True, text=True, timeout=30)
    assert cp.returncode == 2 and "nope" in cp.stderr
    # the study judges vam on these; its tuning corpus must not hold them
    mod = _bench_module()
    assert not {"gcc", "perl", "python3", "sqlite3"} & {mod.EXE.get(p, p) for p in mod.PROGRAMS}


@pytest.mark.parametrize("name", list(_bench_module().PROGRAMS))
def test_each_programs_generated_input_is_work_not_an_error(name, tmp_path):
    mod = _bench_module()
    cmd, why = mod.prepare(name, "quick", str(tmp_path))
    if cmd is None:
        pytest.skip(f"{name} is not measured here (the bench skips it too): {why}")
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr[-2000:]
    if name == "link-parser":
        assert "0 errors." in cp.stdout + cp.stderr and "Bye." in cp.stdout
    else:
        assert cp.stdout.strip(), cp.stderr[-2000:]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.stdout == cp.stdout  # the same input, the same output: compare checks it across allocators


# ---- the report from the JSON alone (made-up times: nothing here is measured)

def test_the_report_is_computed_again_from_the_times_alone():
    mod = _bench_module()
    doc = synthetic.corpus_doc()
    md = mod.render_doc(doc)
    jq = {a: [t for _, t in ts] for a, ts in doc["programs"]["jq"]["times"].items()}
    pr = stats.paired_ratio(v / g for v, g in zip(jq["vam"], jq["glibc"]))
    assert f"| jq | {stats.median(jq['glibc']):.3f} |" in md and f"{pr.geomean:.3f} [{pr.low:.3f}–{pr.high:.3f}]" in md
    # vam over the best peer: mimalloc on jq (behind in every round), glibc on sort
    vam = mod.blocks(doc)["vam"]
    best = stats.paired_ratio(v / m for v, m in zip(jq["vam"], jq["mimalloc"]))
    assert f"| jq | mimalloc | {best.geomean:.3f} [{best.low:.3f}–{best.high:.3f}] behind |" in vam
    assert "| sort | glibc |" in vam and "| geometric mean | mimalloc |" in vam
    assert all(b in md for b in mod.blocks(doc).values())
    assert "Run: commit 0123456789abcdef" in md and "Skipped: git (" in md and "- jq: `/usr/bin/jq jq.txt`" in md
    # one time changed: the report follows it
    doc["programs"]["jq"]["times"]["vam"][1][1] = 0.5
    assert mod.render_doc(doc) != md and mod.blocks(doc)["vam"] != vam
    # without vam there is no vam table; without glibc's runs a program has no row
    doc["allocator_info"] = doc["allocator_info"][:2]
    for p in doc["programs"].values():
        del p["times"]["vam"]
    assert set(mod.blocks(doc)) == {"glibc"}
    del doc["programs"]["jq"]["times"]["glibc"]
    assert "| jq |" not in mod.render_doc(doc)


def _corpus_run(tmp_path, doc, md=None):
    out = tmp_path / "out"
    out.mkdir(parents=True)
    (out / "corpus.json").write_text(json.dumps(doc))
    (out / "corpus.md").write_text(_bench_module().render_doc(doc) if md is None else md)
    return out


def test_report_renders_a_run_again_and_keep_keeps_it(tmp_path, capsys):
    mod = _bench_module()
    out = _corpus_run(tmp_path, synthetic.corpus_doc())
    want = (out / "corpus.md").read_text()
    capsys.readouterr()
    assert mod.main(["--report", str(out / "corpus.json"), "-o", str(tmp_path / "again")]) == 0
    assert capsys.readouterr().out == want and (tmp_path / "again" / "corpus.md").read_text() == want
    dest = tmp_path / "runs" / "NAME"
    assert mod.main(["--keep", str(dest), str(out)]) == 0
    assert sorted(os.listdir(dest)) == ["corpus.json.gz", "corpus.md"] and (dest / "corpus.md").read_text() == want
    for source in (dest, dest / "corpus.json.gz"):  # a kept run re-renders from its directory or its file
        capsys.readouterr()
        assert mod.main(["--report", str(source)]) == 0 and capsys.readouterr().out == want


def test_keep_refuses_a_run_that_does_not_re_render_or_has_no_clean_commit(tmp_path, capsys):
    mod = _bench_module()
    doc = synthetic.corpus_doc()
    edited = _corpus_run(tmp_path / "a", doc, md="| jq | 1.000 |\n")
    changed = _corpus_run(tmp_path / "b", dict(doc, record=dict(doc["record"], changed=True)))
    # a run written outside the checkout, or with a library from elsewhere, names this machine's
    # directories in its record; one inside it, or with the system's libraries, does not
    scratch = _corpus_run(tmp_path / "c", dict(doc, record=dict(doc["record"], command=[
        "bench/corpus", "--allocators", "glibc,/usr/lib/x/libjemalloc.so.2,vam@VAM_ORDER=fifo", "-o", "/scratch/c"])))
    elsewhere = _corpus_run(tmp_path / "d", dict(doc, record=dict(doc["record"], command=[
        "bench/corpus", "--allocators", "mimalloc,/scratch/libvam.so@VAM_ORDER=fifo", "-o", "out/d"])))
    for out, says in ((edited, "not what corpus.json renders"), (changed, "tree had changes"),
                      (scratch, "names /scratch/c, outside the checkout"),
                      (elsewhere, "names /scratch/libvam.so, outside the checkout")):
        assert mod.main(["--keep", str(tmp_path / "dest"), str(out)]) == 2
        assert says in capsys.readouterr().err and not os.path.exists(tmp_path / "dest")
    with pytest.raises(SystemExit):
        mod.main(["--keep", str(tmp_path / "dest")])
    assert "--keep DEST takes the run's directory" in capsys.readouterr().err


# ---- the A/A null: one allocator measured twice in every round (made-up times)

def _vam_rows(mod, doc):
    """The vam table's rows: program -> its cells after the name."""
    table = mod.blocks(doc)["vam"].splitlines()
    return {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:-1]] for r in table[2:]}


def test_the_twin_is_in_the_report_and_a_null_that_holds_1_leaves_vams_verdict():
    mod = _bench_module()
    doc = synthetic.corpus_twin_doc(1.0)
    md = mod.render_doc(doc)
    assert "A/A null: mimalloc runs a second time in every round as mimalloc~again" in md
    assert "excludes 1 the program is marked \"noisy: A/A excludes 1\"" in md  # the rule, stated
    assert "| program | best peer | A/A: mimalloc~again / mimalloc | vam / best peer |" in md
    assert "mimalloc~again / glibc" in mod.blocks(doc)["glibc"]   # measured, so shown
    rows = _vam_rows(mod, doc)
    jq = {a: [t for _, t in ts] for a, ts in doc["programs"]["jq"]["times"].items()}
    aa = stats.paired_ratio(x / y for x, y in zip(jq["mimalloc~again"], jq["mimalloc"]))
    assert not aa.clear
    assert rows["jq"][1] == f"{aa.geomean:.3f} [{aa.low:.3f}–{aa.high:.3f}] holds 1"
    assert rows["jq"][2].endswith(" behind") and rows["geometric mean"][1].endswith(" holds 1")
    # the vam cells are the ones the run without a twin gives, word and all
    plain = _vam_rows(mod, synthetic.corpus_doc())
    assert [r[0] for r in rows.values()] == [r[0] for r in plain.values()]
    assert [r[2] for r in rows.values()] == [r[1] for r in plain.values()]


def test_a_twin_far_from_its_original_marks_the_program_noisy_and_withholds_the_verdict():
    mod = _bench_module()
    rows = _vam_rows(mod, synthetic.corpus_twin_doc(2.0))
    for p in ("jq", "sort", "geometric mean"):
        assert rows[p][1].endswith(" noisy: A/A excludes 1"), rows[p]
        assert rows[p][2].endswith(" no verdict (noisy)"), rows[p]
        assert " behind" not in rows[p][2] and " tied" not in rows[p][2]


@pytest.mark.parametrize("twin", ["mimalloc", "glibc", "vam"])
def test_the_twin_is_never_the_best_peer_nor_judged_as_vam(twin):
    mod = _bench_module()
    doc = synthetic.corpus_twin_doc(0.3, twin=twin)   # the twin's runs the fastest of all
    rows = _vam_rows(mod, doc)
    assert all("~again" not in r[0] for r in rows.values())
    assert [r[0] for r in rows.values()] == [r[0] for r in _vam_rows(mod, synthetic.corpus_doc()).values()]
    head = mod.blocks(doc)["vam"].splitlines()[0]
    assert head.count("/ best peer") == 1 and f"A/A: {twin}~again / {twin}" in head


def test_a_run_without_a_twin_says_so_and_one_from_before_renders_as_it_did():
    mod = _bench_module()
    before = mod.render_doc(synthetic.corpus_doc())
    assert "A/A" not in before
    off = dict(synthetic.corpus_doc(), twin=None)
    assert "No A/A null in this run (--twin none)" in mod.render_doc(off)
    assert mod.blocks(off) == mod.blocks(synthetic.corpus_doc())


def _fake_compare(calls):
    """bench/corpus's compare, made up: each cell's one run 0.5 s, the twin's cell named as
    `alloclab compare --twin` names it; CALLS gets each call's allocators and twin."""
    def compare(cmd, allocs, rounds, out, timeout, twin=None):
        calls.append(([a.name for a in allocs], twin))
        names = [a.name for a in allocs] + ([twin + "~again"] if twin else [])
        return {"meta": {"allocators": [{"name": a.name} for a in allocs]},
                "cells": [{"allocator": n, "ok": rounds, "runs": rounds,
                           "program_s_runs": [[k, 0.5] for k in range(1, rounds + 1)]} for n in names]}, None
    return compare


@pytest.mark.parametrize("asked,twin", [(None, "glibc"), ("glibc@CORPUS_PROBE=1", "glibc@CORPUS_PROBE=1"),
                                        ("none", None)])
def test_the_twin_is_recorded_in_the_json(tmp_path, monkeypatch, capsys, asked, twin):
    mod = synthetic.bench("corpus")
    calls = []
    monkeypatch.setattr(mod, "compare", _fake_compare(calls))
    out = tmp_path / "out"
    argv = ["--size", "quick", "--rounds", "2", "--programs", "sort", "--allocators", "glibc,glibc@CORPUS_PROBE=1",
            "-o", str(out)] + (["--twin", asked] if asked else [])
    assert mod.main(argv) == 0, capsys.readouterr().err
    doc = json.loads((out / "corpus.json").read_text())
    assert doc["twin"] == twin and calls == [(["glibc", "glibc@CORPUS_PROBE=1"], twin)]
    times = doc["programs"]["sort"]["times"]
    assert set(times) == {"glibc", "glibc@CORPUS_PROBE=1"} | ({twin + "~again"} if twin else set())
    md = (out / "corpus.md").read_text()
    assert mod.render_doc(doc) == md
    # no vam* here, so no verdict to read against the null: the twin is a column of the first table
    assert (f"| {twin}~again / glibc |" in md) if twin else ("~again" not in md)


def test_a_twin_that_is_not_run_is_refused(tmp_path, capsys):
    mod = _bench_module()
    assert mod.main(["--allocators", "glibc", "--twin", "jemalloc", "--programs", "sort",
                     "-o", str(tmp_path / "o")]) == 2
    assert "--twin 'jemalloc' is not one of the allocators run (glibc)" in capsys.readouterr().err
