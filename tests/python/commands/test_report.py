"""`alloclab report DIR` (commands/report.py): a comparison's report drawn again from its files."""

from conftest import compare_cli, run_cli



def test_report_re_renders_from_the_summary(tmp_path):
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0
    html = tmp_path / "o" / "report.html"
    html.unlink()
    r = run_cli("report", str(tmp_path / "o"), "--export-markdown", str(tmp_path / "m.md"))
    assert r.returncode == 0, r.stderr
    assert html.exists() and (tmp_path / "m.md").exists()
