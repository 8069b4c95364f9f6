"""A comparison's exports (experiments/compare/files.py): JSON, Markdown and a copy of
results.csv."""

import json


from conftest import compare_cli

from alloclab.core.results.runs import read_rows
from alloclab.core.results.summary import FORMAT, read_summary


def test_exports(tmp_path):
    j, m, c = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.csv"
    r = compare_cli(tmp_path, "--runs", "2", "--export-json", str(j), "--export-markdown", str(m), "--export-csv",
                 str(c), "--", "true")
    assert r.returncode == 0, r.stderr
    data = json.loads(j.read_text())
    assert data["format_version"] == FORMAT.version and data["kind"] == "alloclab-compare"
    assert [x["run"] for x in data["runs"]] == ["1", "2"]
    assert data["cells"][0]["ok"] == 2
    assert data["cells"][0]["program_s_ratio_spread"] == {"median": 1.0, "min": 1.0, "max": 1.0, "mean": 1.0, "n": 2}
    runs = data["cells"][0]["program_s_runs"]                # each round's time, for paired verdicts
    assert [k for k, _ in runs] == [1, 2] and all(t > 0 for _, t in runs)
    assert runs == sorted([int(x["repeat"]), float(x["program_s"])] for x in data["runs"])
    md = m.read_text()
    assert md.startswith("| allocator | level |") and "| glibc | Adv_0 | 2/2 |" in md
    assert read_rows(str(c)) == read_rows(str(tmp_path / "o" / "results.csv"))
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["kind"] == "alloclab-compare-summary"
    assert read_summary(str(j)).cells[0].program_s_runs == runs   # the export reads back as the summary
