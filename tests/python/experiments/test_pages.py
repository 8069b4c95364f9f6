"""`alloclab pages`: the heap page trace, LRU miss curves and swap
prefetchability, on reference patterns whose answers are known."""

import json
import os
import struct

import pytest

from conftest import peers_installed, run_cli

from alloclab.core import allocators
from alloclab.measure import memtool
from alloclab.experiments import pages

DISCARD = 1 << 63


def write_trace(path, words):
    with open(path, "wb") as f:
        f.write(struct.pack(f"<{len(words)}Q", *words))
    return str(path)


@pytest.mark.parametrize("k,rounds", [(1, 3), (5, 4), (64, 3)])
def test_cyclic_trace_misses_every_reuse_below_k_pages_and_none_above(tools, tmp_path, k, rounds):
    trace = write_trace(tmp_path / "t", [1000 + p for _ in range(rounds) for p in range(k)])
    sim = memtool.pagesim(trace, tools=tools)
    assert sim["fills"] == k and sim["references"] == k * rounds
    for m in range(0, k + 3):
        expected = (rounds - 1) * k if m < k else 0
        assert pages.misses_at(sim["curve"], m) == expected, m


def test_long_traces_keep_exact_distances_when_times_are_renumbered(tools, tmp_path):
    # 150,000 references: well past the simulator's first renumbering of reference times
    k, rounds = 300, 500
    words = [7 * p for _ in range(rounds) for p in range(k)]
    # halfway, the odd pages are discarded: each comes back once as a fill, and the first
    # reuse of an even page then sees only the 150 even pages
    half = len(words) // 2
    words = words[:half] + [w for p in range(1, k, 2) for w in (DISCARD | 7 * p, 1)] + words[half:]
    sim = memtool.pagesim(write_trace(tmp_path / "t", words), sizes=[k - 1, k], tools=tools)
    assert sim["references"] == k * rounds and sim["fills"] == k + k // 2
    assert pages.misses_at(sim["curve"], k) == 0
    assert pages.misses_at(sim["curve"], k - 1) == (rounds - 1) * k - k // 2 - k // 2
    assert pages.misses_at(sim["curve"], k // 2 - 1) == (rounds - 1) * k - k // 2
    assert sim["prefetch"][0]["misses"] == (rounds - 1) * k - k // 2 - k // 2
    assert sim["prefetch"][1]["misses"] == 0


def test_stack_distances_follow_lru_order(tools, tmp_path):
    # a b c b a d a: a at distance 3 (a b c b -> {b, c, a}), b at 2, a at 2 (a d a)... checked per size
    a, b, c, d = 1, 2, 3, 4
    sim = memtool.pagesim(write_trace(tmp_path / "t", [a, b, c, b, a, d, a]), tools=tools)
    # reuses: b (distance 2), a (distance 3), a (distance 2)
    assert sim["reuses"] == 3 and sim["fills"] == 4
    assert [pages.misses_at(sim["curve"], m) for m in range(5)] == [3, 3, 1, 0, 0]


def test_a_discarded_page_leaves_the_stack_and_comes_back_as_a_fill(tools, tmp_path):
    words = [1, 2, 3, 1, DISCARD | 2, 1, 2, 1]
    sim = memtool.pagesim(write_trace(tmp_path / "t", words), tools=tools)
    # 1 (fill) 2 (fill) 3 (fill) 1 (d=3) [2 dropped] 2 (fill again) 1 (d=2)
    assert sim["fills"] == 4 and sim["reuses"] == 2 and sim["discards"] == 1
    assert [pages.misses_at(sim["curve"], m) for m in range(4)] == [2, 2, 1, 0]


def test_prefetch_buffer_serves_the_rest_of_each_group_of_eight(tools, tmp_path):
    # 16 pages in two aligned groups, 5 rounds, memory of 8 pages: every reuse misses;
    # per round the first page of each group is non-prefetchable and brings in the other 7.
    words = [4096 + p for _ in range(5) for p in range(16)]
    sim = memtool.pagesim(write_trace(tmp_path / "t", words), sizes=[8, 16], tools=tools)
    at8, at16 = sim["prefetch"]
    assert at8 == {"memory_pages": 8, "misses": 64, "prefetchable": 56, "non_prefetchable": 8}
    assert at16["misses"] == 0


def reference_sim(words, sizes):
    """A plain LRU list and prefetch buffer, straight from Vam §4.6: slow but obvious."""
    from collections import OrderedDict
    stack, dist, refs, i = [], [], [], 0
    while i < len(words):
        w = words[i]
        if w & DISCARD:
            first, n = w & ~DISCARD, words[i + 1]
            stack = [p for p in stack if not first <= p < first + n]
            i += 2
            continue
        if w in stack:
            dist.append(len(stack) - stack.index(w))
            stack.remove(w)
        else:
            dist.append(0)
        stack.append(w)
        refs.append(w)
        i += 1
    out = []
    for m in sizes:
        buf, pre, non = OrderedDict(), 0, 0
        for p, d in zip(refs, dist):
            if d == 0 or d <= m:
                continue
            if p in buf:
                pre += 1
                del buf[p]
            else:
                non += 1
                for q in range(p & ~7, (p & ~7) + 8):
                    if q != p and q not in buf:
                        if len(buf) >= 256:
                            buf.popitem(last=False)
                        buf[q] = True
        out.append({"memory_pages": m, "misses": pre + non, "prefetchable": pre, "non_prefetchable": non})
    return dist, out


def test_simulator_matches_a_plain_lru_list_and_prefetch_buffer(tools, tmp_path):
    import random
    rnd = random.Random(7)
    words = []
    for _ in range(3000):
        r = rnd.random()
        if r < 0.01:
            words += [DISCARD | rnd.randrange(600), rnd.randrange(1, 40)]
        elif r < 0.6:
            words.append(rnd.randrange(40))               # a hot set
        else:
            words.append(rnd.randrange(600))              # a wide one: the buffer overflows
    # collapse consecutive repeats, as the tool does
    trace, last = [], None
    for w in words:
        if w == last:
            continue
        trace.append(w)
        last = None if w & DISCARD else w
    sizes = [0, 10, 40, 100, 300]
    sim = memtool.pagesim(write_trace(tmp_path / "t", trace), sizes=sizes, tools=tools)
    dist, prefetch = reference_sim(trace, sizes)
    reuses = [d for d in dist if d]
    for m in range(0, max(reuses) + 2):
        assert pages.misses_at(sim["curve"], m) == sum(1 for d in reuses if d > m), m
    assert sim["prefetch"] == prefetch
    assert sim["fills"] == dist.count(0)


MMAP_CYCLE = r"""
#include <sys/mman.h>
#include <stdint.h>
int main(void) {
  enum { K = 16, R = 5, P = 4096 };
  char *m = mmap(0, (K + 8) * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 1;
  volatile char *base = (volatile char *)(((uintptr_t)m + 8 * P - 1) & ~(uintptr_t)(8 * P - 1));
  for (int r = 0; r < R; r++)
    for (int i = 0; i < K; i++) base[i * P + 100] = (char)r;
  /* a thread-stack mapping is not heap */
  volatile char *s = mmap(0, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  for (int r = 0; r < R; r++) for (int i = 0; i < 4; i++) s[i * P] = 1;
  munmap(m, (K + 8) * P);
  return 0;
}
"""

def test_program_page_trace_is_exact_on_anonymous_memory(tools, cbuild, tmp_path):
    exe = cbuild(MMAP_CYCLE, "mmap_cycle")
    out = tmp_path / "out"
    p = run_cli("pages", "--allocators", "glibc", "--sizes", "8,15,16", "-o", str(out), "--", exe)
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "pages.json").read_text())["allocators"]["glibc"]
    assert res["references"] == 16 * 5 and res["fills"] == 16
    assert res["curve"] == [[0, 64], [16, 0]]
    assert res["prefetch"] == [
        {"memory_pages": 8, "misses": 64, "prefetchable": 56, "non_prefetchable": 8},
        {"memory_pages": 15, "misses": 64, "prefetchable": 56, "non_prefetchable": 8},
        {"memory_pages": 16, "misses": 0, "prefetchable": 0, "non_prefetchable": 0}]
    assert res["max_pages_in_use"] == 16
    assert os.path.getsize(out / "pages_miss_curves.png") > 1000
    assert os.path.getsize(out / "pages_prefetch.png") > 1000


MALLOC_CYCLE = r"""
#include <stdlib.h>
static char *volatile sink;
int main(void) {
  enum { K = 16, R = 5 };
  char *p = malloc(K * 4096); sink = p;
  for (int r = 0; r < R; r++)
    for (int i = 0; i < K; i++) ((volatile char *)p)[i * 4096 + 100] = (char)r;
  free(p);
  return 0;
}
"""


def test_each_allocator_runs_unreplaced_and_its_cycle_shows(tools, cbuild, tmp_path):
    exe = cbuild(MALLOC_CYCLE, "malloc_cycle")
    allocs = ["glibc"] + peers_installed()
    res = pages.run_pages([exe], str(tmp_path), [allocators.find(a) for a in allocs], sizes=[8])
    assert set(res["allocators"]) == set(allocs)
    for name, r in res["allocators"].items():
        c = r["curve"]
        ys = [y for _, y in c]
        assert ys == sorted(ys, reverse=True), name           # a miss curve never rises
        assert c[-1] == [r["max_distance"], 0], name
        # every reuse in rounds 2..5 sees the other 15 pages first
        assert pages.misses_at(c, 15) >= 4 * 16, name
        assert r["fills"] >= 16 and r["status"] == 0, name
