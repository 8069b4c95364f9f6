"""`alloclab report DIR` (commands/report.py): a comparison's report drawn again from its files."""

import gzip
import json
import os

from conftest import compare_cli, run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))



def test_report_re_renders_from_the_summary(tmp_path):
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0
    html = tmp_path / "o" / "report.html"
    html.unlink()
    r = run_cli("report", str(tmp_path / "o"), "--export-markdown", str(tmp_path / "m.md"))
    assert r.returncode == 0, r.stderr
    assert html.exists() and (tmp_path / "m.md").exists()


def _a_study_dir(tmp_path):
    """A finished study's directory: the first kept run (docs/runs), decompressed."""
    runs = os.path.join(ROOT, "docs", "runs")
    name = sorted(n for n in os.listdir(runs) if os.path.exists(os.path.join(runs, n, "findings.json.gz")))[0]
    d = tmp_path / "study"
    d.mkdir()
    for f in os.listdir(os.path.join(runs, name)):
        with gzip.open(os.path.join(runs, name, f), "rb") as z:
            (d / f[:-3]).write_bytes(z.read())
    return d


def test_a_study_kept_and_re_rendered_elsewhere_gives_its_verdicts_again(tmp_path):
    d = _a_study_dir(tmp_path)
    r = run_cli("report", str(d), "--keep", str(tmp_path / "kept"))
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path / "kept")) == ["findings.json.gz", "results.csv.gz", "verdicts.json.gz"]
    r = run_cli("report", str(tmp_path / "kept"), "-o", str(tmp_path / "again"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "again" / "report.html").exists()
    assert json.loads((tmp_path / "again" / "verdicts.json").read_text()) == \
        json.loads((d / "verdicts.json").read_text())
    assert sorted(os.listdir(tmp_path / "kept")) == ["findings.json.gz", "results.csv.gz", "verdicts.json.gz"]


def test_a_kept_run_is_not_re_rendered_into_itself(tmp_path):
    d = _a_study_dir(tmp_path)
    assert run_cli("report", str(d), "--keep", str(tmp_path / "kept")).returncode == 0
    r = run_cli("report", str(tmp_path / "kept"))
    assert r.returncode == 2 and "-o OUT" in r.stderr
    assert len(os.listdir(tmp_path / "kept")) == 3


def test_keep_refuses_a_directory_holding_other_files(tmp_path):
    d = _a_study_dir(tmp_path)
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = run_cli("report", str(d), "--keep", str(other))
    assert r.returncode == 2 and "holds other files" in r.stderr
    assert os.listdir(other) == ["notes.txt"]


def test_keep_refuses_a_comparison(tmp_path):
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0
    r = run_cli("report", str(tmp_path / "o"), "--keep", str(tmp_path / "k"))
    assert r.returncode == 2 and "not a study" in r.stderr
    assert not (tmp_path / "k").exists()
