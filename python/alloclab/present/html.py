"""The report layer: every HTML page of the lab, rendered one way.

Every page is a Jinja2 template in present/templates/ (autoescaped) that
extends base.html.j2 and draws its tables, figures and verdicts with
macros.html.j2; the experiment that owns a page only computes a context dict
(experiments/compare/report.py for compare.html.j2, experiments/study/report.py
for study.html.j2). Nothing here computes a statistic: values arrive
computed, and are only formatted.

API::

    render(template, context) -> str           # any page of templates/
    write_page(template, context, outdir, name="report.html") -> str
    png_data(path) -> str                       # a PNG file as base64, to embed
    command_line(argv) -> str                   # shell-quoted, to copy and run
    machine_facts(machine) -> list[(name, value)]
    size_kib(kib) -> str                        # "2.0 MiB"
    secs(x) -> str                              # "12.3 ms", "1.234 s"
"""

from __future__ import annotations

import base64
import os
import shlex

from alloclab import LabError

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
_ENV = None


def environment():
    """The Jinja2 environment of the report templates (autoescaped)."""
    global _ENV
    if _ENV is None:
        try:
            import jinja2  # heavy, and only a report needs it
        except ImportError as e:
            raise LabError(f"cannot write the report: jinja2 cannot be imported ({e}); it is a declared "
                           "dependency (pip install jinja2)") from None
        _ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                  trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return _ENV


def render(template: str, context: dict) -> str:
    """The page `template` (a file in templates/) rendered with `context`."""
    return environment().get_template(template).render(**context)


def write_page(template: str, context: dict, outdir: str, name: str = "report.html") -> str:
    """Render `template` to DIR/name; returns the path."""
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    text = render(template, context)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def png_data(path: str) -> str:
    """The PNG file at PATH as base64 text, for a data: URI."""
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode("ascii")


def command_line(argv) -> str:
    """A command as a shell would take it back (each word quoted as needed)."""
    return shlex.join(str(a) for a in argv or [])


def size_kib(kib) -> str:
    """A size given in KiB, in KiB, MiB or GiB."""
    if kib is None:
        return "–"
    kib = float(kib)
    if kib >= 1024 * 1024:
        return f"{kib / 1024 / 1024:.1f} GiB"
    if kib >= 1024:
        return f"{kib / 1024:.1f} MiB"
    return f"{kib:.0f} KiB"


def secs(x) -> str:
    if x is None:
        return "–"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.3f} s"


_FACT_NAMES = {"memory_kb": "memory", "free_page_reporting": "free page reporting"}


def machine_facts(m: dict) -> list[tuple[str, str]]:
    """(name, value) of what core.machine.machine_info() recorded, memory in MiB/GiB."""
    return [(_FACT_NAMES.get(k, k), size_kib(m[k]) if k == "memory_kb" else m[k])
            for k in ("cpu", "cpus", "memory_kb", "kernel", "machine", "hostname", "python", "free_page_reporting")
            if k in m]
