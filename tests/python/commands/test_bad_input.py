"""The "bad input" table of docs/lab.md: one test per row, each checking the
message and the exit status the table gives."""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import LAUNCHER, csv_rows, run_cli

from alloclab.core.results.summary import read_summary


@pytest.mark.parametrize("sub", ["compare", "frag", "pages", "study"])
def test_unknown_allocator(sub, tmp_path):
    r = run_cli(sub, "--allocators", "glibc,nosuchmalloc", "-o", str(tmp_path / "o"), "--", "true")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("alloclab: ") and "unknown allocator 'nosuchmalloc'" in r.stderr
    assert not (tmp_path / "o").exists()   # nothing ran, nothing was written


@pytest.mark.parametrize("sub", ["compare", "frag", "pages", "study"])
@pytest.mark.parametrize("bad,says", [("vam@VAM_ORDER", "expected NAME@VAR=VALUE"),
                                      ("glibc@LD_PRELOAD=/x.so", "LD_PRELOAD is set by the lab itself"),
                                      ("glibc@X=1@X=2", "X given twice")])
def test_malformed_allocator_variant(sub, bad, says, tmp_path):
    r = run_cli(sub, "--allocators", f"glibc,{bad}", "-o", str(tmp_path / "o"), "--", "true")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("alloclab: argument --allocators: allocator variant ") and says in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("sub", ["compare", "frag"])
@pytest.mark.parametrize("level,ok", [("Adv_3", True), ("adv3", True), ("3", True), ("ADV_10", True),
                                      ("Adv_5", False), ("three", False), ("", False)])
def test_littering_levels_parse_alike_everywhere(sub, level, ok, tmp_path):
    # An unwritable -o stops the command right after parsing: the level was accepted if we get there.
    r = run_cli(sub, "--allocators", "glibc", "--adv", level, "-o", "/dev/null/x", "--", "true")
    assert r.returncode == 2
    if ok:
        assert "/dev/null" in r.stderr, r.stderr
    else:
        assert "littering level" in r.stderr, r.stderr


def test_litter_takes_the_same_level_spellings(tmp_path):
    r = run_cli("litter", "--profile", str(tmp_path / "none.json"), "--adv", "Adv_3", "--", "true")
    assert r.returncode == 2 and "does not exist" in r.stderr      # past the level
    r = run_cli("litter", "--profile", str(tmp_path / "none.json"), "--adv", "Adv_4", "--", "true")
    assert r.returncode == 2 and "unknown littering level Adv_4" in r.stderr


UNWRITABLE = ["/dev/null/x", "/proc/version", "/proc/self/x", "/proc"]


@pytest.mark.parametrize("out", UNWRITABLE)
@pytest.mark.parametrize("sub", ["compare", "drag", "frag", "pages", "study"])
def test_unwritable_output_directory_stops_before_anything_runs(sub, out, tmp_path):
    marker = tmp_path / "ran"
    args = [sub, "-o", out]
    if sub != "study":
        args += ["--", "sh", "-c", f"touch {marker}"]
    if sub in ("compare", "frag", "pages"):
        args[1:1] = ["--allocators", "glibc"]
    r = run_cli(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.startswith("alloclab: ") and "Traceback" not in r.stderr, r.stderr
    assert out in r.stderr
    assert not marker.exists(), "the program ran before the output was checked"


def test_a_read_only_directory_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):  # root writes anywhere; a directory of /proc is read-only for everyone
            ro = "/proc/self/fd"
        r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "-o", str(ro), "--", "true")
        assert r.returncode == 2 and "cannot write in output directory" in r.stderr, r.stderr
    finally:
        (tmp_path / "ro").chmod(0o755)


def test_profile_output_file_is_checked_before_the_program_runs(tmp_path):
    marker = tmp_path / "ran"
    for out in ("/proc/nope/p.json", "/dev/null/p.json", str(tmp_path)):
        r = run_cli("profile", "-o", out, "--", "sh", "-c", f"touch {marker}")
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("alloclab: ")
        assert not marker.exists()


def test_litter_log_is_checked_before_the_program_runs(tmp_path):
    marker = tmp_path / "ran"
    prof = tmp_path / "p.json"
    prof.write_text('{"max_live": 10, "sizes": {"24": 10}}')
    r = run_cli("litter", "--profile", str(prof), "--adv", "3", "--log", "/dev/null/l.log", "--",
                "sh", "-c", f"touch {marker}")
    assert r.returncode == 2 and "/dev/null" in r.stderr
    assert not marker.exists()


def test_export_files_are_checked_before_anything_runs(tmp_path):
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "-o", str(tmp_path / "o"),
                "--export-json", "/dev/null/r.json", "--", "true")
    assert r.returncode == 2 and "/dev/null" in r.stderr
    assert not (tmp_path / "o" / "results.csv").exists()


@pytest.mark.parametrize("sub", ["compare", "profile", "drag", "frag", "pages"])
def test_missing_program(sub, tmp_path):
    r = run_cli(sub, "-o", str(tmp_path / "o" / ("p.json" if sub == "profile" else "")),
                "--", "no-such-program-xyz")
    assert r.returncode == 2, r.stderr
    assert "alloclab: program 'no-such-program-xyz' not found in PATH" in r.stderr


CRASH = ["sh", "-c", "kill -SEGV $$"]


def test_compare_of_a_crashing_program_keeps_the_clean_rows(tmp_path, libdir):
    out = tmp_path / "c"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0,3", "--runs", "2", "--cache", "off",
                "--warmup", "0", "-o", str(out), "--", *CRASH)
    assert r.returncode == 1, r.stderr
    rows = csv_rows(out)
    assert [(x["adv"], x["status"], x["signal"]) for x in rows] == [("0", "crashed", "11")] * 2
    summary = read_summary(str(out / "summary.json"))
    assert summary.meta.skipped["cells"] == [["glibc", 3]]
    assert "killed by signal 11" in summary.meta.skipped["reason"]
    assert "glibc/Adv_3: littered cells not run" in r.stderr


def test_profile_of_a_crashing_program_exits_128_plus_the_signal(tmp_path, libdir):
    r = run_cli("profile", "-o", str(tmp_path / "p.json"), "--", *CRASH)
    assert r.returncode == 128 + signal.SIGSEGV, r.stderr
    assert "killed by signal 11" in r.stderr
    assert not (tmp_path / "p.json").exists()


def test_a_program_exceeding_the_timeout_is_killed_and_recorded(tmp_path):
    out = tmp_path / "t"
    t0 = time.monotonic()
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--runs", "1", "--warmup", "0", "--cache", "off",
                "--timeout", "500ms", "-o", str(out), "--", "sleep", "30")
    assert time.monotonic() - t0 < 20
    assert r.returncode == 1, r.stderr
    assert [x["status"] for x in csv_rows(out)] == ["timeout"]


def test_compare_has_a_default_timeout(tmp_path):
    out = tmp_path / "d"
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0", "--runs", "1", "--warmup", "0", "--cache", "off",
                "-o", str(out), "--", "true")
    assert r.returncode == 0, r.stderr
    assert read_summary(str(out / "summary.json")).meta.timeout_s == 600


def test_ctrl_c_keeps_the_finished_runs(tmp_path):
    out = tmp_path / "i"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([LAUNCHER, "compare", "--allocators", "glibc", "--adv", "0", "--runs", "50", "--warmup",
                          "0", "--cache", "off", "-o", str(out), "--", "sleep", "0.2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         # A suite started in the background (`make test &`) inherits SIGINT
                         # ignored, and so would the command: give it the default, as a
                         # terminal's Ctrl-C finds it.
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    csv_path = out / "results.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if csv_path.exists() and len(csv_path.read_text().splitlines()) >= 3:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    rows = csv_rows(out)
    assert 2 <= len(rows) < 50 and all(x["status"] == "ok" for x in rows)
    summary = read_summary(str(out / "summary.json"))
    assert summary.meta.interrupted is True and summary.rows == len(rows)
    assert (out / "report.html").exists()


@pytest.mark.parametrize("version,word", [(99, "newer"), (0, "re-profile")])
def test_a_profile_of_another_format_version_is_refused(tmp_path, version, word):
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"format_version": version, "max_live": 10, "sizes": {"24": 10}}))
    r = run_cli("litter", "--profile", str(prof), "--adv", "3", "--", "true")
    assert r.returncode == 2
    assert f"profile format version {version}; this alloclab reads version 1" in r.stderr and word in r.stderr
    r = run_cli("compare", "--allocators", "glibc", "--adv", "0,3", "--profile", str(prof), "-o",
                str(tmp_path / "o"), "--", "true")
    assert r.returncode == 2 and "format version" in r.stderr


@pytest.mark.parametrize("scale,message", [("0", "scale 0 is out of range (0 < scale <= 1000)"),
                                           ("abc", "'abc' is not a number"), ("-1", "out of range")])
def test_a_bad_workload_scale_is_refused_before_anything_runs(scale, message, tmp_path):
    r = run_cli("ablation", "--quick", "--scale", scale, "-o", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("alloclab: argument --scale: ") and message in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_an_unknown_ablation_program_is_named_with_the_ones_there_are(tmp_path):
    r = run_cli("ablation", "--quick", "--programs", "gp_mix,nosuch", "-o", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert "--programs: nosuch is not among this mode's programs (" in r.stderr and "gp_mix" in r.stderr


@pytest.mark.parametrize("runs", ["0", "-1", "two", "2.5"])
def test_study_refuses_a_run_count_that_is_not_a_positive_whole_number(runs, tmp_path):
    r = run_cli("study", "-r", runs, "-o", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("alloclab: ") or "usage:" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("budget", ["-5", "soon", "1x"])
def test_study_refuses_a_stages_budget_that_is_not_a_duration(budget, tmp_path):
    r = run_cli("study", "--stage-budget", budget, "-o", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert "--stage-budget" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()
