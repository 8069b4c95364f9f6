"""The study's files (core/results/findings.py): findings.json and verdicts.json read back as written;
a verdict's optional keys appear only with a value."""

import json

import pytest

from alloclab import LabError
from alloclab.core.results.findings import Findings, Verdict, read_findings, write_findings


def test_findings_and_verdicts_read_back_as_written(tmp_path):
    vs = [Verdict("a", "2026", "claim", "2%", measured=0.02, low=0.01, high=0.03, n=3, verdict="confirmed",
                  coverage=0.75),
          Verdict("b", "2002", "other", "x", note="not measured in this run")]
    f = Findings({"rq1": [{"workload": "w"}]}, vs, {"mode": "quick"})
    fpath, vpath = write_findings(f, str(tmp_path), "min-max", 0.75)
    back = read_findings(fpath)
    assert back.verdicts == vs and back.tables == f.tables and back.meta["format_version"] == 1
    doc = json.loads(open(vpath).read())
    assert doc["run"] == "quick" and doc["level"] == 0.75
    assert list(doc["verdicts"][0])[-1] == "coverage" and "coverage" not in doc["verdicts"][1]
    assert list(json.loads(open(fpath).read())) == ["tables", "verdicts", "meta"]


def test_findings_of_another_version_are_refused(tmp_path):
    p = tmp_path / "findings.json"
    p.write_text(json.dumps({"tables": {}, "verdicts": [], "meta": {"format_version": 2}}))
    with pytest.raises(LabError, match="findings format version 2; this alloclab reads version 1"):
        read_findings(str(p))
