"""Kept bench runs: what a bench under bench/ measured, in its JSON, beside the Markdown it renders.

A directory docs/runs/NAME/ keeps either a study run (alloclab.experiments.study.outputs.keep)
or one bench run: KIND.json.gz, the bench's JSON gzip-compressed (compress: no name or time in
the header), and KIND.md, the report the bench renders from that JSON alone, KIND naming the
bench (bench/corpus writes corpus.json, bench/threads/originals originals.json). The JSON holds
every time the bench measured and, as a study's findings.json does, where the run came from:
`record` (the tree's commit, whether it had changes, the command line, start and end),
`machine` (with the load measured over the run) and `allocator_info` (each allocator's name,
version and library).

API::

    provenance(command, started, load, allocs) -> dict   # {"record", "machine", "allocator_info"}
    in_checkout(info) -> dict             # an allocator's info, its library named inside the checkout
    record_problems(doc) -> list[str]     # why DOC's record cannot be cited: no commit, a changed tree
    record_line(doc) / allocators_line(doc) -> str   # the report's lines on where the run came from
    read_bench(path, fmt) -> dict         # FILE.json (or FILE.json.gz), or the KIND.json of a directory
    write_bench(path, doc, fmt)           # DOC as the bench's JSON, with fmt's format_version in it
    rerender(path, fmt, render, output=None) -> str   # render(read_bench(path)), into OUTPUT/KIND.md too
    bench_kind(dir) -> str | None         # KIND when DIR holds a kept bench run (and nothing else)
    keep_bench(out, fmt, render, dest) -> list[str]   # OUT's run kept in DEST (LabError: see there)
    pick_twin(asked, names) -> str | None     # the allocator a bench measures twice a round (--twin)
    aa_reading(aa) / standing_over_null(pr, aa) -> str   # the A/A null's word, and vam's read against it
    twin_rule(twin, what) -> str              # the report's paragraph saying how the null is read

The A/A null of a bench run: one allocator (the twin) runs a second time in every round, under
its name with AGAIN after it (allocators.again), never next to its first run; the bench reports
the twin's time over its original's, paired by round as vam's over the best peer is, and reads
vam's verdict against it (twin_rule). The twin is no peer: never the best one.

Here fmt is the bench's Format (its `what` is KIND) and render turns the bench's JSON into its
Markdown report.
"""

from __future__ import annotations

import os
import re
import shutil

from alloclab import LabError
from alloclab.core import machine, paths
from alloclab.core.allocators import again
from alloclab.core.results.files import GZ, Format, compress, load_json, stored, write_json

JSON, MD = ".json", ".md"


def provenance(command: list, started: str, load, allocs: list) -> dict:
    """Where a bench run came from, under the names a study's meta gives them: the run record
    (machine.record of COMMAND, STARTED), the machine with LOAD (a core.load.Load watched over
    the run) and each of ALLOCS' (core.allocators.Allocator) name, version and library, a
    library inside the checkout named by its path there (in_checkout)."""
    return {"record": machine.record(command, started), "machine": machine.during(load),
            "allocator_info": [in_checkout(a.info()) for a in allocs]}


def in_checkout(info: dict, root: str = paths.SOURCE_ROOT) -> dict:
    """INFO (Allocator.info()) with its library's path relative to ROOT, the checkout this
    alloclab runs from, when the library lies inside it (build/release/src/vam/libvam.so): a
    reader finds it there in their own checkout, and the run names no place on this machine."""
    path = info.get("path")
    if not path or not os.path.isabs(path):
        return info
    # the library's own name kept (libvam.so, not the file its link names)
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for top in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        for p in (path, real):
            rel = os.path.relpath(p, top)
            if rel != ".." and not rel.startswith(".." + os.sep):
                return {**info, "path": rel}
    return info


def record_problems(doc: dict) -> list[str]:
    """Why the run in DOC cannot be cited: it names no commit (an installed alloclab, or no
    record at all), or its tree differed from that commit (the commit alone does not say what ran)."""
    rec = doc.get("record") or {}
    out = []
    if not re.fullmatch(r"[0-9a-f]{40}", str(rec.get("commit") or "")):
        out.append("its record names no commit (run it from a git checkout of alloclab)")
    if rec.get("changed") is not False:
        out.append("its tree had changes beside the commit (commit them, then run it again)")
    return out


# Directories every Debian machine has: a path there names the system's files, not this machine's.
SYSTEM_DIRS = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/etc/")


def paths_outside(doc: dict) -> list[str]:
    """The absolute paths in the run's recorded command (whole arguments, or parts of one between
    commas, "=" and "@", as in --allocators a,name=PATH@VAR=V) that lie neither in the checkout nor
    in the system's directories: a scratch output directory, a library built elsewhere. Kept, they
    would name where this machine keeps its files."""
    found = []
    for arg in (doc.get("record") or {}).get("command") or []:
        for part in re.split(r"[,=@]", str(arg)):
            if part.startswith("/") and not part.startswith(SYSTEM_DIRS) and part not in found \
                    and in_checkout({"path": part})["path"] == part:  # in_checkout makes the inside relative
                found.append(part)
    return found


def record_line(doc: dict) -> str:
    """One line of a bench report: the commit, when the run was made, and how busy the machine was."""
    rec, load = doc.get("record"), (doc.get("machine") or {}).get("load") or {}
    if not rec:
        return "Run: no record of where it came from (written before bench runs kept one)"
    tree = (f"commit {rec['commit']}" + (" with changes" if rec.get("changed") else "")
            if rec.get("commit") else f"alloclab {rec.get('alloclab')} (no commit)")
    line = f"Run: {tree}, {rec.get('started')} to {rec.get('finished')}"
    if load.get("others_share") is None:
        return line + "; the machine's load could not be read"
    return (line + f"; {'busy' if load.get('busy') else 'quiet'}: other processes used "
            f"{load['others_share']:.0%} of the {load.get('cpus')} CPUs' time, "
            f"{load.get('steal_share') or 0:.0%} stolen")


def allocators_line(doc: dict) -> str:
    """The allocators of a bench report, each with its library and version (allocator_info)."""
    return "; ".join(f"{a['name']} = {a.get('path') or 'the C library'} ({a.get('version')})"
                     + "".join(f" {e}" for e in a.get("env") or []) for a in doc.get("allocator_info") or [])


def read_bench(path: str, fmt: Format) -> dict:
    """The bench JSON at PATH (FILE.json, kept compressed or not; a FILE.json.gz; or a directory
    holding FMT.what.json, as a bench's output or a kept run does); LabError when it is missing,
    not JSON, or of a version FMT does not read (a file without format_version is version 0)."""
    if os.path.isdir(path):
        path = os.path.join(path, fmt.what + JSON)
    elif path.endswith(GZ):
        path = path[: -len(GZ)]
    doc = load_json(path, f"{fmt.what} run")
    if not isinstance(doc, dict):
        raise LabError(f"{stored(path)!r} is not a {fmt.what} run (not a JSON object)")
    fmt.check(stored(path), doc.get("format_version", 0))
    return doc


def write_bench(path: str, doc: dict, fmt: Format) -> str:
    """DOC written to PATH as FMT's JSON (format_version first); PATH."""
    return write_json(path, {"format_version": fmt.version, **doc}, indent=1)


def rerender(path: str, fmt: Format, render, output: str | None = None) -> str:
    """The report RENDER gives the bench JSON at PATH (read_bench), from that JSON alone; written
    to OUTPUT/KIND.md as well when OUTPUT is given."""
    text = render(read_bench(path, fmt))
    if output:
        os.makedirs(output, exist_ok=True)
        with open(os.path.join(output, fmt.what + MD), "w", encoding="utf-8") as f:
            f.write(text)
    return text


def bench_kind(path: str) -> str | None:
    """KIND when the directory PATH is a kept bench run: KIND.json.gz and KIND.md, nothing else."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    if len(names) != 2 or not names[0].endswith(JSON + GZ):
        return None
    kind = names[0][: -len(JSON + GZ)]
    return kind if names[1] == kind + MD else None


def keep_bench(out: str, fmt: Format, render, dest: str) -> list[str]:
    """Keep the bench run written to OUT (OUT/KIND.json and OUT/KIND.md) in DEST (docs/runs/NAME):
    KIND.json compressed and KIND.md; DEST holds nothing else afterwards. LabError, and DEST
    untouched, unless RENDER makes OUT/KIND.md exactly from OUT/KIND.json now (a kept run must
    re-render to what it says) and the run's record names a commit with no changes beside it.
    The kept JSON names files in the source tree relative to it (files.relative_to) and the kept
    .md is rendered from it. Returns the kept files' paths."""
    kind = fmt.what
    src, md = os.path.join(out, kind + JSON), os.path.join(out, kind + MD)
    if not os.path.exists(src) or not os.path.exists(md):
        raise LabError(f"{out!r} is not a {kind} run's directory (no {kind}{JSON} and {kind}{MD})")
    doc = read_bench(src, fmt)
    rendered = render(doc)
    with open(md, encoding="utf-8") as f:
        if f.read() != rendered:
            raise LabError(f"{md!r} is not what {kind}{JSON} renders now: render it again "
                           f"(--report) or run the bench again")
    problems = record_problems(doc)
    if far := paths_outside(doc):
        problems.append(f"its command names {', '.join(far)}, outside the checkout (run it again with "
                        "-o out/NAME and libraries inside the checkout or the system's)")
    if problems:
        raise LabError(f"{out!r} cannot be kept: " + "; ".join(problems))
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    kept = compress(src, os.path.join(dest, kind + JSON + GZ), within=paths.SOURCE_ROOT)
    with open(os.path.join(dest, kind + MD), "w", encoding="utf-8") as f:
        f.write(render(read_bench(kept, fmt)))  # paths in the tree as the kept JSON gives them
    return [kept, os.path.join(dest, kind + MD)]


# ---- the A/A null of a bench run

TWIN_DEFAULT = ("mimalloc", "glibc")   # the twin when none is asked for: the first of these run
NOISY = "noisy: A/A excludes 1"
NO_VERDICT = "no verdict (noisy)"


def pick_twin(asked: str | None, names: list) -> str | None:
    """The allocator of NAMES a bench measures twice in every round: ASKED ("none": no twin;
    None or "auto": mimalloc when it runs, else glibc, else the first allocator not named vam*, else
    none). LabError when ASKED is not one of NAMES. mimalloc by default: a fast peer, the originals'
    reference and the corpus's best over the programs in the kept runs of 2026-11-29, so its noise
    is close to that of the comparisons judged (no single peer is the best on every program)."""
    if asked is not None and asked.lower() == "none":
        return None
    if asked is not None and asked.lower() != "auto":
        if asked not in names:
            raise LabError(f"--twin {asked!r} is not one of the allocators run ({', '.join(names)})")
        return asked
    for name in TWIN_DEFAULT:
        if name in names:
            return name
    return next((n for n in names if not n.startswith("vam")), None)


def aa_reading(aa) -> str:
    """The A/A null's word (AA: a stats.PairedRatio): "holds 1", or NOISY when its interval
    excludes 1 (one round: no interval, "holds 1")."""
    return NOISY if aa is not None and aa.clear else "holds 1"


def standing_over_null(pr, aa) -> str:
    """vam's word over the best peer (PR's first / tied / behind), or NO_VERDICT where the same
    run's A/A null (AA) excludes 1: its noise there is more than the interval allows for."""
    return NO_VERDICT if aa is not None and aa.clear else pr.standing


def twin_rule(twin: str | None, what: str = "benchmark") -> str:
    """The report's paragraph on the A/A null of a run whose twin is TWIN (None: a run without
    one, --twin none); WHAT names a row (benchmark, program)."""
    if twin is None:
        return ("No A/A null in this run (--twin none): its verdicts are not read against its own noise.")
    return (f"A/A null: {twin} runs a second time in every round as {again(twin)}, never next to its "
            f"first run; the A/A column is {again(twin)}'s time over {twin}'s, paired by round as vam's "
            f"over the best peer is. It measures an effect of nothing. Where its interval excludes 1 the "
            f"{what} is marked \"{NOISY}\": the run's noise there is more than its intervals allow for, "
            f"and vam's reading there is \"{NO_VERDICT}\", whatever its interval. Elsewhere first / tied "
            f"/ behind stand; a tie's interval set beside the A/A one shows how much of it is the run's "
            f"noise. The twin is no peer: never the best one.")
