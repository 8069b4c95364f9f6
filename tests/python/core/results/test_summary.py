"""summary.json and the JSON export (core/results/summary.py): the typed summary reads back as written,
keeps what a newer alloclab of the same version adds, and reads a summary written before a key existed."""

import json

import pytest

from conftest import make_cell, make_row, make_summary

from alloclab import LabError
from alloclab.core.levels import Level
from alloclab.core.results.summary import KIND_EXPORT, KIND_SUMMARY, read_summary, write_export, write_summary


def test_a_summary_reads_back_as_written(tmp_path):
    s = make_summary(make_cell("glibc", 0, 1.0, 0.9, 1.1, program_s_runs=[[1, 1.0]], cache={"d1_misses": 3}),
                     make_cell("vam", 3, 0.8, 0.7, 0.9), cells=[["glibc", Level.ADV_0], ["vam", Level.ADV_3]],
                     skipped={"cells": [["vam", 3]], "reason": "why"})
    write_summary(s, str(tmp_path))
    data = json.loads((tmp_path / "summary.json").read_text())
    assert (data["format_version"], data["kind"]) == (1, KIND_SUMMARY) and list(data)[2:] == [
        "meta", "cells", "stdout_reference", "stdout_differs", "rows"]
    assert "cache_results" not in data["meta"]            # left out when it has no value, as before
    back = read_summary(str(tmp_path / "summary.json"))
    assert back == s and back.cells[1].adv is Level.ADV_3 and back.baseline is back.cells[0]
    assert data["cells"][0]["program_s"] == {"median": 1.0, "min": 0.9, "max": 1.1, "mean": 1.0, "n": 5}


def test_keys_a_newer_alloclab_adds_are_kept_and_keys_an_older_one_lacked_take_defaults(tmp_path):
    write_summary(make_summary(make_cell("glibc", 0, 1.0, 0.9, 1.1)), str(tmp_path))
    path = tmp_path / "summary.json"
    data = json.loads(path.read_text())
    data["meta"]["later"] = 7
    data["cells"][0]["new_column"] = "x"
    del data["cells"][0]["program_s_runs"]                 # written before runs were kept by round
    path.write_text(json.dumps(data))
    s = read_summary(str(path))
    assert s.meta.extra == {"later": 7} and s.cells[0].extra == {"new_column": "x"}
    assert s.cells[0].program_s_runs == []
    write_summary(s, str(tmp_path))
    again = json.loads(path.read_text())
    assert again["meta"]["later"] == 7 and again["cells"][0]["new_column"] == "x"


def test_the_export_holds_every_run_as_its_text_and_reads_back_as_the_summary(tmp_path):
    s = make_summary(make_cell("glibc", 0, 1.0, 0.9, 1.1))
    path = write_export(s, [make_row(run=1), make_row(run=2)], str(tmp_path / "e.json"))
    data = json.loads(open(path).read())
    assert data["kind"] == KIND_EXPORT and [r["run"] for r in data["runs"]] == ["1", "2"]
    assert read_summary(path) == s


def test_a_file_that_is_no_summary_is_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"format_version": 1}))
    with pytest.raises(LabError, match="not an alloclab comparison summary"):
        read_summary(str(p))
    p.write_text(json.dumps({"cells": []}))
    with pytest.raises(LabError, match="format version 0"):
        read_summary(str(p))
