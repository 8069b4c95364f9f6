"""`alloclab profile` (commands/profile.py): a shell pipeline, bad input, the program's status."""

import json
import os


from conftest import run_cli



def test_cli_profile_of_a_shell_pipeline(tmp_path, libdir):
    out = tmp_path / "sh.json"
    r = run_cli("profile", "-o", str(out), "--", "sh", "-c", "ls / | wc -l")
    assert r.returncode == 0, r.stderr
    p = json.loads(out.read_text())
    exes = {os.path.basename(x["exe"]) for x in p["processes"]}
    assert {"ls", "wc"} <= exes


def test_cli_profile_bad_input(tmp_path, libdir):
    r = run_cli("profile", "-o", str(tmp_path / "x.json"), "--", str(tmp_path / "missing"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = run_cli("profile", "-o", str(tmp_path / "x.json"), "--cutoff", "0", "--", "true")
    assert r.returncode == 2 and "cutoff" in r.stderr
    r = run_cli("profile", "-o", str(tmp_path / "x.json"), "--allocator", "nosuch", "--", "true")
    assert r.returncode == 2 and "unknown allocator" in r.stderr
    r = run_cli("profile", "-o", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "no command" in r.stderr


def test_cli_profile_passes_on_a_failing_status(tmp_path, libdir):
    out = tmp_path / "f.json"
    r = run_cli("profile", "-o", str(out), "--", "sh", "-c", "exit 3")
    assert r.returncode == 3
    assert json.loads(out.read_text())["run"]["exit_code"] == 3
