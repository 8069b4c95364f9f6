"""The one process runner (core/runner.py): LD_PRELOAD written one way, statuses, the program's own
pid when run directly."""

import os

import pytest

from alloclab import LabError
from alloclab.core import runner


def test_the_preload_goes_in_front_of_the_one_already_there():
    e = runner.child_env(["/a.so", "", "/b.so"], {"X": 1}, base={"LD_PRELOAD": "/old.so", "GONE": "1"},
                         unset=("GONE",))
    assert e["LD_PRELOAD"] == "/a.so /b.so /old.so" and e["X"] == "1" and "GONE" not in e
    assert "LD_PRELOAD" not in runner.child_env([], base={})


@pytest.mark.parametrize("direct", [False, True])
def test_statuses_and_exit_status(direct):
    ok = runner.run(["true"], direct=direct)
    assert ok.ok and ok.exit_status == 0
    failed = runner.run(["sh", "-c", "exit 3"], direct=direct)
    assert failed.status == "failed" and failed.exit_status == 3
    crashed = runner.run(["sh", "-c", "kill -SEGV $$"], direct=direct)
    assert crashed.status == "crashed" and crashed.signal == 11 and crashed.exit_status == 128 + 11
    slow = runner.run(["sleep", "5"], timeout=0.2, direct=direct)
    assert slow.status == "timeout"


def test_a_direct_run_gives_the_programs_pid_and_its_preload(tmp_path):
    out = tmp_path / "env"
    r = runner.run(["sh", "-c", f'echo "$$ $LD_PRELOAD" > {out}'], preload=["/nonexistent-lib.so"], direct=True)
    pid, preload = out.read_text().split(maxsplit=1)
    assert int(pid) == r.pid and preload.startswith("/nonexistent-lib.so")


def test_a_program_that_cannot_run_is_a_lab_error(tmp_path):
    with pytest.raises(LabError, match="does not exist"):
        runner.run([str(tmp_path / "missing")])
    script = tmp_path / "plain"
    script.write_text("echo")
    os.chmod(script, 0o644)
    with pytest.raises(LabError, match="not executable"):
        runner.run([str(script)])


# ---- the program's memory at exit (the launcher's --memory)

def test_a_run_records_what_the_program_held_at_exit(exit_memory):
    r = runner.run([exit_memory, "exit"])
    assert r.exit_code == 7
    # 48 MiB dirtied, 16 of them given back with MADV_FREE (lazy, still resident)
    assert 32768 <= r.private_dirty_kb <= 40000
    assert 16000 <= r.lazyfree_kb <= 16500
    assert r.anon_huge_kb is not None and r.anon_huge_kb >= 0


def test_a_direct_run_has_no_memory_at_exit(exit_memory):
    r = runner.run([exit_memory, "exit"], direct=True)
    assert r.private_dirty_kb is None and r.lazyfree_kb is None
