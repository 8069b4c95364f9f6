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
