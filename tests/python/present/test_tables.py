"""The one Markdown table writer (alloclab.present.tables) that every report and benchmark uses."""
import pytest

from alloclab.present import tables


def test_first_column_left_others_right_by_default():
    text = tables.markdown(["program", "glibc", "vam"], [["a", "1.000", "0.9"]])
    assert text.splitlines() == ["| program | glibc | vam |", "|---|---:|---:|", "| a | 1.000 | 0.9 |"]
    assert text.endswith("\n")


def test_alignment_is_given_per_column():
    rule = tables.markdown(["a", "b", "c"], [], "lrl").splitlines()[1]
    assert rule == "|---|---:|---|"


def test_a_pipe_in_a_cell_does_not_add_a_column():
    line = tables.markdown(["program", "t"], [["sh -c 'a|b'", "1"]]).splitlines()[2]
    assert line == "| sh -c 'a\\|b' | 1 |"
    # an unescaped pipe would split the row into one cell more than the header
    assert line.replace("\\|", "").count("|") == 3


def test_missing_values_floats_and_counts():
    assert tables.cell(None) == tables.MISSING
    assert tables.cell(1.23456) == "1.235"
    assert tables.cell(1.23456, "{:.1f}") == "1.2"
    assert tables.cell(5) == "5"
    row = tables.markdown(["x", "n", "r"], [["p", 7, None]]).splitlines()[2]
    assert row == f"| p | 7 | {tables.MISSING} |"


def test_a_row_of_the_wrong_width_is_an_error_not_a_shifted_table():
    with pytest.raises(ValueError, match="row 1 has 2 cells for 3 columns"):
        tables.markdown(["a", "b", "c"], [["1", "2", "3"], ["1", "2"]])
    with pytest.raises(ValueError, match="align"):
        tables.markdown(["a", "b"], [], "lx")
