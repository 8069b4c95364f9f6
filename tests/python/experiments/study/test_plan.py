"""What the study runs (experiments/study/plan.py)."""

import pytest


from alloclab import LabError
from alloclab.core import allocators
from alloclab.experiments.study import plan as study_plan


def test_study_plan_takes_the_run_count_over_the_modes(tmp_path):
    glibc = [allocators.find("glibc")]
    assert study_plan.plan("quick", glibc, str(tmp_path)).repeat == study_plan.MODES["quick"]["repeat"]
    assert study_plan.plan("quick", glibc, str(tmp_path), runs=7).repeat == 7
    with pytest.raises(LabError):
        study_plan.plan("quick", glibc, str(tmp_path), runs=0)


def test_the_stages_budget_is_the_modes_unless_given(tmp_path):
    glibc = [allocators.find("glibc")]
    assert study_plan.plan("quick", glibc, str(tmp_path)).stage_budget == 0
    assert study_plan.plan("default", glibc, str(tmp_path)).stage_budget == study_plan.MODES["default"]["stage_budget"]
    p = study_plan.plan("default", glibc, str(tmp_path), stage_budget=0)
    assert p.stage_budget == 0 and p.looks == study_plan.LOOKS
    assert study_plan.plan("quick", glibc, str(tmp_path), stage_budget=30).stage_budget == 30
    with pytest.raises(LabError):
        study_plan.plan("quick", glibc, str(tmp_path), stage_budget=-1)
