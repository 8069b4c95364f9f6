"""The stand-ins' calibration: the band at its edges, the table drawn from a calibration file,
the check that fails when a stand-in's arguments change without the calibration being remade,
and the file kept in the repository."""

import json
import os

import pytest

from alloclab import LabError
from alloclab.core.results.findings import Findings
from alloclab.experiments import workloads
from alloclab.experiments.study import calibration as cal
from alloclab.experiments.study.report import write_report


def _row(workload="interp", program="mudlle", share=None, live=None, seconds=1.0, w=None):
    paper = workloads.PAPER_TABLE3[program]
    return {"workload": workload, "paper_program": program,
            "arguments": cal.arguments(w or workloads.find(workload)),
            "fingerprint": cal.fingerprint(w or workloads.find(workload)),
            "memops_share": paper["memops_share"] * (share if share is not None else 1.0),
            "max_live": round(paper["max_live"] * (live if live is not None else 1.0)),
            "seconds": seconds, "paper_share": paper["memops_share"], "paper_max_live": paper["max_live"]}


def _doc(rows):
    return {"format_version": 1, "commit": "abc123", "command": "scripts/calibrate", "scale": "0.5",
            "method": "cachegrind cycle estimate", "standins": rows}


@pytest.mark.parametrize("ratio, factor, inside", [
    (1.5, 1.5, True), (1 / 1.5, 1.5, True), (1.5001, 1.5, False), (0.6666, 1.5, False), (1.0, 1.5, True),
    (2.0, 2.0, True), (0.5, 2.0, True), (2.0001, 2.0, False), (0.4999, 2.0, False), (None, 2.0, None)])
def test_the_band_includes_its_edges_and_nothing_beyond(ratio, factor, inside):
    assert cal.within(ratio, factor) is inside


def test_a_row_is_in_band_only_on_all_three_measures():
    (row,) = cal.table(_doc([_row(share=1.49, live=0.51, seconds=0.2)]))
    assert row["in_band"] and row["why"] == []
    (row,) = cal.table(_doc([_row(share=1.51)]))
    assert not row["in_band"] and "time share 1.51x" in row["why"][0]
    (row,) = cal.table(_doc([_row(live=0.49)]))
    assert not row["in_band"] and "max live 0.49x" in row["why"][0]
    (row,) = cal.table(_doc([_row(seconds=0.19)]))
    assert not row["in_band"] and "under 0.2 s" in row["why"][0]


def test_a_flagged_stand_in_says_why_it_is_out_of_band(monkeypatch):
    monkeypatch.setitem(cal.FLAGS, "interp", "its reason")
    (row,) = cal.table(_doc([_row(live=10)]))
    assert not row["in_band"] and row["why"][-1] == "its reason"
    (row,) = cal.table(_doc([_row()]))
    assert row["in_band"] and row["why"] == []   # a flag says nothing of a stand-in in band


def test_the_fingerprint_changes_with_the_arguments_the_study_passes():
    w = workloads.find("interp")
    bigger = workloads.Workload(**{**w.__dict__, "size": 2.0})
    livelier = workloads.Workload(**{**w.__dict__, "live": 3.0})
    other = workloads.Workload(**{**w.__dict__, "paper_program": "lcc"})
    prints = {cal.fingerprint(x) for x in (w, bigger, livelier, other)}
    assert len(prints) == 4
    assert "--live" in cal.arguments(livelier) and "--live" not in cal.arguments(w)
    assert cal.arguments(bigger)[-1] == f"{float(cal.CALIBRATION_SCALE) * 2:g}"


def test_a_row_measured_with_other_arguments_is_stale(monkeypatch):
    rows = [_row(workload=w.name, program=w.paper_program) for w in cal.standins()]
    assert cal.stale(_doc(rows)) == []
    w = workloads.find("interp")
    changed = workloads.Workload(**{**w.__dict__, "live": 2.0})
    monkeypatch.setattr(workloads, "CATALOG", tuple(changed if x.name == "interp" else x
                                                    for x in workloads.CATALOG))
    assert [s.split(":")[0] for s in cal.stale(_doc(rows))] == ["interp"]
    assert [s.split(":")[0] for s in cal.stale(_doc(rows[1:]))][0] == rows[0]["workload"]


def test_the_kept_calibration_matches_the_catalog():
    """Fails when a stand-in's arguments (its size, its --live, its paper program) change and
    workloads/calibration.json is not remade (scripts/calibrate)."""
    doc = cal.load()
    assert doc is not None, "workloads/calibration.json is missing: run scripts/calibrate"
    assert cal.stale(doc) == []
    assert {r["workload"] for r in doc["standins"]} == {w.name for w in cal.standins()}
    for row in cal.table(doc):
        assert row["in_band"] or row["workload"] in cal.FLAGS, \
            f"{row['workload']} is out of band and not flagged: {row['why']}"


def test_a_calibration_file_of_another_version_is_refused(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({**_doc([]), "format_version": 99}))
    with pytest.raises(LabError, match="calibration format version 99"):
        cal.load(str(path))
    notes = []
    assert cal.report(notes, str(path)) == {} and "calibration not shown" in notes[0]
    assert cal.load(str(tmp_path / "none.json")) is None


def test_the_report_shows_the_calibration_table(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(_doc([_row(), _row(workload="xalloc_parser", program="197.parser", live=0.05)])))
    tables = {"calibration": cal.report([], str(path)), "alloc_stats": {"interp": {"max_live": 41234}}}
    meta = {"format_version": 1, "mode": "default", "allocators": ["glibc"], "advs": [0], "repeat": 3,
            "seed": 42, "scale": "0.5", "programs": [], "elapsed_s": 1.0, "notes": [], "allocator_info": [],
            "machine": {}}
    html = open(write_report(Findings(tables, [], meta), str(tmp_path))).read()
    assert "Calibration: the stand-ins against their paper programs" in html
    assert "197.parser" in html and "41.8%" in html and "230,919" in html and "41,234" in html
    assert "in band" in html and "flagged: max live 0.05x" in html
    assert "scripts/calibrate" in html and "abc123" in html
