"""A comparison's plan (compare/plan.py): the order its rounds visit its cells (round_order),
shuffled per round and, with an A/A twin, never next to its original, within a round or across
from the round before; and the twin's check."""

import random

import pytest

from alloclab import LabError
from alloclab.core.allocators import Allocator, measured_again
from alloclab.core.levels import Cell, Level
from alloclab.experiments.compare.plan import ComparePlan, round_order


def _alloc(name):
    return Allocator(name, None if name == "glibc" else f"/lib/lib{name}.so", "1")


def _plan(names, twin=None, levels=(Level.ADV_0,), **kw):
    allocs = [_alloc(n) for n in names]
    t = measured_again(allocs[names.index(twin)]) if twin else None
    return ComparePlan(["true"], allocs, list(levels), Cell(names[0], levels[0]), twin=t, **kw)


def _orders(plan, rounds):
    return [[(a.name, lv) for a, lv in round_order(plan.cells, plan.twin_pairs, plan.seed, r, plan.shuffle)]
            for r in range(1, rounds + 1)]


def _next_to(orders, pairs):
    """The places, over the rounds run one after another, where a twin runs next to its original."""
    seq = [c for order in orders for c in order]
    keys = [frozenset(p) for p in pairs]
    return [i for i, (x, y) in enumerate(zip(seq, seq[1:])) if frozenset((x, y)) in keys]


@pytest.mark.parametrize("names", [["glibc", "mimalloc"], ["glibc", "jemalloc", "mimalloc"],
                                   ["glibc", "jemalloc", "mimalloc", "tcmalloc", "vam"]])
@pytest.mark.parametrize("seed", range(12))
def test_a_twin_never_runs_next_to_its_original(names, seed):
    plan = _plan(names, twin="mimalloc", seed=seed)
    assert ("mimalloc~again", Level.ADV_0) in [(a.name, lv) for a, lv in plan.cells]
    assert plan.twin_pairs == [(("mimalloc", Level.ADV_0), ("mimalloc~again", Level.ADV_0))]
    orders = _orders(plan, 8)
    assert all(sorted(o) == sorted((a.name, lv) for a, lv in plan.cells) for o in orders)
    assert _next_to(orders, plan.twin_pairs) == []


def test_without_the_constraint_twins_would_meet_their_originals():
    """The check above can fail: plain per-round shuffles put the twin next to its original."""
    plan = _plan(["glibc", "jemalloc", "mimalloc"], twin="mimalloc", seed=3)
    plain = []
    for r in range(1, 9):
        order = [(a.name, lv) for a, lv in plan.cells]
        random.Random(plan.seed * 1000003 + r).shuffle(order)
        plain.append(order)
    assert _next_to(plain, plan.twin_pairs)


def test_a_twin_at_two_levels_is_kept_apart_at_each():
    plan = _plan(["glibc", "mimalloc", "vam"], twin="glibc", levels=(Level.ADV_0, Level.ADV_3))
    assert len(plan.twin_pairs) == 2
    for seed in range(20):
        plan.seed = seed
        assert _next_to(_orders(plan, 5), plan.twin_pairs) == []


def test_without_a_twin_every_round_keeps_the_order_it_always_had():
    plan = _plan(["glibc", "jemalloc", "mimalloc", "vam"], seed=7)
    for r in range(1, 6):
        old = list(plan.cells)
        random.Random(plan.seed * 1000003 + r).shuffle(old)
        assert round_order(plan.cells, plan.twin_pairs, plan.seed, r) == old
    plan.shuffle = False
    assert round_order(plan.cells, plan.twin_pairs, plan.seed, 2, shuffle=False) == plan.cells


def test_two_cells_cannot_be_kept_apart_and_still_run():
    plan = _plan(["glibc"], twin="glibc")
    orders = _orders(plan, 3)
    assert all(sorted(o) == [("glibc", Level.ADV_0), ("glibc~again", Level.ADV_0)] for o in orders)


def test_a_twin_must_be_one_of_the_allocators_measured_again():
    plan = _plan(["glibc", "mimalloc"])
    plan.twin = _alloc("jemalloc")
    with pytest.raises(LabError, match="twin 'jemalloc'"):
        plan.check()
    plan.twin = measured_again(_alloc("jemalloc"))
    with pytest.raises(LabError, match="is not one of the allocators"):
        plan.check()
    plan.twin = measured_again(_alloc("mimalloc"))
    assert plan.check() is plan
