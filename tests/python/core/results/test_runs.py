"""results.csv (core/results/runs.py): its one reader refuses other versions and reads back exactly
what its one writer wrote, for a comparison's rows and the study's."""

import csv
import json

import pytest

from conftest import make_row

from alloclab import LabError
from alloclab.core.levels import Level
from alloclab.core.results.runs import FORMAT, RowWriter, RunRow, StudyRow, columns, read_rows
from alloclab.core.results.summary import read_summary


def test_results_of_another_format_version_are_refused(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("run,allocator,adv,wall_s\n1,glibc,0,0.1\n")
    with pytest.raises(LabError, match="format version 0; this alloclab reads version 1"):
        read_rows(str(old))
    new = tmp_path / "new.csv"
    new.write_text("format_version,run,allocator\n7,1,glibc\n")
    with pytest.raises(LabError, match="format version 7.*newer"):
        read_rows(str(new))
    js = tmp_path / "s.json"
    js.write_text(json.dumps({"format_version": 2, "cells": []}))
    with pytest.raises(LabError, match="format version 2"):
        read_summary(str(js))


def _write(path, rows, row_type=RunRow):
    with open(path, "w", newline="") as f:
        w = RowWriter(f, row_type)
        for r in rows:
            w.write(r)


@pytest.mark.parametrize("row_type", [RunRow, StudyRow])
def test_a_row_reads_back_as_written(tmp_path, row_type):
    rows = [make_row(row_type, run=1, adv=3, multiplier=3.0, occupancy=0.66, seed=77, profile_sha256="ab",
                     wall_s=0.123457, program_inproc_s=0.1, exit_code=None, signal=11, status="crashed"),
            make_row(row_type, run=2, allocator="vam@VAM_ORDER=fifo", stdout_sha256="cd")]
    path = tmp_path / "results.csv"
    _write(path, rows, row_type)
    back = read_rows(str(path), row_type)
    assert back == rows and back[0].adv is Level.ADV_3 and back[1].seed is None
    assert back[0].key == "glibc/Adv_3" and not back[0].ok and back[1].ok


def test_the_columns_are_the_documented_ones_in_their_order(tmp_path):
    """docs/formats.md: format_version first; the study's program columns in front of the run's."""
    assert columns()[:4] == ["format_version", "run", "allocator", "adv"]
    assert columns()[-5:] == ["started_utc", "program_cpu_s", "private_dirty_kb", "lazyfree_kb", "anon_huge_kb"]
    assert columns(StudyRow)[:6] == ["format_version", "program", "workload", "variant", "kind", "origin"]
    assert columns(StudyRow)[6:] == columns()[1:] + ["stage", "custom_ops"]
    path = tmp_path / "results.csv"
    _write(path, [make_row(wall_s=1.5, seed=None, program_inproc_s=None)])
    with open(path, newline="") as f:
        cells = next(csv.DictReader(f))
    assert cells["format_version"] == str(FORMAT.version) and cells["wall_s"] == "1.500000"
    assert cells["seed"] == "" and cells["program_inproc_s"] == "" and cells["adv"] == "0"


def test_a_malformed_cell_is_named_with_its_line(tmp_path):
    path = tmp_path / "results.csv"
    _write(path, [make_row(), make_row(run=2)])
    text = path.read_text().replace("\n1,2,glibc", "\n1,two,glibc")
    path.write_text(text)
    with pytest.raises(LabError, match=r"line 3: column 'run': 'two'"):
        read_rows(str(path))


def test_a_results_file_from_before_the_new_columns_reads_them_empty(tmp_path):
    row = make_row(wall_s=2.0)
    cells = row.cells()
    for c in ("program_cpu_s", "private_dirty_kb", "lazyfree_kb", "anon_huge_kb"):
        del cells[c]
    path = tmp_path / "results.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(cells))
        w.writeheader()
        w.writerow(cells)
    back = read_rows(str(path))
    assert back[0].wall_s == 2.0 and back[0].program_cpu_s is None and back[0].lazyfree_kb is None
    # and the current version writes and reads them back exactly
    row.private_dirty_kb, row.lazyfree_kb, row.anon_huge_kb, row.program_cpu_s = 10, 20, 0, 1.5
    with open(path, "w", newline="") as f:
        w = RowWriter(f)
        w.write(row)
    assert read_rows(str(path))[0] == row


def test_a_study_file_from_before_the_stages_reads_stage_0(tmp_path):
    row = make_row(StudyRow, stage=2)
    cells = row.cells()
    assert cells["stage"] == "2"
    del cells["stage"]
    path = tmp_path / "results.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(cells))
        w.writeheader()
        w.writerow(cells)
    assert read_rows(str(path), StudyRow)[0].stage == 0


def test_custom_ops_reads_back_and_is_empty_in_a_study_file_from_before_it(tmp_path):
    """custom_ops, added within version 1: written and read back (0 is not empty), and a
    study file without the column reads it as None."""
    rows = [make_row(StudyRow, program="svn/custom", workload="svn", variant="custom", origin="real",
                     custom_ops=332293),
            make_row(StudyRow, run=2, program="svn/emulator", workload="svn", variant="emulator", origin="real",
                     custom_ops=0),
            make_row(StudyRow, run=3, program="gcc", workload="gcc", variant="real", origin="real")]
    path = tmp_path / "results.csv"
    _write(path, rows, StudyRow)
    with open(path, newline="") as f:
        cells = list(csv.DictReader(f))
    assert [c["custom_ops"] for c in cells] == ["332293", "0", ""]
    back = read_rows(str(path), StudyRow)
    assert back == rows and [r.custom_ops for r in back] == [332293, 0, None]
    old = tmp_path / "old.csv"
    with open(old, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[c for c in columns(StudyRow) if c != "custom_ops"])
        w.writeheader()
        for c in cells:
            del c["custom_ops"]
            w.writerow(c)
    assert [r.custom_ops for r in read_rows(str(old), StudyRow)] == [None, None, None]
