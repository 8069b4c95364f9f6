"""`alloclab frag`: heap pages in use (touched, not discarded) over live data,
on programs whose pages are known by construction."""

import json
import os


from conftest import peers_installed, run_cli

from alloclab.experiments import frag
from alloclab.core import allocators
from alloclab.core.levels import Level
from alloclab.measure import memtool


# No malloc at all: the only heap is what the program maps itself.
PAGES_PROG = r"""
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
int main(void) {
  enum { P = 4096 };
  volatile char *a = mmap(0, 10 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (int i = 0; i < 6; i++) a[i * P] = 1;            /* 6 in use */
  madvise((void *)a, 10 * P, MADV_DONTNEED);            /* 0 */
  for (int i = 0; i < 3; i++) a[i * P] = 1;            /* 3 */
  for (int i = 3; i < 5; i++) (void)a[i * P + 9];      /* 5: reads touch too */
  volatile char *b = mmap(0, 8 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (int i = 0; i < 8; i++) b[i * P] = 1;            /* 13: the maximum */
  munmap((void *)b, 8 * P);                             /* 5 */
  volatile char *s = mmap(0, 16 * P, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  for (int i = 0; i < 16; i++) s[i * P] = 1;           /* a thread stack: not heap */
  int fd = open("/proc/self/exe", O_RDONLY);
  volatile char *f = mmap(0, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  f[0] = 1; f[P] = 1;                                   /* a file mapping: not heap */
  a[9 * P] = 1;                                         /* 6 at exit */
  return 0;
}
"""

def test_pages_in_use_follow_touches_discards_and_unmaps_exactly(tools, cbuild, tmp_path):
    exe = cbuild(PAGES_PROG, "frag_pages")
    r = memtool.run([exe], str(tmp_path), "t", tools=tools)
    assert r.status == 0
    assert r.summary["max_pages_in_use"] == 13
    assert r.summary["pages_in_use_at_exit"] == 6
    assert r.summary["max_live_bytes"] == 0


LIVE_PROG = r"""
#include <stdlib.h>
#include <string.h>
static char *volatile sink;
__attribute__((noinline)) static void touch(char *p, size_t n) { memset(p, 7, n); sink = p; }
int main(void) {
  /* 3 x 40 pages, one at a time: glibc serves the first from mmap and gives it back. */
  for (int i = 0; i < 3; i++) { char *p = malloc(40 * 4096); touch(p, 40 * 4096); free(p); }
  char *q = malloc(10000); touch(q, 10000);
  return 0;
}
"""


def test_fragmentation_is_pages_in_use_over_live_pages(tools, cbuild, tmp_path):
    exe = cbuild(LIVE_PROG, "frag_live")
    out = tmp_path / "out"
    p = run_cli("frag", "--allocators", "glibc", "-o", str(out), "--", exe)
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "frag.json").read_text())["allocators"]["glibc"]["Adv_0"]
    assert res["max_live_bytes"] == 40 * 4096                  # requested, not the chunk size
    assert res["max_live_pages"] == 40
    # 40 pages and a header: the chunk starts 16 bytes into its mapping, and the
    # tcache glibc puts on the brk heap at the first malloc adds 1 more page.
    assert 41 <= res["max_pages_in_use"] <= 43
    assert res["fragmentation"] == round(res["max_pages_in_use"] / 40, 6)
    assert os.path.getsize(out / "frag.png") > 1000
    assert "glibc" in p.stdout and "Adv_0" in p.stdout


def test_fragmentation_helper():
    assert frag.fragmentation(10, 4096 * 4) == (4, 2.5)
    assert frag.fragmentation(10, 4097) == (2, 5.0)
    assert frag.fragmentation(3, 0) == (0, None)


SMALL_PROG = r"""
#include <stdlib.h>
#include <string.h>
static char *volatile sink;
__attribute__((noinline)) static char *al(size_t n) { char *p = malloc(n); memset(p, 1, n); sink = p; return p; }
int main(void) {
  char *p[3000];
  for (int i = 0; i < 3000; i++) p[i] = al(48 + (i % 5) * 16);
  for (int i = 0; i < 3000; i += 2) free(p[i]);
  for (int i = 0; i < 1000; i++) al(100);
  return 0;
}
"""


def test_littered_runs_count_the_litter_left_live(tools, cbuild, tmp_path):
    exe = cbuild(SMALL_PROG, "frag_small")
    allocs = ["glibc"] + peers_installed()[:1]
    res = frag.run_frag([exe], str(tmp_path), [allocators.find(a) for a in allocs],
                         [Level.ADV_0, Level.ADV_1, Level.ADV_3])
    for name in allocs:
        row = res["allocators"][name]
        assert set(row) == {"Adv_0", "Adv_1", "Adv_3"}
        clean = row["Adv_0"]["max_live_bytes"]
        # the program alone: 3000 objects of 48..112 bytes at the peak (libstdc++'s
        # emergency pool adds one more object when the allocator pulls libstdc++ in)
        assert clean >= sum(48 + (i % 5) * 16 for i in range(3000))
        assert clean < row["Adv_1"]["max_live_bytes"] < row["Adv_3"]["max_live_bytes"]
        for cell in row.values():
            assert cell["status"] == 0
            assert cell["max_pages_in_use"] >= cell["max_live_pages"] > 0
            assert cell["fragmentation"] == round(cell["max_pages_in_use"] / cell["max_live_pages"], 6)
