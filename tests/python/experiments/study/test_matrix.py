"""One program's matrix in the study (experiments/study/matrix.py): every cell, or a stage's
cells, with the null's twins of glibc's clean and littered cells beside them in the same rounds."""

from alloclab.core.allocators import Allocator
from alloclab.core.levels import Level
from alloclab.experiments.study.matrix import matrix_plan, twin_of
from alloclab.experiments.study.plan import Plan
from alloclab.experiments.study.programs import Program

GLIBC = Allocator("glibc", None, "2.36")
MIMALLOC = Allocator("mimalloc", "/lib/libmimalloc.so.2", "2.0")


def _plan(tmp_path):
    return Plan("default", [GLIBC, MIMALLOC], [Level.ADV_0, Level.ADV_3], 3, False, "0.5", "0.05", [], [],
                outdir=str(tmp_path))


def _cells(cp):
    return [(a.name, int(lv)) for a, lv in cp.cells]


def test_every_timed_program_runs_the_nulls_twins_beside_its_cells(tmp_path):
    prog = Program("interp/malloc", "interp", "malloc", "region", ["interp", "--alloc", "malloc"])
    cp = matrix_plan(_plan(tmp_path), prog, str(tmp_path / "p.json"), 60).check()
    assert _cells(cp) == [("glibc", 0), ("glibc", 3), ("mimalloc", 0), ("mimalloc", 3),
                          ("glibc~again", 0), ("glibc~again", 3)]
    assert cp.baseline.key == "glibc/Adv_0" and cp.runs == 3 and cp.profile == str(tmp_path / "p.json")
    assert twin_of(GLIBC).name == "glibc~again" and twin_of(GLIBC).path is None
    # a program with no profile runs clean only, and so does its twin
    assert _cells(matrix_plan(_plan(tmp_path), prog, None, 60)) == [("glibc", 0), ("mimalloc", 0), ("glibc~again", 0)]


def test_a_clean_only_program_has_no_twin(tmp_path):
    prog = Program("interp/talloc", "interp", "talloc", "region", ["interp"], clean_only=True)
    assert _cells(matrix_plan(_plan(tmp_path), prog, None, 60)) == [("glibc", 0)]


def test_a_stage_runs_only_the_cells_asked_for_with_glibcs_clean_cell_and_the_twin(tmp_path):
    prog = Program("interp/malloc", "interp", "malloc", "region", ["interp"])
    cp = matrix_plan(_plan(tmp_path), prog, str(tmp_path / "p.json"), 60, only=[("mimalloc", 3)], runs=4,
                     seed=99, sub="stage1").check()
    assert _cells(cp) == [("glibc", 0), ("mimalloc", 3), ("glibc~again", 0)]
    assert cp.runs == 4 and cp.seed == 99 and cp.warmup == 0 and cp.outdir.endswith("stage1")
    # without a profile, the littered cells cannot run
    cp = matrix_plan(_plan(tmp_path), prog, None, 60, only=[("mimalloc", 3), ("mimalloc", 0)], runs=4)
    assert _cells(cp) == [("glibc", 0), ("mimalloc", 0), ("glibc~again", 0)] and cp.profile is None


def test_a_stage_that_reruns_glibcs_littered_cell_reruns_its_twin_too(tmp_path):
    """A slowdown's null reads glibc's Adv_3 A/A pair: a stage asked for that cell runs both."""
    prog = Program("interp/malloc", "interp", "malloc", "region", ["interp"])
    cp = matrix_plan(_plan(tmp_path), prog, str(tmp_path / "p.json"), 60, only=[("mimalloc", 3), ("glibc", 3)],
                     runs=3, seed=7, sub="stage1")
    assert _cells(cp) == [("glibc", 0), ("glibc", 3), ("mimalloc", 3), ("glibc~again", 0), ("glibc~again", 3)]
