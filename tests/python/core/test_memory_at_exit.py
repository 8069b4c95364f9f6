"""Every run records the program's memory at exit and, when timed in-process, its CPU time
(results.csv's private_dirty_kb, lazyfree_kb, anon_huge_kb, program_cpu_s), and files written
before those columns still read."""
import csv
import os
import subprocess

import pytest

from conftest import ROOT, make_row
from alloclab.core import runner
from alloclab.core.results import runs


@pytest.fixture(scope="module")
def exit_memory(libdir):
    # the build tree's test programs sit beside its shims: BUILD/src/lab and BUILD/tests/lab
    exe = os.path.join(os.path.dirname(os.path.dirname(libdir)), "tests", "lab", "lab_exit_memory")
    if not os.path.exists(exe):
        pytest.fail(f"{exe} is not built (make)")
    return exe


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


def test_compare_writes_the_new_columns(tmp_path, exit_memory):
    out = tmp_path / "cmp"
    p = subprocess.run([os.path.join(ROOT, "alloclab"), "compare", "--allocators", "glibc", "--adv", "0",
                        "--runs", "2", "--cache", "off", "-o", str(out), "--", exit_memory, "exit"],
                       capture_output=True, text=True)
    # the program exits 7 on purpose: the runs count as failed, and still carry their memory
    rows = runs.read_rows(str(out / "results.csv"))
    assert len(rows) == 2
    for r in rows:
        assert 32768 <= r.private_dirty_kb <= 40000, p.stderr
        assert 16000 <= r.lazyfree_kb <= 16500
        assert r.program_cpu_s is not None and 0 <= r.program_cpu_s <= r.wall_s + 0.05


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
    back = runs.read_rows(str(path))
    assert back[0].wall_s == 2.0 and back[0].program_cpu_s is None and back[0].lazyfree_kb is None
    # and the current version writes and reads them back exactly
    row.private_dirty_kb, row.lazyfree_kb, row.anon_huge_kb, row.program_cpu_s = 10, 20, 0, 1.5
    with open(path, "w", newline="") as f:
        w = runs.RowWriter(f)
        w.write(row)
    assert runs.read_rows(str(path))[0] == row
