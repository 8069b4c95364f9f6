"""The allocation-site files: the per-process records liballoclab_sites.so writes (read here, the
one reader), and the DHAT-format export of `alloclab sites --dhat` (written here).

A record (sites.PID.json, format_version 1, kind "alloclab-sites"; docs/formats.md) holds the
process's totals and, per call stack, its counts and frames as [module, offset, symbol, symbol
offset]; the DHAT export is valgrind's DHAT file version 2, which its dh_view.html opens.

API::

    RECORD                                # Format of the records
    KIND = "alloclab-sites"
    read_record(path) -> dict             # LabError: unreadable, another kind or version
    write_dhat(path, doc) -> str
"""

from __future__ import annotations

from alloclab import LabError
from alloclab.core.results.files import Format, load_json, write_json

RECORD = Format("allocation sites", 1, redo="profile the program again with --stacks")
KIND = "alloclab-sites"


def read_record(path: str) -> dict:
    d = load_json(path, "sites record")
    if not isinstance(d, dict) or d.get("kind") != KIND:
        kind = d.get("kind") if isinstance(d, dict) else None
        raise LabError(f"{path}: not an alloclab sites record (kind {kind!r})")
    RECORD.check(path, d.get("format_version"))
    return d


def write_dhat(path: str, doc: dict) -> str:
    return write_json(path, doc, indent=None, atomic=False)
