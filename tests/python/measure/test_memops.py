"""memops: the share of a program's instructions spent in the allocator."""

import shutil

import pytest

from alloclab import LabError
from alloclab.measure import memops
from alloclab.experiments import workloads

# A hand-written callgrind profile with a known split: 1000 instructions in
# all; main calls malloc (inclusive 100, of which _int_malloc 60) and
# operator new (inclusive 50, of which malloc 40); free is called from main
# (30). The allocator's share is (100 + 50 + 30) / 1000: the calls inside the
# allocator (malloc -> _int_malloc, operator new -> malloc) must not count
# again, and self cost alone would miss _int_malloc's 60.
PROFILE = """\
# callgrind format
version: 1
creator: hand
positions: line
events: Ir
summary: 1000

ob=(1) /prog
fl=(1) prog.c
fn=(1) main
10 800
cfn=(2) malloc
calls=3 20
11 100
cfn=(3) operator new(unsigned long)
calls=1 30
+1 50
cfn=(4) free
calls=3 40
* 30

ob=(2) /libc
fl=(2) malloc.c
fn=(2)
20 40
cfn=(5) _int_malloc
calls=3 50
21 60

fn=(5)
50 60

fn=(3)
30 10
cfn=(2)
calls=1 20
31 40

fn=(4)
40 30
"""

def test_known_split_counts_each_allocator_entry_once(tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(PROFILE)
    r = memops.share_from_callgrind(str(path))
    assert r["instructions"] == 1000
    assert r["memops_instructions"] == 180
    assert r["memops_share"] == pytest.approx(0.18)
    assert r["method"] == "callgrind"


def test_extra_functions_count_a_custom_allocator(tmp_path):
    text = PROFILE.replace("fn=(1) main\n10 800\n", "fn=(1) main\n10 700\ncfn=(9) reap_malloc\ncalls=1 90\n12 100\n")
    text += "\nfn=(9)\n90 100\n"
    path = tmp_path / "callgrind.out"
    path.write_text(text)
    assert memops.share_from_callgrind(str(path))["memops_instructions"] == 180
    assert memops.share_from_callgrind(str(path), extra=r"^reap_")["memops_instructions"] == 280


def test_missing_valgrind_is_a_lab_error(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(LabError, match="valgrind"):
        memops.measure(["true"])


def test_a_failing_program_is_a_lab_error():
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    with pytest.raises(LabError, match="status"):
        memops.measure(["false"])


def test_freelist_micro_splits_as_built():
    """The microbenchmark does little but allocate: on malloc most of its
    instructions are the allocator's; its free list takes nearly all of them
    away (only the first 16 Ki objects come from malloc)."""
    exe = workloads.binary("freelist_micro")
    if exe is None or shutil.which("valgrind") is None:
        pytest.skip("freelist_micro is not built or valgrind is not installed")
    naive = memops.measure([exe, "--alloc", "malloc", "--quick"], timeout=300)
    custom = memops.measure([exe, "--alloc", "custom", "--quick"], timeout=300)
    assert naive["memops_share"] > 0.6
    assert custom["memops_share"] < 0.1
    # the free list leaves the rest of the work as it was
    rest_naive = naive["instructions"] - naive["memops_instructions"]
    rest_custom = custom["instructions"] - custom["memops_instructions"]
    assert rest_custom < rest_naive * 1.3


# A hand-written cachegrind profile: main 800 instructions with 2 I1 misses, 10 D1 read misses
# (1 of them LL) and 5 D1 write misses; malloc 100 instructions, 1 D1 read miss; _int_malloc 50
# instructions (two lines) with 2 D1 write misses, 1 of them LL; operator new 10 instructions
# (a short line: the trailing counts are zero). Cycles = Ir + 10 (I1mr + D1mr + D1mw) +
# 100 (ILmr + DLmr + DLmw): main 800 + 170 + 100 = 1070; the allocator 110 + 10 + 50 + 20 + 100
# = 290; the share 290 / 1360.
CACHEGRIND = """\
desc: I1 cache: 32768 B, 64 B, 8-way associative
cmd: prog
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=prog.c
fn=main
10 700 2 0 300 10 1 100 5 0
11 100 0 0 10 0 0 0 0 0
fl=malloc.c
fn=malloc
20 100 0 0 30 1 0 10 0 0
fn=_int_malloc
30 30 0 0 10 0 0 5 1 1
31 20 0 0 5 0 0 5 1 0
fl=new_op.cc
fn=operator new(unsigned long)
5 10
summary: 960 2 0 355 11 1 120 7 1
"""


def test_the_cycle_estimate_weighs_misses_and_counts_the_allocators_own_functions(tmp_path):
    path = tmp_path / "cachegrind.out"
    path.write_text(CACHEGRIND)
    r = memops.cycles_from_cachegrind(str(path))
    assert r["cycles"] == 960 + 10 * (2 + 11 + 7) + 100 * (0 + 1 + 1)
    assert r["memops_cycles"] == 100 + 10 * 1 + 50 + 10 * 2 + 100 * 1 + 10
    assert r["memops_share"] == pytest.approx(290 / 1360)
    assert r["memops_instructions"] == 160 and r["instructions"] == 960


def test_a_cachegrind_profile_without_the_cache_simulation_is_refused(tmp_path):
    path = tmp_path / "cachegrind.out"
    path.write_text("events: Ir\nfn=main\n1 100\nsummary: 100\n")
    with pytest.raises(LabError, match="--cache-sim=yes"):
        memops.cycles_from_cachegrind(str(path))


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_measure_cycles_runs_a_stand_in_under_cachegrind():
    binary = workloads.binary("gp_mix")
    if binary is None:
        pytest.skip("gp_mix is not built (make)")
    r = memops.measure_cycles([binary, "--alloc", "malloc", "--scale", "0.01"], timeout=600)
    assert 0.01 < r["memops_share"] < 0.9
    assert r["cycles"] > r["instructions"] > r["memops_instructions"] > 0
