"""A comparison's summary (DIR/summary.json, and --export-json with its runs; docs/formats.md):
its dataclasses, its one reader and its one writer.

A :class:`Summary` is what `alloclab compare` computed from its runs: the
:class:`Meta` of the comparison (command, machine, allocators, levels,
baseline, ...), one :class:`CellSummary` per allocator x level (statistics
over its ok runs, ratios to the baseline), and the stdout check. Each key of
the file is a field here, in the order written; keys a newer alloclab of the
same format version adds are kept (``extra``) and written back.

API::

    Summary, Meta, CellSummary
    FORMAT, KIND_SUMMARY, KIND_EXPORT
    read_summary(path) -> Summary             # summary.json or an --export-json file
    write_summary(summary, outdir) -> str     # DIR/summary.json
    write_export(summary, runs, path) -> str  # the summary and every run (RunRow), one file
"""

from __future__ import annotations

import dataclasses
import os

from alloclab import LabError
from alloclab.core.levels import Level, cell_key
from alloclab.core.results.files import fields_from_json, fields_to_json, json_field, load_json, write_json
from alloclab.core.results.runs import FORMAT  # one version for a comparison's files: runs and summary
from alloclab.stats import Spread

KIND_SUMMARY = "alloclab-compare-summary"
KIND_EXPORT = "alloclab-compare"


def _spread_to(s: Spread) -> dict:
    return s.as_dict()


def _spread_from(d: dict) -> Spread:
    return Spread(d["median"], d["min"], d["max"], d.get("mean", d["median"]), d["n"])


def _spread():
    return json_field(None, to=_spread_to, from_=_spread_from)


@dataclasses.dataclass
class CellSummary:
    """One allocator at one level: its runs' statistics (over the ok runs) and ratios to the baseline."""

    allocator: str
    adv: Level = json_field(Level.ADV_0, from_=Level.of)
    runs: int = 0
    ok: int = 0
    statuses: dict = json_field(factory=dict)       # status -> count
    wall_s: Spread | None = _spread()
    program_s: Spread | None = _spread()
    program_inproc_s: Spread | None = _spread()
    litter_s: Spread | None = _spread()
    user_s: Spread | None = _spread()
    sys_s: Spread | None = _spread()
    max_rss_kb: Spread | None = _spread()
    program_s_runs: list = json_field(factory=list)  # [[repeat, program seconds]] of the ok runs, by round
    wall_s_ratio: float | None = None
    program_s_ratio: float | None = None
    user_s_ratio: float | None = None
    max_rss_kb_ratio: float | None = None
    program_s_ratio_spread: Spread | None = _spread()   # of the per-round ratios to the baseline
    stdout_differs: int = 0
    cache: dict | None = None                       # measure.cache counts of the cell, once
    extra: dict = dataclasses.field(default_factory=dict)

    @property
    def key(self) -> str:
        return cell_key(self.allocator, self.adv)

    @property
    def name(self) -> str:
        """The cell in words: "glibc Adv_3"."""
        return f"{self.allocator} Adv_{self.adv}"


@dataclasses.dataclass
class Meta:
    """How the comparison was made."""

    command: list = json_field(factory=list)
    started_utc: str | None = None
    machine: dict = json_field(factory=dict)
    allocators: list = json_field(factory=list)     # [{"name", "path", "version"}]
    advs: dict = json_field(factory=dict)           # "Adv_N" -> {"multiplier", "occupancy"}
    repeat: int | None = None
    order: str | None = None
    timeout_s: float | None = None
    seed: int | None = None
    seeds: str | None = None
    program_time: str | None = None
    baseline: str | None = None                     # the baseline cell's key
    cache_method: str = "off"
    cache_geometry: dict | None = None
    profile: str | None = None
    cells: list = json_field(factory=list)          # [[allocator, level]] in the order planned
    interrupted: bool = False
    profile_sha256: str | None = None
    skipped: dict | None = json_field(None, omit_none=True)   # {"cells", "reason"}: littered cells not run
    warmup: int = 1
    cache_results: dict | None = json_field(None, omit_none=True)
    finished_utc: str | None = None
    rss_series: dict | None = json_field(None, omit_none=True)   # {"file", "every_s"}: compare --rss-series
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Summary:
    meta: Meta = json_field(factory=Meta, to=fields_to_json, from_=lambda d: fields_from_json(Meta, d))
    cells: list = json_field(factory=list, to=lambda cs: [fields_to_json(c) for c in cs],
                             from_=lambda cs: [fields_from_json(CellSummary, c) for c in cs])
    stdout_reference: str | None = None
    stdout_differs: list = json_field(factory=list)  # [{"run", "allocator", "adv", "repeat", "stdout_sha256"}]
    rows: int = 0
    extra: dict = dataclasses.field(default_factory=dict)

    def cell(self, key: str) -> CellSummary | None:
        return next((c for c in self.cells if c.key == key), None)

    @property
    def baseline(self) -> CellSummary | None:
        return self.cell(self.meta.baseline)


def read_summary(path: str) -> Summary:
    """A summary.json or an --export-json file (its runs left out), checked against FORMAT."""
    data = load_json(path, "results file")
    if not isinstance(data, dict) or "cells" not in data:
        raise LabError(f"{path!r} is not an alloclab comparison summary")
    if "format_version" not in data:
        raise FORMAT.error(path, 0)
    FORMAT.check(path, data["format_version"])
    body = {k: v for k, v in data.items() if k not in ("format_version", "kind", "runs")}
    return fields_from_json(Summary, body)


def write_summary(summary: Summary, outdir: str) -> str:
    data = {"format_version": FORMAT.version, "kind": KIND_SUMMARY, **fields_to_json(summary)}
    return write_json(os.path.join(outdir, "summary.json"), data)


def write_export(summary: Summary, runs: list, path: str) -> str:
    """The summary and every run (RunRow, as the text of its columns) in one JSON file."""
    return write_json(path, {"format_version": FORMAT.version, "kind": KIND_EXPORT, **fields_to_json(summary),
                             "runs": [r.cells() for r in runs]}, atomic=False)
