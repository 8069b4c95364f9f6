"""The command line's argument kinds (commands/arguments.py): durations, levels, allocator lists."""

import pytest


from alloclab import LabError
from alloclab.commands import arguments as args
from alloclab.core import allocators
from alloclab.core.levels import Level


@pytest.mark.parametrize("text,value", [("600", 600.0), ("1.5s", 1.5), ("250ms", 0.25), ("2m", 120.0),
                                        ("1h", 3600.0), ("0", None), ("none", None)])
def test_durations(text, value):
    assert args.parse_duration(text) == value


@pytest.mark.parametrize("text", ["5x", "-1", "", "s"])
def test_bad_durations(text):
    with pytest.raises(LabError):
        args.parse_duration(text)


def test_levels_and_allocators():
    assert args.parse_levels("0,Adv_3,adv10,3") == [0, 3, 10]
    assert all(isinstance(lv, Level) for lv in args.parse_levels("0,Adv_3"))
    with pytest.raises(LabError, match="Adv_2"):
        args.parse_levels("2")
    assert [a.name for a in allocators.find_many("glibc")] == ["glibc"]
    with pytest.raises(LabError, match="given twice"):
        allocators.find_many("glibc,system")


def test_vam_is_among_the_default_allocators_of_every_command_that_takes_a_list():
    from alloclab import cli
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("compare", "frag", "pages"):
        action = next(a for a in sub.choices[name]._actions if a.dest == "allocators")
        assert action.default.split(",") == ["glibc", "jemalloc", "mimalloc", "vam"], name
