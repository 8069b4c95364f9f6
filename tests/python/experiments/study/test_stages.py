"""Staged repeats (experiments/study/stages.py): how many rounds a stage runs, which programs and
cells the unsettled claims send to it, and the time budget that bounds it."""

import io

import pytest

from conftest import study_rows

from alloclab.core.levels import Level
from alloclab.experiments.study import stages
from alloclab.experiments.study.plan import Plan
from alloclab.experiments.study.programs import Program
from alloclab.experiments.study.verdicts import rules
from alloclab.stats import shift_interval


def test_a_stage_runs_the_fewest_rounds_whose_interval_reaches_the_corrected_level():
    # n repeats against n null values: 3 reach 0.80 and 0.90 (one look, two), 4 reach 0.97
    assert [stages.stage_runs(k) for k in (1, 2, 3)] == [3, 3, 4]
    for k in (1, 2, 3, 6):
        n = stages.stage_runs(k)
        assert shift_interval(range(n), range(n), rules.level_for(k)).reached
        assert n == 3 or not shift_interval(range(n - 1), range(n - 1), rules.level_for(k)).reached


def test_the_unsettled_cells_go_to_their_programs_with_glibcs_clean_cell():
    progs = [Program("interp/malloc", "interp", "malloc", "region", ["x"]),
             Program("interp/talloc", "interp", "talloc", "region", ["x"], clean_only=True)]
    need = {"rq3-mudlle-mimalloc": [("interp", "malloc", "mimalloc", 0), ("interp", "malloc", "mimalloc", 3)],
            "reaps-vs-talloc": [("interp", "talloc", "glibc", 0)]}
    wanted = stages._wanted(need, progs)
    assert list(wanted) == ["interp/malloc"]                 # clean-only programs have no twin to run
    assert wanted["interp/malloc"][1] == {("mimalloc", 0), ("mimalloc", 3), ("glibc", 0)}


def _unsettled_rows():
    spec = {("boxed_sim", "custom", "mimalloc", 0): [1.0] * 3,
            ("boxed_sim", "malloc", "mimalloc", 0): [1.020, 1.025, 1.030],
            ("boxed_sim", "malloc", "glibc", 0): [1.0] * 3,
            ("boxed_sim", "malloc", "glibc~again", 0): [1.04, 0.97, 1.01]}
    rows = study_rows(spec)
    for r in rows:
        r.program = f"boxed_sim/{r.variant}"
        r.wall_s = 2.0
    return rows


def test_a_stage_that_would_overrun_the_budget_is_not_run_and_says_so(tmp_path):
    progs = [Program("boxed_sim/malloc", "boxed_sim", "malloc", "per-class", ["x"]),
             Program("boxed_sim/custom", "boxed_sim", "custom", "per-class", ["x"])]
    p = Plan("default", [], [Level.ADV_0], 3, False, "0.5", "0.05", progs, [], outdir=str(tmp_path),
             stage_budget=15.0)
    rows = _unsettled_rows()
    # three rounds of custom/mimalloc, malloc/mimalloc, and per program glibc's clean cell and its twin
    assert stages._cost(rows, progs[0], {("mimalloc", 0), ("glibc", 0)}, 3) == pytest.approx(3 * 3 * 2.0)
    record = stages.run_stages(p, rows, io.StringIO(), None, None, 60)
    assert record["stages"] == [] and record["looks"] == p.looks and record["budget_s"] == 15.0
    assert any("rq1-boxed-sim still unsettled" in n and "15 s budget" in n for n in p.notes), p.notes
    p.stage_budget, p.notes = 0.0, []
    assert stages.run_stages(p, rows, None, None, None, 60)["stages"] == [] and p.notes == []
