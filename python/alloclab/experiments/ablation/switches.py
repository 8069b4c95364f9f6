"""Vam's design switches (docs/vam.md, "Design switches") and the settings the ablation
runs: every switch's alternatives, each alone with the others at their defaults, then the
A/A control (the default again).

    VAM_CLASSES      fine | coarse           size-class spacing (paper §3.1)
    VAM_BLOCK_ALLOC  bump | lifo             allocation inside a block (§3.4)
    VAM_ORDER        auto | recent | fifo    where a block that regains space goes (§3.5)
    VAM_HEADERS      off | on                per-object headers on small objects (§3.3)
    VAM_BLOCK_PAGES  1 | 4 | 16              fewest pages per medium block (§3.1)
    VAM_BLOCK_OBJECTS 32 | 1 | 64            blocks doubled until they hold 32 (64) objects, or fixed
    VAM_PAGE_MAX     1024 | 8192 | 4096      largest object in page blocks; above, boundary-tagged chunks (§3.1)
    VAM_DISCARD      delayed | eager | off   empty-page discard (§3.6)
    VAM_LARGE_QUICK  on | off                freed large chunks held whole on quick lists (not the paper's)

API::

    SWITCHES, Switch
    Setting(switch, value)    # .key ("default", "VAM_ORDER=fifo", CONTROL), .env()
    settings() -> list[Setting]
    CONTROL, PAD, FIXED_SEEDS
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Switch:
    name: str
    default: str
    values: tuple     # the default first
    paper: str        # what the paper claims, for the report


SWITCHES: tuple[Switch, ...] = (
    Switch("VAM_CLASSES", "fine", ("fine", "coarse"),
           "fine-grained exact-fit classes cut internal fragmentation and L2 misses; coarse ones "
           "reuse space across sizes sooner (253.perlbmk)"),
    Switch("VAM_BLOCK_ALLOC", "bump", ("bump", "lifo"),
           "reap allocation (bump, then the block's free list) needs fewer instructions and keeps "
           "allocation order"),
    Switch("VAM_ORDER", "auto", ("auto", "recent", "fifo"),
           "ordered per-size allocation: a block that regains space goes to the front of its "
           "class's available list, so new objects fill recently touched pages (page-level "
           "locality; recent is the paper's rule, auto keeps it where a class has more than four "
           "blocks waiting or the frees come in a run)"),
    Switch("VAM_HEADERS", "off", ("off", "on"),
           "headerless small objects: headers add ~15% L2 misses and ~3% time (10% on 197.parser)"),
    Switch("VAM_BLOCK_PAGES", "4", ("4", "1", "16"),
           "one page for small objects, four for medium: less page-internal fragmentation at the "
           "block's end"),
    Switch("VAM_BLOCK_OBJECTS", "32", ("32", "1", "64"),
           "not the paper's: it fixes no block size; blocks of big objects grown until they hold 32 "
           "(as jemalloc sizes its slabs per class) turn over less often than blocks of one size"),
    Switch("VAM_PAGE_MAX", "1024", ("1024", "8192", "4096"),
           "page blocks for small and medium objects only (up to 504 bytes); larger ones best fit "
           "among chunks with boundary tags and exact-size lists, coalesced at once (the "
           "paper's large objects). 8192: classes eight per power of two above 1 KiB in blocks too"),
    Switch("VAM_DISCARD", "delayed", ("delayed", "eager", "off"),
           "discarding every empty page at once costs a system call and a fault per reuse, "
           "\"low\" against paging"),
    Switch("VAM_LARGE_QUICK", "on", ("on", "off"),
           "not the paper's, which coalesces every freed large object at once: freed chunks of "
           "1..64 KiB held whole on per-size lists (at most a sixteenth of the live large bytes) "
           "for the next request of their size, at the price of the memory they hold"),
)

@dataclasses.dataclass(frozen=True)
class Setting:
    switch: str | None   # None: every switch at its default
    value: str

    @property
    def key(self) -> str:
        if self.switch is None:
            return CONTROL if self.value == "again" else "default"
        return f"{self.switch}={self.value}"

    def env(self) -> dict:
        """Every switch explicitly at its default, but this one; padded so that
        every setting's environment has the same size (see PAD)."""
        e = {s.name: s.default for s in SWITCHES}
        if self.switch is not None:
            e[self.switch] = self.value
        used = sum(len(v) for v in e.values())
        e[PAD] = "x" * (_MAX_VALUES - used)
        e.update(FIXED_SEEDS)
        return e


# The environment's strings sit at the top of the initial stack, so a value
# one byte longer moves every stack address of the program: under cachegrind
# (address randomisation off) that alone changes the miss counts a little. A
# padding variable keeps the environment's size the same for every setting,
# so the counts move only when the allocator behaves differently.
PAD = "ALLOCLAB_ABLATION_PAD"
# Interpreters that randomise their hashing per process would change their
# allocations (and misses) from run to run whatever the allocator does.
FIXED_SEEDS = {"PERL_HASH_SEED": "0", "PYTHONHASHSEED": "0"}
_MAX_VALUES = sum(max(len(v) for v in s.values) for s in SWITCHES)


# The A/A control: the default setting again, run and timed as one more
# setting. Its ratio to the default is what the method reports when nothing
# changed; an alternative is called faster or slower only when its interval
# excludes 1, and the control's own interval shows how often that can fail.
CONTROL = "control"


def settings() -> list[Setting]:
    out = [Setting(None, "")]
    for s in SWITCHES:
        out.extend(Setting(s.name, v) for v in s.values if v != s.default)
    out.append(Setting(None, "again"))
    return out
