"""The rules that turn a spread into a verdict (experiments/study/verdicts/rules.py), at their edges."""

from alloclab.experiments.study.verdicts import rules


def test_rules_at_their_edges():
    assert rules.AtMost(0.15).judge(0.10, 0.15) == "confirmed"
    assert rules.AtMost(0.15).judge(0.10, 0.16) == "inconclusive"
    assert rules.AtMost(0.15).judge(0.16, 0.20) == "refuted"
    assert rules.AtLeast(1.0).judge(1.0, 1.5) == "confirmed"
    assert rules.AtLeast(1.0).judge(0.2, 0.8) == "weaker"
    assert rules.AtLeast(1.0).judge(-0.3, -0.01) == "refuted"
    assert rules.AtLeast(1.0).judge(0.5, 1.5) == "inconclusive"
    # "most" is more than half: exactly half is not most, and a spread up to half never confirms it
    assert rules.AtLeast(0.5, strict=True).judge(0.5, 0.5) == "weaker"
    assert rules.AtLeast(0.5, strict=True).judge(0.25, 0.5) == "weaker"
    assert rules.AtLeast(0.5, strict=True).judge(0.5, 0.75) == "inconclusive"
    assert rules.AtLeast(0.5, strict=True).judge(0.75, 1.0) == "confirmed"
    assert rules.AtLeast(0.5).judge(0.5, 0.5) == "confirmed"
    # short of the band but reaching the null: may be no effect at all, so not "weaker"
    assert rules.Band(0.18, 0.27).judge(-0.1, 0.1) == "inconclusive"
    assert rules.Band(0.18, 0.27).judge(-0.118, 0.113) == "inconclusive"   # rq3-parser-mimalloc, a quiet run
    assert rules.Band(0.18, 0.27).judge(0.0, 0.1) == "inconclusive"        # touching the null is reaching it
    assert rules.Band(0.18, 0.27).judge(0.01, 0.1) == "weaker"
    assert rules.AtLeast(1.0).judge(-0.2, 0.8) == "inconclusive"
    assert rules.AtLeast(1.0).judge(0.0, 0.8) == "inconclusive"
    assert rules.AtLeast(0.5, strict=True).judge(0.0, 0.5) == "inconclusive"
