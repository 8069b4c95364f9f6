#!/usr/bin/env python3
"""check_sites.py SITES_JSON — liballoclab_sites.so charged sites_pattern's four
functions exactly: calls, bytes, peak, leaks and temporaries (see sites_pattern.c).
Frames are named here by the shim's own dladdr names (the program is built with
-rdynamic), independently of `alloclab sites`."""
import json
import sys

ALLOCATORS = {"malloc", "calloc", "realloc", "free", "posix_memalign", "memalign", "aligned_alloc"}
EXPECT = {  # function: (calls, bytes, peak_bytes, leaked_bytes, leaked_objects, temporaries)
    "make_small": (1500, 150000, 0, 0, 0, 1500),
    "make_big": (5, 5 << 20, 5 << 20, 0, 0, 1),
    "grow_buffer": (10, 32736, 0, 0, 0, None),
    "leak_some": (10, 640, 0, 640, 10, 0),
}


def caller(site, modules):
    for mod, _off, sym, _soff in site["frames"]:
        if mod >= 0 and modules[mod]["path"].endswith("liballoclab_sites.so"):
            continue
        if sym in ALLOCATORS:
            continue
        return sym
    return None


def main(path):
    d = json.load(open(path))
    assert d["kind"] == "alloclab-sites" and d["complete"], "incomplete record"
    got = {}
    for s in d["sites"]:
        fn = caller(s, d["modules"])
        if fn in EXPECT:
            t = got.setdefault(fn, [0] * 6)
            for i, k in enumerate(("calls", "bytes", "peak_bytes", "leaked_bytes", "leaked_objects",
                                   "temporaries")):
                t[i] += s[k]
    bad = []
    for fn, want in EXPECT.items():
        have = got.get(fn)
        if have is None:
            bad.append(f"{fn}: no site")
            continue
        for name, w, h in zip(("calls", "bytes", "peak_bytes", "leaked_bytes", "leaked_objects",
                               "temporaries"), want, have):
            if w is not None and w != h:
                bad.append(f"{fn}: {name} {h}, want {w}")
    if d["peak_bytes"] < 5 << 20:
        bad.append(f"heap peak {d['peak_bytes']} < 5 MiB")
    for b in bad:
        print("check_sites:", b)
    if not bad:
        print("check_sites: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
