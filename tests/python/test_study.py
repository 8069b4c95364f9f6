"""The study end to end: `alloclab study --quick` runs every workload variant
it finds and writes a report with every section, findings computed from the
run, and the raw results."""

import csv
import json
import os
import re

import pytest

from conftest import ROOT, run_cli

SECTIONS = ["findings", "rq1", "rq2", "rq3", "reaps", "general", "memory", "stats", "setup"]
WORKLOADS = ["boxed_sim", "mempool_iter", "compiler", "interp", "xalloc_parser", "server", "gp_mix"]


@pytest.fixture(scope="module")
def quick_study(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("study")
    cp = run_cli("study", "--quick", "--allocators", "glibc,mimalloc", "-o", str(out), timeout=900)
    return cp, out


def test_the_quick_study_runs_and_writes_report_csv_and_findings(quick_study):
    cp, out = quick_study
    assert cp.returncode == 0, cp.stderr[-3000:]
    for f in ("report.html", "results.csv", "findings.json"):
        assert (out / f).is_file(), f


def test_the_report_has_every_section_and_embedded_figures(quick_study):
    _, out = quick_study
    doc = (out / "report.html").read_text()
    for s in SECTIONS:
        assert f"id='{s}'" in doc, s
    assert doc.count("data:image/png;base64,") >= 4


def test_every_workload_and_variant_was_run_and_succeeded(quick_study):
    _, out = quick_study
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    seen = {(r["workload"], r["variant"]) for r in rows}
    for w in WORKLOADS:
        variants = ("malloc", "reap") if w == "gp_mix" else ("custom", "reap", "malloc")
        for v in variants:
            assert (w, v) in seen, (w, v)
    bad = [r for r in rows if r["status"] != "ok"]
    assert not bad, bad[:3]
    assert {r["allocator"] for r in rows} == {"glibc", "mimalloc"}
    assert {r["adv"] for r in rows} == {"0", "3"}


def test_findings_are_sentences_with_numbers_from_this_run(quick_study):
    cp, out = quick_study
    data = json.loads((out / "findings.json").read_text())
    questions = {f["question"] for f in data["findings"]}
    assert {"RQ1", "RQ2", "RQ3", "reaps", "general", "drag", "fragmentation", "pages"} <= questions
    for f in data["findings"]:
        assert re.search(r"\d", f["text"]), f
    # the terminal summary repeats them
    assert "Findings:" in cp.stderr


def test_the_server_footprint_shows_reaps_freeing_what_regions_keep(quick_study):
    _, out = quick_study
    fp = json.loads((out / "findings.json").read_text())["tables"]["server_footprint"]
    assert fp["reap"] < fp["custom"]


def test_an_unknown_allocator_is_refused(tmp_path):
    cp = run_cli("study", "--quick", "--allocators", "glibc,nosuchmalloc", "-o", str(tmp_path))
    assert cp.returncode != 0
    assert "nosuchmalloc" in cp.stderr


def test_the_report_has_a_drag_table_and_a_pages_figure(quick_study):
    _, out = quick_study
    mem = json.loads((out / "findings.json").read_text())["tables"]["memory"]
    assert {(d["workload"], d["variant"]) for d in mem["drag"]} >= {("server", "reap"), ("compiler", "malloc")}
    for d in mem["drag"]:
        assert d["total_drag"] >= 1.0 and d["peak_bytes_actual"] >= d["peak_bytes_immediate"] > 0
    assert set(mem["pages"]) == {"glibc", "mimalloc"}
    assert {(f["allocator"], f["adv"]) for f in mem["frag"]} == {(a, l) for a in ("glibc", "mimalloc")
                                                                 for l in ("Adv_0", "Adv_3")}
    assert all(f["fragmentation"] > 0 for f in mem["frag"])
    assert "page miss curves" in (out / "report.html").read_text()
