"""The study end to end: `alloclab study --quick` runs every workload variant
the catalog lists, profiles each program once and litters all its variants
with that profile, and writes a verdict per claim, the report and the raw
results (experiments/study/run.py, outputs.py)."""

import csv
import dataclasses
import hashlib
import json

import pytest

from conftest import run_cli

from alloclab.experiments import workloads
from alloclab.experiments.study.outputs import rerender
from alloclab.experiments.study.verdicts import claims, rules


SECTIONS = ["verdicts", "rq1", "rq2", "rq3", "reaps", "general", "memory", "stats", "setup"]


VERDICT_KEYS = {"id", "paper", "claim", "paper_value", "measured", "low", "high", "n", "verdict", "rule"}


@pytest.fixture(scope="module")
def quick_study(tmp_path_factory, libdir):
    out = tmp_path_factory.mktemp("study")
    cp = run_cli("study", "--quick", "--allocators", "glibc,mimalloc", "-o", str(out), timeout=900)
    rows = []
    if (out / "results.csv").exists():
        with open(out / "results.csv") as f:
            rows = list(csv.DictReader(f))
    return cp, out, rows


def test_the_quick_study_runs_and_writes_report_csv_verdicts_and_findings(quick_study):
    cp, out, _ = quick_study
    assert cp.returncode == 0, cp.stderr[-3000:]
    for f in ("report.html", "results.csv", "findings.json", "verdicts.json"):
        assert (out / f).is_file(), f
    # the verdicts on standard output, a smoke run said to be one, the programs' output apart
    assert "Verdicts (the papers' claims on this machine)" in cp.stdout
    assert "Verdicts (the papers' claims" not in cp.stderr
    assert cp.stdout.startswith("A smoke run (--quick")
    verdicts = json.loads((out / "verdicts.json").read_text())
    load = verdicts["machine"]["load"]
    assert 0 <= load["others_share"] <= 1 and isinstance(load["busy"], bool) and load["cpus"] >= 1
    # the run record: the command as typed, the tree, when
    rec = json.loads((out / "findings.json").read_text())["meta"]["record"]
    assert rec["command"] == ["alloclab", "study", "--quick", "--allocators", "glibc,mimalloc", "-o", str(out)]
    assert rec["alloclab"] and rec["started"] <= rec["finished"]
    assert rec["commit"] is None or len(rec["commit"]) == 40
    phases = json.loads((out / "findings.json").read_text())["meta"]["phases_s"]
    assert {"matrix", "stages", "weights", "cache", "memory"} <= set(phases)
    assert all(s >= 0 for s in phases.values()) and phases["matrix"] > 0


def test_every_program_is_littered_with_its_one_profile(quick_study):
    """2026 §3: one profile per program, from its naive variant, for every
    variant and allocator. Fails if any variant is littered with another."""
    _, out, rows = quick_study
    by_workload = {}
    for r in rows:
        if r["adv"] == "0":
            assert r["profile_sha256"] == "", r      # nothing littered a clean run
            continue
        by_workload.setdefault(r["workload"], set()).add(r["profile_sha256"])
    assert {"interp", "mempool_iter", "python3", "sqlite3"} <= set(by_workload)
    for w, shas in by_workload.items():
        assert len(shas) == 1, (w, shas)
        want = hashlib.sha256((out / "profiles" / f"{w}.json").read_bytes()).hexdigest()
        assert shas == {want}, w
    # the custom variants were littered as much as the naive ones
    variants_littered = {(r["workload"], r["variant"]) for r in rows if r["adv"] != "0"}
    assert ("mempool_iter", "custom") in variants_littered and ("interp", "custom") in variants_littered


def test_repeats_litter_with_their_own_seed_shared_by_the_variants(quick_study):
    _, _, rows = quick_study
    littered = [r for r in rows if r["adv"] != "0" and r["status"] == "ok"]
    seeds = {}
    for r in littered:
        seeds.setdefault(r["repeat"], set()).add(r["seed"])
    assert len(seeds) == 2                                   # quick mode: two repeats
    assert all(len(s) == 1 for s in seeds.values())          # one seed per repeat, every program and allocator
    assert len({next(iter(s)) for s in seeds.values()}) == 2  # different seeds across repeats


def test_every_catalog_variant_and_the_real_programs_ran(quick_study):
    _, _, rows = quick_study
    seen = {(r["workload"], r["variant"]) for r in rows}
    for w in workloads.CATALOG:
        for v in workloads.accepted_variants(w.name):
            if v in ("malloc", "custom", "reap"):
                assert (w.name, v) in seen, (w.name, v)
    for prog, naive in (("python3", "malloc"), ("sqlite3", "malloc"), ("svn", "emulator"),
                        ("gst-launch", "malloc")):
        assert {(prog, "custom"), (prog, naive)} <= seen
    kinds = {r["workload"]: r["kind"] for r in rows}
    assert kinds["mempool_iter"] == "hybrid" and kinds["xalloc_parser"] == "hybrid"
    bad = [r for r in rows if r["status"] != "ok"]
    assert not bad, bad[:3]
    assert {r["allocator"] for r in rows} == {"glibc", "mimalloc", "glibc~again"}
    assert {r["adv"] for r in rows} == {"0", "3"}
    # the null: every timed program's glibc cells again, in the same rounds: the clean one, and the
    # Adv_3 one on the same littered heap (the seed of glibc's own Adv_3 run in that round)
    twins = [r for r in rows if r["allocator"] == "glibc~again"]
    assert {r["adv"] for r in twins} == {"0", "3"}
    littered = {r["program"] for r in rows if r["adv"] == "3" and r["allocator"] != "glibc~again"}
    assert {r["program"] for r in twins} == {r["program"] for r in rows if r["adv"] == "3"} == littered
    assert {r["program"] for r in twins if r["adv"] == "3"} == littered
    own = {(r["program"], r["stage"], r["repeat"]): r["seed"] for r in rows
           if r["allocator"] == "glibc" and r["adv"] == "3"}
    assert own and all(own[(r["program"], r["stage"], r["repeat"])] == r["seed"]
                       for r in twins if r["adv"] == "3")
    assert all(r["program_cpu_s"] for r in rows if r["status"] == "ok")
    assert all(r["program_inproc_s"] for r in rows if r["workload"] != "gcc")


def test_custom_ops_shows_each_real_allocator_on_and_off(quick_study):
    """Every row of a real program's custom variant counts the requests its own allocator served
    (> 0), every row of its naive variant counts 0, and programs without one leave it empty."""
    _, _, rows = quick_study
    ops = {}
    for r in rows:
        ops.setdefault((r["workload"], r["variant"]), set()).add(r["custom_ops"])
    for w in ("python3", "sqlite3", "svn", "gst-launch"):
        custom = ops[(w, "custom")]
        naive = ops[(w, "emulator" if w == "svn" else "malloc")]
        assert all(v and int(v) > 0 for v in custom) and naive == {"0"}, (w, custom, naive)
    assert ops[("gcc", "real")] == {""} and ops[("interp", "custom")] == {""}


def test_verdicts_have_the_schema_and_rq3_covers_the_hybrids(quick_study):
    _, out, _ = quick_study
    vs = json.loads((out / "verdicts.json").read_text())["verdicts"]
    assert len(vs) >= 15
    for v in vs:
        assert VERDICT_KEYS <= set(v), v
        assert v["verdict"] in rules.VERDICTS
        if v["n"]:
            assert v["low"] <= v["measured"] <= v["high"]
    res = next(v for v in vs if v["id"] == "rq3-resilient")
    assert "mempool_iter" in res["what"] and "xalloc_parser" in res["what"]
    # two runs per cell in quick mode: timed claims carry a real spread, their null and the measure
    timed_ids = {c.id for c in claims.CLAIMS if c.null}
    timed = [v for v in vs if v["n"] == 2 and v["id"] in timed_ids]
    assert len(timed) >= 10
    for v in timed:
        assert v["measure"] == "program_cpu_s" and len(v["null"]) == 2 and v["noise_floor"] >= 0, v
    assert all("null" not in v and "measure" not in v for v in vs if v["spread"].startswith("exact"))


def test_the_report_opens_with_the_verdict_table_and_has_every_section(quick_study):
    _, out, _ = quick_study
    doc = (out / "report.html").read_text()
    for s in SECTIONS:
        assert f"id='{s}'" in doc, s
    assert doc.index("id='verdicts'") < doc.index("id='rq1'")
    assert doc.count("data:image/png;base64,") >= 4
    assert "min-max of" in doc and "effect over" in doc


def test_the_server_footprint_shows_reaps_freeing_what_regions_keep(quick_study):
    _, out, _ = quick_study
    fp = json.loads((out / "findings.json").read_text())["tables"]["server_footprint"]
    assert fp["reap"] < fp["custom"]


def test_report_rerenders_from_the_saved_findings(quick_study, tmp_path):
    _, out, _ = quick_study
    import shutil
    copy = tmp_path / "again"
    shutil.copytree(out, copy)
    (copy / "report.html").unlink()
    path = rerender(str(copy))
    assert "id='verdicts'" in open(path).read()
    # the same data and rules give the same tables and verdicts
    before, after = (json.loads((d / "findings.json").read_text()) for d in (out, copy))
    assert after["verdicts"] == before["verdicts"]
    assert after["tables"] == before["tables"]


def test_a_rerender_applies_the_current_rules_to_the_saved_rows(quick_study, tmp_path, monkeypatch):
    """Verdicts are computed, not stored: a report re-rendered after a rule changed shows the
    new rule's verdict on the same measurements (and rewrites verdicts.json to match)."""
    _, out, _ = quick_study
    import shutil
    copy = tmp_path / "again"
    shutil.copytree(out, copy)
    old = {v["id"]: v for v in json.loads((out / "verdicts.json").read_text())["verdicts"]}
    # a claim the rules judged (the timed ones have two runs here, too few for a verdict)
    measured = [i for i, c in enumerate(claims.CLAIMS)
                if old[c.id]["n"] and old[c.id].get("coverage", 0) >= rules.LEVEL]
    assert measured, "the quick study judged no claim"
    i = measured[0]
    claim = claims.CLAIMS[i]
    # a rule that turns this claim's verdict around: nothing is at most -1e9, everything at most 1e9
    flip, expect = ((rules.AtMost(1e9), "confirmed") if old[claim.id]["verdict"] == "refuted"
                    else (rules.AtMost(-1e9), "refuted"))
    changed = list(claims.CLAIMS)
    changed[i] = dataclasses.replace(claim, rule=flip)
    monkeypatch.setattr(claims.evaluate, "__defaults__", (tuple(changed), (), 1))
    rerender(str(copy))
    vs = {v["id"]: v for v in json.loads((copy / "verdicts.json").read_text())["verdicts"]}
    assert vs[claim.id]["measured"] == old[claim.id]["measured"]
    assert vs[claim.id]["verdict"] == expect
    assert expect in (copy / "verdicts.md").read_text()


def test_an_unknown_allocator_is_refused(tmp_path):
    cp = run_cli("study", "--quick", "--allocators", "glibc,nosuchmalloc", "-o", str(tmp_path))
    assert cp.returncode != 0
    assert "nosuchmalloc" in cp.stderr


def test_the_memory_section_measures_drag_fragmentation_and_pages(quick_study):
    _, out, _ = quick_study
    mem = json.loads((out / "findings.json").read_text())["tables"]["memory"]
    assert {(d["workload"], d["variant"]) for d in mem["drag"]} >= {("server", "reap"), ("compiler", "reap")}
    for d in mem["drag"]:
        assert d["total_drag"] >= 1.0 and d["peak_bytes_actual"] >= d["peak_bytes_immediate"] > 0
    assert set(mem["pages"]) == {"glibc", "mimalloc"}
    assert all(f["fragmentation"] > 0 for f in mem["frag"])


def test_two_runs_give_the_timed_claims_no_verdict_and_say_why(quick_study):
    """--quick makes two runs: a timed claim's interval is set against its null (two repeats
    against two null values: min-max of the four ratios holds the effect over the null with
    probability 2/3; one without a null or within a margin, min-max of two holds the median half the
    time), under the
    0.75 a verdict needs. Exact instruments are judged all the same."""
    _, out, _ = quick_study
    doc = json.loads((out / "verdicts.json").read_text())
    assert doc["level"] == rules.LEVEL
    timed = [v for v in doc["verdicts"] if v["n"] == 2]
    assert timed, "no timed claim was measured"
    for v in timed:
        assert v["verdict"] == "inconclusive" and "3 runs" in v["note"], v
        if v["spread"].startswith("min-max of the 4 ratios of 2 repeats to 2 null values"):
            assert v.get("null") and abs(v["coverage"] - 2 / 3) < 1e-9, v
        else:   # no null, or a claim within a margin: the median's interval
            assert v["coverage"] == 0.5 and v["spread"].startswith("min-max of 2 repeats"), v
    exact = [v for v in doc["verdicts"] if v["n"] and v["spread"].startswith("exact")]
    assert exact and all(v["coverage"] == 1.0 for v in exact)
    assert any(v["verdict"] != "inconclusive" for v in exact)


def test_a_workloads_variants_run_round_by_round(quick_study):
    """Round r of every variant of a workload runs before round r + 1 of any: a ratio between two
    variants is taken between runs made close together, not a whole matrix apart."""
    _, _, rows = quick_study
    first = [r for r in rows if r["stage"] in ("", "0")]
    by_workload: dict = {}
    for r in first:                          # results.csv holds the runs in the order they ended
        by_workload.setdefault(r["workload"], []).append((int(r["repeat"]), r["variant"]))
    several = 0
    for w, seq in by_workload.items():
        reps = [k for k, _ in seq]
        assert reps == sorted(reps), (w, reps)
        if len({v for _, v in seq}) > 1:
            several += 1
            # each round holds every variant
            assert {v for k, v in seq if k == 1} == {v for k, v in seq if k == reps[-1]}, w
    assert several >= 5
