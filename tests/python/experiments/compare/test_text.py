"""A comparison in words (experiments/compare/text.py): the headline names the fastest cell and
says whether it leads by more than the noise."""

import dataclasses


from conftest import make_cell

from alloclab.core.results.summary import Meta, Summary
from alloclab.experiments.compare.summary import warnings
from alloclab.experiments.compare.text import headline


def test_headline_names_the_fastest_and_says_whether_it_exceeds_the_noise():
    meta = Meta(baseline="glibc/Adv_0")
    clear = Summary(meta, [make_cell("glibc", 0, 1.0, 0.99, 1.01), make_cell("vam", 0, 0.8, 0.79, 0.81)])
    h = headline(clear)
    assert h.startswith("On a clean heap, vam is fastest: 20.0% less program time than glibc")
    assert "more than the spread" in h
    noisy = Summary(meta, [make_cell("glibc", 0, 1.0, 0.7, 1.3), make_cell("vam", 0, 0.95, 0.8, 1.2)])
    assert "the spread of the runs (600.00 ms, min-max) is larger: not a clear difference" in headline(noisy)
    assert headline(Summary(meta, [])).startswith("No run succeeded")


def _rounds(cell, times):
    return dataclasses.replace(cell, program_s_runs=[[i + 1, t] for i, t in enumerate(times)])


def test_headline_judges_by_the_rounds_when_it_has_them():
    """The machine drifts between rounds: both cells' ranges overlap, yet vam is 10% faster in every
    round. Paired round by round, that is a clear difference; a split of 5 rounds to 4 is not, however
    far apart the medians."""
    meta = Meta(baseline="glibc/Adv_0")
    glibc = [1.0, 1.4, 1.8, 1.2, 1.6, 1.1, 1.5, 1.3, 1.7]
    steady = [t * f for t, f in zip(glibc, [0.90, 0.91, 0.89, 0.90, 0.92, 0.88, 0.90, 0.91, 0.89])]
    drift = Summary(meta, [_rounds(make_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                           _rounds(make_cell("vam", 0, 1.26, 0.9, 1.62, n=9), steady)])
    h = headline(drift)
    assert "vam is fastest: 10.0% less program time than glibc" in h, h
    assert "it took less time in 9 of 9 rounds; paired by round, 0.900× (95% interval 0.89" in h, h
    assert h.endswith(": a clear difference."), h
    assert not any(w.startswith("vam/Adv_0") for w in warnings(drift))
    split = [0.5, 0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5]
    mixed = Summary(meta, [_rounds(make_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                           _rounds(make_cell("vam", 0, 0.7, 0.5, 2.7, n=9), [t * f for t, f in zip(glibc, split)])])
    h = headline(mixed)
    assert "it took less time in 5 of 9 rounds" in h and h.endswith(": not a clear difference."), h
    w = [x for x in warnings(mixed) if x.startswith("vam/Adv_0")]
    assert w and "but it took less time in 5 of 9 rounds" in w[0] and "within the noise" in w[0], w
    # Only rounds both cells ran are paired; one shared round cannot show anything.
    one = Summary(meta, [_rounds(make_cell("glibc", 0, 1.4, 1.0, 1.8, n=9), glibc),
                         dataclasses.replace(make_cell("vam", 0, 0.5, 0.5, 0.5, n=1), program_s_runs=[[4, 0.5]])])
    assert "1 of 1 rounds" in headline(one) and "not a clear difference" in headline(one)


def test_the_table_fits_100_columns_and_moves_the_cache_counts_below_when_they_do_not():
    from alloclab.experiments.compare.text import WIDTH, format_table
    cache = {"program_d1_misses": 2_138_575, "program_ll_misses": 60_723}
    short = Summary(Meta(baseline="glibc/Adv_0", cache_method="cachegrind"),
                    [make_cell(a, adv, 0.3380, 0.2886, 0.3873, cache=cache, program_s_ratio=1.0)
                     for a in ("glibc", "jemalloc", "mimalloc", "vam") for adv in (0, 3)])
    text = format_table(short)
    assert max(map(len, text.splitlines())) <= WIDTH, text
    assert "2.14M" in text and "60.7k" in text and "D1 miss*" in text.splitlines()[0], text
    longer = Summary(short.meta, [dataclasses.replace(c, allocator="vam@VAM_ORDER=fifo@VAM_STATS=0")
                                  for c in short.cells])
    text = format_table(longer)
    assert max(map(len, text.splitlines())) <= WIDTH, text
    assert "D1 miss*" not in text.splitlines()[0] and "2.14M" in text, text
