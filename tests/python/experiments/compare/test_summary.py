"""A comparison summarised (experiments/compare/summary.py): warnings about short runs and
differences within the noise, and ratios that carry the spread of paired runs."""

import pytest

from conftest import make_cell, make_row, make_summary

from alloclab.experiments.compare.summary import ratio_spreads, warnings
from alloclab.experiments.compare.text import markdown_table


def test_warning_when_runs_are_shorter_than_5_ms():
    assert any("under 5 ms" in w for w in warnings(make_summary(make_cell("glibc", 0, 0.002, 0.001, 0.003))))
    assert warnings(make_summary(make_cell("glibc", 0, 0.2, 0.19, 0.21))) == []


def test_warning_when_the_spread_is_larger_than_the_difference():
    base = make_cell("glibc", 0, 1.00, 0.90, 1.10)
    close = make_cell("vam", 0, 1.05, 1.00, 1.08)     # 5% apart, spread 20%
    far = make_cell("jemalloc", 0, 1.50, 1.45, 1.55)  # 50% apart, spread 20%
    w = warnings(make_summary(base, close, far))
    assert any(x.startswith("vam/Adv_0 differs from glibc/Adv_0 by 5.0%") for x in w), w
    assert not any("jemalloc" in x for x in w), w


def test_markdown_ratios_carry_the_spread_of_paired_runs():
    summary = make_summary(make_cell("glibc", 0, 1.0, 0.9, 1.1, n=3, program_s_ratio=1.0),
                       make_cell("vam", 0, 2.0, 1.9, 2.2, n=3, program_s_ratio=2.0), command=["x"])
    rows = [make_row(allocator=a, adv=0, repeat=k, program_s=v)
            for a, vals in (("glibc", (1.0, 0.9, 1.1)), ("vam", (2.0, 2.2, 1.9))) for k, v in enumerate(vals, 1)]
    sp = ratio_spreads("glibc/Adv_0", rows)["vam/Adv_0"]
    assert (sp.low, sp.high, sp.n) == pytest.approx((1.9 / 1.1, 2.2 / 0.9, 3))
    assert f"| 2.000 ({1.9 / 1.1:.3f}–{2.2 / 0.9:.3f}) |" in markdown_table(summary, rows)


def test_warnings_compare_each_cell_with_what_the_headline_compares_it_with():
    """A littered cell is set against the baseline allocator at its own level, as the headline
    does; only the baseline allocator's own littered cell is set against the clean baseline."""
    cells = [make_cell("glibc", 0, 1.00, 0.99, 1.01), make_cell("glibc", 3, 1.20, 1.00, 1.40),
             make_cell("vam", 3, 1.25, 1.05, 1.45), make_cell("vam", 0, 0.50, 0.49, 0.51)]
    w = warnings(make_summary(*cells))
    assert any(x.startswith("vam/Adv_3 differs from glibc/Adv_3 by 4.2%") for x in w), w
    assert any(x.startswith("glibc/Adv_3 differs from glibc/Adv_0 by 20.0%") for x in w), w
    assert not any(x.startswith("vam/Adv_3 differs from glibc/Adv_0") for x in w), w
