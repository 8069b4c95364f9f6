"""Made-up runs of the benches that can be kept (bench/corpus, bench/threads/originals): their JSON
as the bench writes it, with times typed here rather than measured, for the tests of rendering
and keeping. Nothing here is a measurement."""

import copy
import importlib.machinery
import importlib.util
import os

from conftest import ROOT

# the bench that writes and renders each kind of kept bench run (KIND.json.gz, KIND.md)
BENCHES = {"corpus": os.path.join(ROOT, "bench", "corpus"),
           "originals": os.path.join(ROOT, "bench", "threads", "originals")}
_LOADED = {}

RECORD = {"alloclab": "0.1.0", "commit": "0123456789abcdef0123456789abcdef01234567", "changed": False,
          "command": ["bench/corpus", "--rounds", "3"], "started": "2026-11-29T05:00:00Z",
          "finished": "2026-11-29T05:03:00Z"}
MACHINE = {"hostname": "test", "cpus": 2, "load": {"seconds": 180.0, "cpus": 2, "others_share": 0.012,
                                                   "steal_share": 0.001, "busy": False, "busy_share": 0.1}}
INFO = [{"name": "glibc", "version": "glibc 2.36", "path": None},
        {"name": "mimalloc", "version": "2.0.9 (libmimalloc2.0)", "path": "/usr/lib/libmimalloc.so.2"},
        {"name": "vam", "version": "alloclab build of 2026-11-29 04:00 UTC", "path": "build/release/src/vam/libvam.so"}]


def bench(kind):
    """The bench script of KIND as a module (a script with no .py; nothing runs on loading)."""
    if kind not in _LOADED:
        loader = importlib.machinery.SourceFileLoader(f"bench_{kind}", BENCHES[kind])
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
        loader.exec_module(mod)
        _LOADED[kind] = mod
    return _LOADED[kind]


def corpus_doc():
    """Two programs, three rounds: vam behind mimalloc on jq, level with glibc on sort."""
    times = {"jq": {"glibc": [1.00, 1.10, 1.05], "mimalloc": [0.80, 0.85, 0.82], "vam": [0.90, 0.95, 0.93]},
             "sort": {"glibc": [2.00, 2.10, 2.05], "mimalloc": [2.20, 2.30, 2.25], "vam": [1.90, 2.10, 2.00]}}
    return copy.deepcopy({
        "format_version": 1, "record": RECORD, "machine": MACHINE, "allocator_info": INFO,
        "rounds": 3, "size": "default", "inputs": "/tmp/corpus/inputs",
        "programs": {p: {"cmd": [f"/usr/bin/{p}", f"/tmp/corpus/inputs/{p}.txt"],
                         "times": {a: [[k + 1, t] for k, t in enumerate(ts)] for a, ts in by.items()}}
                     for p, by in times.items()},
        "skipped": {"git": "git is not installed (Debian package git)"}, "problems": []})


def originals_doc():
    """One benchmark, three rounds, the allocators rotated: vam ahead of mimalloc in every round."""
    runs = []
    for rnd, by in enumerate([{"glibc": 30.0, "mimalloc": 20.0, "vam": 18.0},
                              {"glibc": 31.0, "mimalloc": 21.0, "vam": 18.5},
                              {"glibc": 29.0, "mimalloc": 20.5, "vam": 18.2}]):
        for alloc, score in by.items():
            runs.append({"round": rnd, "bench": "larson", "alloc": alloc, "score": score, "status": "ok",
                         "wall": 10.0, "user": 19.0, "sys": 0.5, "max_rss_kb": 40960 + rnd, "other_cpu": 0.01,
                         "tries": 1, "disturbed": False, "output": ""})
    return copy.deepcopy({
        "format_version": 1, "record": dict(RECORD, command=["bench/threads/originals", "--suite", "suite"]),
        "machine": MACHINE, "allocator_info": INFO, "suite": "/tmp/suite", "procs": 2, "rounds": 3,
        "quiet": 0.05, "made_again": 0, "still_disturbed": 0, "runs": runs})


DOCS = {"corpus": corpus_doc, "originals": originals_doc}


# A twin's second run over its first, per round, before the factor: an A/A null that holds 1.
AA_NOISE = (0.97, 1.04, 0.99)


def corpus_twin_doc(factor=1.0, twin="mimalloc"):
    """corpus_doc with TWIN measured again in every round (as NAME~again), each time FACTOR times
    its first run give or take AA_NOISE: 1.0 an A/A null that holds 1, 2.0 one that excludes it."""
    doc = corpus_doc()
    doc["twin"] = twin
    for p in doc["programs"].values():
        p["times"][twin + "~again"] = [[k, t * factor * AA_NOISE[k - 1]] for k, t in p["times"][twin]]
    return doc


def originals_twin_doc(factor=1.0, twin="mimalloc"):
    """originals_doc with TWIN measured again in every round (NAME~again), FACTOR times its first
    run give or take AA_NOISE."""
    doc = originals_doc()
    doc["twin"] = twin
    doc["runs"] += [dict(r, alloc=twin + "~again", score=r["score"] * factor * AA_NOISE[r["round"]])
                    for r in doc["runs"] if r["alloc"] == twin]
    return doc
