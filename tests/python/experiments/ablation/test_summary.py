"""The ablation's paired verdicts (experiments/ablation/summary.py)."""

from alloclab.experiments.ablation.summary import paired_by_round


def test_paired_by_round_pairs_the_runs_of_one_round():
    """Round by round: a setting 10% faster in every round is faster, whatever the drift
    between rounds; one that wins some rounds and loses others is level."""
    drift = [1.0, 1.5, 0.8, 1.2, 2.0]
    times = {"a": {"default": drift, "x": [t * 0.9 for t in drift], "y": [t * f for t, f in
                                                                        zip(drift, [0.7, 1.3, 0.8, 1.25, 1.0])]},
             "b": {"default": drift, "x": [t * 0.9 for t in drift], "y": drift}}
    x = paired_by_round(times, "x", ["a", "b"])
    assert x["verdict"] == "faster" and abs(x["ratio"] - 0.9) < 1e-9 and x["rounds"] == 5
    assert paired_by_round(times, "y", ["a", "b"])["verdict"] == "level"
    times["a"]["x"][2] = None                                   # a failed run: that round has one program left
    assert paired_by_round(times, "x", ["a", "b"])["rounds"] == 5
