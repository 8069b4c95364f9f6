"""alloclab diff over two comparison directories: each common cell's ratio of medians with its
paired interval, and moved only when the interval excludes 1."""
from conftest import make_row, run_cli
from alloclab.core.results import runs


def write(path, rows):
    path.mkdir()
    with open(path / "results.csv", "w", newline="") as f:
        w = runs.RowWriter(f)
        for r in rows:
            w.write(r)


def cell(allocator, times):
    return [make_row(allocator=allocator, repeat=i + 1, program_s=t, wall_s=t) for i, t in enumerate(times)]


def test_a_cell_that_moved_and_one_that_did_not(tmp_path):
    write(tmp_path / "a", cell("glibc", [1.0, 1.1, 0.9, 1.0]) + cell("vam", [2.0, 2.0, 2.1, 1.9]))
    write(tmp_path / "b", cell("glibc", [1.0, 1.1, 0.9, 1.0]) + cell("vam", [1.0, 1.0, 1.05, 0.95])
          + cell("mimalloc", [1.0]))
    r = run_cli("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines()[1:]}
    assert set(lines) == {"glibc/Adv_0", "vam/Adv_0"}      # mimalloc is in B only
    assert " 1.000 " in lines["glibc/Adv_0"] and lines["glibc/Adv_0"].endswith("level")
    assert " 0.500 " in lines["vam/Adv_0"] and lines["vam/Adv_0"].endswith("moved")


def test_two_things_of_different_kinds_are_refused(tmp_path):
    write(tmp_path / "a", cell("glibc", [1.0]))
    other = tmp_path / "p.json"
    other.write_text("{}")
    r = run_cli("diff", str(tmp_path / "a"), str(other))
    assert r.returncode == 2 and "not of one kind" in r.stderr
