"""Littering levels and cells (core/levels.py): one parser for a level's spellings, and the
Table 3 presets each level carries."""

import json

import pytest

from alloclab import LabError
from alloclab.core.levels import Cell, Level, cell_key


@pytest.mark.parametrize("text,level", [("0", Level.ADV_0), ("3", Level.ADV_3), ("Adv_3", Level.ADV_3),
                                        ("adv3", Level.ADV_3), ("ADV_10", Level.ADV_10), (" adv_1 ", Level.ADV_1)])
def test_every_spelling_of_a_level_parses_to_it(text, level):
    assert Level.parse(text) is level


@pytest.mark.parametrize("text,says", [("Adv_5", "unknown littering level Adv_5; choose from 0, 1, 3, 10"),
                                       ("three", "littering level 'three' is not one of 0, 1, 3, 10"),
                                       ("", "is not one of"), ("adv-3", "is not one of")])
def test_a_level_that_is_not_a_preset_is_refused_with_the_presets(text, says):
    with pytest.raises(LabError, match=says):
        Level.parse(text)


def test_a_level_carries_its_table_3_preset():
    assert [(lv.multiplier, lv.occupancy) for lv in Level] == [(0.0, 0.0), (1.0, 0.33), (3.0, 0.66), (10.0, 0.8)]
    assert [lv.littered for lv in Level] == [False, True, True, True]
    assert Level.ADV_10.label == "Adv_10"


def test_a_level_is_written_as_the_number_it_is():
    """Files and CSV cells hold the number: a Level must not print as Level.ADV_3."""
    assert str(Level.ADV_3) == "3" and f"{Level.ADV_3}" == "3" and json.dumps([Level.ADV_3]) == "[3]"
    assert Level.ADV_3 == 3 and Level.of(3) is Level.ADV_3 and min([Level.ADV_3, Level.ADV_1]) is Level.ADV_1


def test_a_cell_is_named_by_its_key():
    assert Cell("glibc", Level.ADV_3).key == "glibc/Adv_3" == cell_key("glibc", 3)
