"""The one reader and writer of a comparison's result files (docs/formats.md).

    DIR/results.csv    one row per measured run; first column format_version
    DIR/summary.json   the summary (meta, cells, statistics, ratios); key format_version
    --export-json F    the summary plus every run, one file; key format_version
    --export-markdown F    the results table as Markdown (for reading, not for parsing)

FORMAT_VERSION is bumped whenever a column or key changes meaning or goes
away (adding one does not break readers, and does not bump it). Readers
accept files of FORMAT_VERSION and refuse others with a message that says
which version the file is and which this alloclab reads; a CSV without the
column is version 0 (written before versions existed).

API::

    FORMAT_VERSION
    columns() -> list[str]                   # the CSV header: format_version + compare.CSV_COLUMNS
    row_writer(f) -> csv.DictWriter          # writes the header; writerow() fills format_version
    read_csv(path) -> list[dict]             # LabError: missing, other version, not CSV
    write_summary(summary, outdir) -> str    # DIR/summary.json
    read_summary(path) -> dict               # LabError as read_csv
    load_json(path, what)                    # any JSON file, with the lab's error messages
    read_versioned_json(path, version, what) -> dict   # drag/frag/pages JSON; LabError on another version
    warnings(summary) -> list[str]           # short runs, differences within the noise
    paired_difference(cell, ref) -> dict     # clear or not: paired t-test of the per-round ratios
    export(summary, outdir, json_path=None, markdown_path=None, csv_path=None) -> list[str]
    markdown_table(summary, rows=None) -> str   # ratios with the min-max of the paired ratios
    ratio_spreads(summary, rows, metric="program_s") -> {cell: stats.Spread}
"""

from __future__ import annotations

import csv
import json
import os
import shutil

from alloclab import LabError
from alloclab.present import tables

FORMAT_VERSION = 1
KIND_SUMMARY = "alloclab-compare-summary"
KIND_EXPORT = "alloclab-compare"
SHORT_RUN_S = 0.005


def columns() -> list[str]:
    from alloclab import compare
    return ["format_version"] + [c for c in compare.CSV_COLUMNS if c != "format_version"]


class _RowWriter(csv.DictWriter):
    def writerow(self, rowdict):
        rowdict.setdefault("format_version", FORMAT_VERSION)
        return super().writerow(rowdict)


def row_writer(f) -> csv.DictWriter:
    """A DictWriter over the results columns; the header is written at once."""
    w = _RowWriter(f, fieldnames=columns())
    w.writeheader()
    return w


def _version_error(path: str, found) -> LabError:
    return LabError(f"{path!r} is format version {found}; this alloclab reads version {FORMAT_VERSION} "
                    + ("(written by a newer alloclab: upgrade to read it)" if isinstance(found, int)
                       and found > FORMAT_VERSION else
                       "(written by an older alloclab: re-run the comparison)"))


def _check_version(path: str, found) -> None:
    try:
        v = int(found)
    except (TypeError, ValueError):
        raise LabError(f"{path!r}: format_version {found!r} is not a number") from None
    if v != FORMAT_VERSION:
        raise _version_error(path, v)


def read_csv(path: str) -> list[dict]:
    """Rows of a results.csv, checked against FORMAT_VERSION."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            if "format_version" not in header:
                if "allocator" in header and "wall_s" in header:
                    raise _version_error(path, 0)
                raise LabError(f"{path!r} is not a results CSV (no format_version column)")
            rows = list(reader)
    except FileNotFoundError:
        raise LabError(f"results file {path!r} does not exist") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise LabError(f"cannot read results file {path!r}: {e}") from None
    for r in rows:
        _check_version(path, r.get("format_version"))
    return rows


def write_summary(summary: dict, outdir: str) -> str:
    path = os.path.join(outdir, "summary.json")
    data = {"format_version": FORMAT_VERSION, "kind": KIND_SUMMARY, **summary}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, default=str)
        f.write("\n")
    os.replace(tmp, path)
    return path


def load_json(path: str, what: str):
    """The JSON value in `path`; LabError naming `what` when it is missing, unreadable or not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise LabError(f"{what} {path!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LabError(f"cannot read {what} {path!r}: {e}") from None
    except json.JSONDecodeError as e:
        raise LabError(f"{what} {path!r} is not valid JSON: {e}") from None


def read_summary(path: str) -> dict:
    """A summary.json or an --export-json file, checked against FORMAT_VERSION."""
    data = load_json(path, "results file")
    if not isinstance(data, dict) or "cells" not in data:
        raise LabError(f"{path!r} is not an alloclab comparison summary")
    if "format_version" not in data:
        raise _version_error(path, 0)
    _check_version(path, data["format_version"])
    return data


def read_versioned_json(path: str, version: int, what: str) -> dict:
    """A JSON object written with "format_version": version (drag.json, frag.json, pages.json, ...)."""
    data = load_json(path, f"{what} file")
    if not isinstance(data, dict):
        raise LabError(f"{path!r} is not a {what} file")
    found = data.get("format_version", 0)
    if found != version:
        raise LabError(f"{path!r} is {what} format version {found}; this alloclab reads version {version} "
                       + ("(written by a newer alloclab)" if isinstance(found, int) and found > version
                          else "(written by an older alloclab: run it again)"))
    return data


# ------------------------------------------------------------------- warnings

def _base_cell(summary: dict):
    key = summary["meta"].get("baseline")
    for c in summary["cells"]:
        if f"{c['allocator']}/Adv_{c['adv']}" == key:
            return c
    return None


def _secs(x: float) -> str:
    return f"{x * 1000:.2f} ms" if x < 1 else f"{x:.3f} s"


def warnings(summary: dict) -> list[str]:
    """What a reader of the table should be told (as hyperfine does):

    * a cell whose median wall time is under SHORT_RUN_S: start-up and timer
      noise dominate; make the program do more work;
    * a cell whose difference from the baseline (median program time) is
      smaller than the spread (max - min) of either cell's runs.
    """
    out = []
    skipped = summary["meta"].get("skipped")
    if skipped:
        cells = ", ".join(f"{a}/Adv_{adv}" for a, adv in skipped["cells"])
        out.append(f"{cells}: {skipped['reason']}")
    for c in summary["cells"]:
        for w in (c.get("cache") or {}).get("warnings") or []:
            out.append(f"{c['allocator']}/Adv_{c['adv']} cache counts: {w}")
        err = (c.get("cache") or {}).get("error")
        if err:
            out.append(f"{c['allocator']}/Adv_{c['adv']} cache counts: {err}")
    short = [f"{c['allocator']}/Adv_{c['adv']}" for c in summary["cells"]
             if c.get("wall_s") and c["wall_s"]["median"] < SHORT_RUN_S]
    if short:
        out.append(f"runs take under {SHORT_RUN_S * 1000:g} ms ({', '.join(short)}): process start-up and "
                   "timer resolution dominate; give the program more work")
    base = _base_cell(summary)
    if base and base.get("program_s"):
        b = base["program_s"]
        for c in summary["cells"]:
            s = c.get("program_s")
            if c is base or not s:
                continue
            d = paired_difference(c, base)
            if d is None or d["clear"]:
                continue
            diff = abs(s["median"] - b["median"])
            rel = 100.0 * diff / b["median"] if b["median"] else 0.0
            out.append(f"{c['allocator']}/Adv_{c['adv']} differs from the baseline by {rel:.1f}% "
                       f"({_secs(diff)}), but {d['why']}: the difference is within the noise; add --runs")
    return out


def paired_difference(cell: dict, ref: dict, metric: str = "program_s") -> dict | None:
    """Whether `cell` and `ref` differ by more than the noise, and why.

    With the runs of both cells by round (`program_s_runs` in the summary), the
    runs of one round are paired, and the ratios cell / ref summarised on the log
    scale (stats.paired_ratio: a paired t-test). The difference is clear when
    the 95% interval of the ratio excludes 1 (PairedRatio.clear, p < 0.05). Two runs of one
    round saw the same state of the machine, so a steady lead that the drift
    between rounds hides in each cell's own min-max range still shows.
    Without the runs (a summary written before they were kept), the old, cruder
    rule: the medians differ by more than the larger min-max range.

    Returns {"clear", "paired", "why"} and, when paired, "ratio" (stats.PairedRatio);
    None when either cell has no runs of `metric`."""
    from alloclab import stats
    a, b = cell.get(metric), ref.get(metric)
    if not a or not b:
        return None
    runs_a, runs_b = cell.get(f"{metric}_runs"), ref.get(f"{metric}_runs")
    if runs_a and runs_b:
        by_round = {int(k): float(v) for k, v in runs_b}
        pr = stats.paired_ratio([float(v) / by_round[int(k)] for k, v in runs_a if by_round.get(int(k))])
        if pr is None:
            return None
        side = "less" if pr.below >= pr.above else "more"
        why = (f"it took {side} time in {max(pr.below, pr.above)} of {pr.n} rounds; paired by round, "
               f"{pr.geomean:.3f}× (95% interval {pr.low:.3f}–{pr.high:.3f}, p = {pr.p:.2g})")
        return {"clear": pr.clear, "paired": True, "ratio": pr, "why": why}
    diff = abs(a["median"] - b["median"])
    noise = max(a["max"] - a["min"], b["max"] - b["min"])
    clear = diff >= noise
    return {"clear": clear, "paired": False,
            "why": (f"the medians differ by more than the spread of the runs ({_secs(noise)}, min-max)" if clear
                    else f"the spread of the runs ({_secs(noise)}, min-max) is larger")}


# -------------------------------------------------------------------- exports

def _fmt(x, spec="{:.4f}"):
    return "-" if x is None else spec.format(x)


def ratio_spreads(summary: dict, rows: list[dict], metric: str = "program_s") -> dict:
    """"allocator/Adv_N" -> stats.Spread of the paired ratios cell / baseline of `metric`,
    a run of the cell paired with the baseline's run of the same repeat (same round)."""
    from alloclab import stats
    base = summary["meta"].get("baseline")
    by_cell: dict[str, dict[int, float]] = {}
    for r in rows:
        if r.get("status") != "ok" or r.get(metric) in (None, ""):
            continue
        by_cell.setdefault(f"{r['allocator']}/Adv_{r['adv']}", {})[int(r["repeat"])] = float(r[metric])
    out = {}
    den = by_cell.get(base, {})
    for key, num in by_cell.items():
        reps = sorted(set(num) & set(den))
        sp = stats.ratio_spread([num[k] for k in reps], [den[k] for k in reps])
        if sp:
            out[key] = sp
    return out


def markdown_table(summary: dict, rows: list[dict] | None = None) -> str:
    """The results as a Markdown table; with the runs, the ratio carries the min-max of the
    paired ratios (each run over the baseline's run of the same round)."""
    meta = summary["meta"]
    spreads = ratio_spreads(summary, rows) if rows else {}
    head = ["allocator", "level", "ok/runs", "program s median", "min", "max", "x baseline", "wall s median",
            "peak RSS MiB"]
    body = []
    for c in summary["cells"]:
        p, w, rss = c.get("program_s"), c.get("wall_s"), c.get("max_rss_kb")
        ratio = _fmt(c.get("program_s_ratio"), "{:.3f}")
        sp = spreads.get(f"{c['allocator']}/Adv_{c['adv']}")
        if sp and ratio != "-" and sp.n > 1:
            ratio += f" ({sp.low:.3f}–{sp.high:.3f})"
        body.append([c["allocator"], f"Adv_{c['adv']}", f"{c['ok']}/{c['runs']}",
                     _fmt(p and p["median"]), _fmt(p and p["min"]), _fmt(p and p["max"]),
                     ratio, _fmt(w and w["median"]), _fmt(rss and rss["median"] / 1024.0, "{:.1f}")])
    lines = tables.markdown(head, body, "lll" + "r" * (len(head) - 3)).splitlines()
    cmd = " ".join(meta.get("command", []))
    lines += ["", f"Baseline {meta.get('baseline')}; medians over the ok runs, min and max of the same runs; "
                  "x baseline: ratio of the medians"
                  + (", in brackets the min-max of the ratios of runs of the same round" if spreads else "")
                  + f"; command `{cmd}`."]
    return "\n".join(lines) + "\n"


def export(summary: dict, outdir: str, json_path=None, markdown_path=None, csv_path=None) -> list[str]:
    """Write the requested export files; returns their paths."""
    written = []
    src = os.path.join(outdir, "results.csv")
    runs = read_csv(src) if (json_path or markdown_path) and os.path.exists(src) else []
    if json_path:
        data = {"format_version": FORMAT_VERSION, "kind": KIND_EXPORT, **summary, "runs": runs}
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, default=str)
            f.write("\n")
        written.append(str(json_path))
    if markdown_path:
        with open(markdown_path, "w", encoding="utf-8") as f:
            f.write(markdown_table(summary, runs))
        written.append(str(markdown_path))
    if csv_path:
        src = os.path.join(outdir, "results.csv")
        if os.path.abspath(src) != os.path.abspath(csv_path):
            shutil.copyfile(src, csv_path)
        written.append(str(csv_path))
    return written
