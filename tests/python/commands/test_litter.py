"""`alloclab litter` (commands/litter.py): bad input, a bad profile or program, the program's status."""

import pytest

from conftest import run_cli


@pytest.mark.parametrize("args,message", [
    (["--adv", "3", "--multiplier", "1", "--occupancy", "0.5"], "not both"),
    (["--multiplier", "0", "--occupancy", "0.5"], "multiplier must be > 0"),
    (["--multiplier", "-2", "--occupancy", "0.5"], "multiplier must be > 0"),
    (["--multiplier", "1", "--occupancy", "1.5"], "occupancy must be in [0, 1]"),
    (["--multiplier", "1"], "both --multiplier and --occupancy"),
    (["--adv", "3", "--allocator", "nosuchalloc"], "unknown allocator"),
])
def test_cli_litter_bad_input(probe, args, message):
    exe, prof = probe
    r = run_cli("litter", "--profile", prof, *args, "--", exe)
    assert r.returncode == 2
    assert message in r.stderr


def test_cli_litter_bad_profile_and_program(probe, tmp_path):
    exe, prof = probe
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = run_cli("litter", "--profile", str(bad), "--adv", "1", "--", exe)
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    r = run_cli("litter", "--profile", str(tmp_path / "none.json"), "--adv", "1", "--", exe)
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = run_cli("litter", "--profile", prof, "--adv", "1", "--", str(tmp_path / "no-such-program"))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_cli_litter_passes_on_the_program_status(probe):
    _, prof = probe
    r = run_cli("litter", "--profile", prof, "--adv", "1", "--", "sh", "-c", "exit 7")
    assert r.returncode == 7
