"""An output directory is replaced only by a run that produced results (commands/outputs.py):
never cut to a header by a run that stopped at start-up, never mixed with an older run's files."""

import os

from conftest import compare_cli, csv_rows


def _earlier(tmp_path, runs="3"):
    r = compare_cli(tmp_path, "--runs", runs, "--", "true")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "o"
    (out / "old-plot.png").write_bytes(b"png of the earlier run")
    return out, len(csv_rows(out)), (out / "summary.json").read_bytes()


def test_a_run_that_stops_at_start_up_leaves_the_earlier_results_whole(tmp_path):
    out, n, summary = _earlier(tmp_path)
    r = compare_cli(tmp_path, "--runs", "2", "--setup", "false", "--", "true")
    assert r.returncode == 2 and "keeps the earlier run's results" in r.stderr, r.stderr
    assert len(csv_rows(out)) == n and (out / "summary.json").read_bytes() == summary
    assert (out / "old-plot.png").exists()
    assert not [p for p in os.listdir(tmp_path) if ".previous-" in p]


def test_a_run_where_every_run_fails_goes_beside_and_the_earlier_stays(tmp_path):
    out, n, summary = _earlier(tmp_path)
    r = compare_cli(tmp_path, "--runs", "2", "--", "false")
    assert r.returncode == 1, r.stderr
    assert f"this run's files are in {out}.failed" in r.stderr, r.stderr
    assert len(csv_rows(out)) == n and (out / "summary.json").read_bytes() == summary
    failed = tmp_path / "o.failed"
    assert [row["status"] for row in csv_rows(failed)] == ["failed", "failed"]
    assert not (failed / "old-plot.png").exists()


def test_a_run_with_results_replaces_the_earlier_one_whole(tmp_path):
    out, n, _ = _earlier(tmp_path)
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0, r.stderr
    assert len(csv_rows(out)) == 1 and not (out / "old-plot.png").exists()
    assert not [p for p in os.listdir(tmp_path) if ".previous-" in p or p.endswith(".failed")]


def test_a_profile_read_from_the_directory_being_replaced_is_still_read(tmp_path, libdir):
    r = compare_cli(tmp_path, "--runs", "1", "--adv", "0,1", "--", "true")
    assert r.returncode == 0, r.stderr
    prof = tmp_path / "o" / "profile.json"
    before = prof.read_bytes()
    r = compare_cli(tmp_path, "--runs", "1", "--adv", "0,1", "--profile", str(prof), "--", "true")
    assert r.returncode == 0, r.stderr
    assert prof.read_bytes() == before


def test_a_directory_the_lab_did_not_write_is_never_moved_or_deleted(tmp_path):
    mine = tmp_path / "project"
    (mine / "src").mkdir(parents=True)
    (mine / "notes.txt").write_text("mine")
    r = compare_cli(tmp_path, "--runs", "1", "--", "true", out="project")
    assert r.returncode == 0, r.stderr
    assert "holds files alloclab did not write" in r.stderr
    assert (mine / "notes.txt").read_text() == "mine" and (mine / "src").is_dir()
    assert (mine / "results.csv").exists()
    assert sorted(os.listdir(tmp_path)) == ["project"]


def test_results_written_before_the_marker_are_replaced_too(tmp_path):
    old = tmp_path / "o"
    old.mkdir()
    (old / "results.csv").write_text("old")
    (old / "stale.png").write_bytes(b"old")
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0, r.stderr
    assert not (old / "stale.png").exists() and (old / "results.csv").read_text() != "old"


def test_another_commands_output_nested_inside_survives_the_replacement(tmp_path):
    out, _, _ = _earlier(tmp_path)
    r = compare_cli(tmp_path, "--runs", "1", "--", "true", out="o/nested")
    assert r.returncode == 0, r.stderr
    r = compare_cli(tmp_path, "--runs", "1", "--", "true")
    assert r.returncode == 0, r.stderr
    assert (out / "nested" / "results.csv").exists() and not (out / "old-plot.png").exists()
