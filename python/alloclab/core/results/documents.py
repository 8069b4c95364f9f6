"""The JSON documents of drag, frag, pages, the ablation and the stand-ins' calibration (docs/formats.md): one writer and
one reader for all of them, each document with its own Format.

API::

    DRAG, FRAG, PAGES, ABLATION, CALIBRATION   # their Formats
    write_document(fmt, path, data, indent=2) -> str   # {"format_version": ..., **data}
    read_document(fmt, path) -> dict         # LabError: missing, not JSON, another version
"""

from __future__ import annotations

from alloclab import LabError
from alloclab.core.results.files import Format, load_json, write_json

DRAG = Format("drag", 1)
FRAG = Format("frag", 1)
PAGES = Format("pages", 1)
ABLATION = Format("ablation", 1, redo="run the ablation again")
CALIBRATION = Format("calibration", 1, redo="remake it: alloclab study --calibrate")


def write_document(fmt: Format, path: str, data: dict, indent: int = 2) -> str:
    """DATA with "format_version" first, as JSON in PATH."""
    return write_json(path, {"format_version": fmt.version, **{k: v for k, v in data.items()
                                                                if k != "format_version"}}, indent=indent)


def read_document(fmt: Format, path: str) -> dict:
    """The JSON object in PATH, checked against FMT (no format_version: version 0)."""
    data = load_json(path, f"{fmt.what} file")
    if not isinstance(data, dict):
        raise LabError(f"{path!r} is not a {fmt.what} file")
    fmt.check(path, data.get("format_version", 0))
    return data
