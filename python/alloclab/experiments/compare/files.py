"""A comparison's exports: the summary with every run as one JSON file, the table as
Markdown, a copy of results.csv (--export-json, --export-markdown, --export-csv). The result
files themselves are core.results' (runs.py: results.csv; summary.py: summary.json).

API::

    export(summary, outdir, exports) -> list[str]   # exports: {"json"|"markdown"|"csv": path or None}
"""

from __future__ import annotations

import os
import shutil

from alloclab.core.results.runs import read_rows
from alloclab.core.results.summary import Summary, write_export
from alloclab.experiments.compare.text import markdown_table


def export(summary: Summary, outdir: str, exports: dict) -> list[str]:
    """Write the requested export files; returns their paths."""
    written = []
    src = os.path.join(outdir, "results.csv")
    json_path, md_path, csv_path = exports.get("json"), exports.get("markdown"), exports.get("csv")
    runs = read_rows(src) if (json_path or md_path) and os.path.exists(src) else []
    if json_path:
        written.append(write_export(summary, runs, str(json_path)))
    if md_path:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(markdown_table(summary, runs))
        written.append(str(md_path))
    if csv_path:
        if os.path.abspath(src) != os.path.abspath(csv_path):
            shutil.copyfile(src, csv_path)
        written.append(str(csv_path))
    return written
