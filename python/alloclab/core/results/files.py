"""What every result file of the lab shares: JSON read and written one way, and
format versions checked one way.

A :class:`Format` names one kind of file, the version this alloclab writes and
every earlier version it still reads. Its reader refuses a file of another
version with a message that says which version the file is and which this
alloclab reads; a file written before versions existed is version 0.

API::

    Format(what, version, reads=(version,), redo="run it again", upgrade="upgrade to read it", named=True)
    fmt.check(path, found, where=None)    # LabError unless found is a version fmt reads
    load_json(path, what)                 # any JSON file, with the lab's error messages
    stored(path) / exists(path) / open_text(path)   # a result file as it is or kept compressed (PATH.gz)
    compress(src, dest)                   # gzip with no name or time in it: same input, same bytes
    write_json(path, data, indent=2, atomic=True)   # atomically: a temporary file renamed over PATH
    fields_to_json(obj) / fields_from_json(cls, data)   # a result dataclass <-> a JSON object
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re

from alloclab import LabError

GZ = ".gz"


@dataclasses.dataclass(frozen=True)
class Format:
    """One file format: WHAT it is called in messages, the VERSION written, the versions READS."""

    what: str
    version: int
    reads: tuple = ()
    redo: str = "run it again"          # what to do with a file of an older version this alloclab cannot read
    upgrade: str = "upgrade to read it"  # ... and with one of a newer version
    named: bool = True                  # the refusal says "<what> format version N" (else "format version N")

    def readable(self) -> tuple:
        return self.reads or (self.version,)

    def error(self, path: str, found, where: str | None = None) -> LabError:
        """The refusal of PATH (named WHERE in the message, default its quoted path), version FOUND."""
        newer = isinstance(found, int) and not isinstance(found, bool) and found > self.version
        what = f"{self.what} " if self.named else ""
        return LabError(f"{where or repr(path)} is {what}format version {found}; this alloclab reads version "
                        f"{_versions(self.readable())} "
                        + (f"(written by a newer alloclab: {self.upgrade})" if newer
                           else f"(written by an older alloclab: {self.redo})"))

    def check(self, path: str, found, where: str | None = None) -> int:
        """The version FOUND in PATH as a number; LabError unless it is one this alloclab reads."""
        where = where or repr(path)
        if isinstance(found, bool):
            raise LabError(f"{where}: format_version {found!r} is not a number")
        try:
            v = int(found)
        except (TypeError, ValueError):
            raise LabError(f"{where}: format_version {found!r} is not a number") from None
        if v not in self.readable():
            raise self.error(path, v, where)
        return v


def _versions(vs: tuple) -> str:
    return " or ".join(str(v) for v in vs)


def stored(path: str) -> str:
    """PATH, or PATH.gz when only that exists (a run kept compressed: docs/runs/)."""
    if not os.path.exists(path) and os.path.exists(path + GZ):
        return path + GZ
    return path


def exists(path: str) -> bool:
    """Whether PATH holds a result file, as it is or compressed."""
    return os.path.exists(stored(path))


def open_text(path: str, newline: str | None = None):
    """PATH (or PATH.gz, decompressed) opened for reading text."""
    real = stored(path)
    if real.endswith(GZ) and not path.endswith(GZ):
        return gzip.open(real, "rt", encoding="utf-8", newline=newline)
    return open(real, encoding="utf-8", newline=newline)


def compress(src: str, dest: str, within: str | None = None) -> str:
    """SRC written gzip-compressed to DEST, byte for byte the same for the same SRC (no name,
    no time in the header), so a kept run's files change only when their content does. With
    WITHIN (a directory), every path under it is written relative to it (see `relative_to`)."""
    with open(src, "rb") as f:
        data = f.read()
    if within:
        data = relative_to(data.decode("utf-8"), within).encode("utf-8")
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    with open(dest, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as z:
        z.write(data)
    return dest


def relative_to(text: str, root: str) -> str:
    """TEXT with ROOT's absolute path and the separator after it taken out of every path that
    starts with it, so a kept run names the tree's files (build/release/src/vam/libvam.so) and
    not where one machine had the tree; ROOT itself becomes '.'."""
    root = os.path.abspath(root).rstrip(os.sep)
    text = text.replace(root + os.sep, "")
    return re.sub(re.escape(root) + r"(?![\w.-])", ".", text)


def load_json(path: str, what: str):
    """The JSON value in `path` (or `path`.gz); LabError naming `what` when it is missing,
    unreadable or not JSON."""
    try:
        with open_text(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise LabError(f"{what} {path!r} does not exist") from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise LabError(f"cannot read {what} {path!r}: {e}") from None
    except json.JSONDecodeError as e:
        raise LabError(f"{what} {path!r} is not valid JSON: {e}") from None


def write_json(path: str, data, indent: int = 2, atomic: bool = True) -> str:
    """DATA as JSON in PATH (its directory created), written whole or not at all (ATOMIC: through a
    temporary file renamed over PATH; not for a path the user named, which may be a pipe); PATH."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp" if atomic else path
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=indent, default=str)
        f.write("\n")
    if atomic:
        os.replace(tmp, path)
    return path


# A result dataclass names its JSON keys by its fields, in the order written. A field's
# metadata may give "to"/"from" (a converter each way) and "omit_none" (left out when None).

def json_field(default=None, *, to=None, from_=None, omit_none=False, factory=None):
    """A dataclass field with its JSON converters (see fields_to_json)."""
    meta = {"to": to, "from": from_, "omit_none": omit_none}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def fields_to_json(obj) -> dict:
    """OBJ's fields as a JSON object, in field order (then its `extra` keys, if it keeps any)."""
    out = {}
    for f in dataclasses.fields(obj):
        if f.name == "extra":
            continue
        v = getattr(obj, f.name)
        if v is None and f.metadata.get("omit_none"):
            continue
        to = f.metadata.get("to")
        out[f.name] = to(v) if (to and v is not None) else v
    out.update(getattr(obj, "extra", None) or {})
    return out


def fields_from_json(cls, data: dict):
    """An instance of CLS from a JSON object: each field from its key (converted), missing keys
    left at their defaults, keys CLS does not know kept in its `extra` (when it has one)."""
    names = {f.name for f in dataclasses.fields(cls)}
    kw = {}
    for f in dataclasses.fields(cls):
        if f.name == "extra" or f.name not in data:
            continue
        v = data[f.name]
        conv = f.metadata.get("from")
        kw[f.name] = conv(v) if (conv and v is not None) else v
    if "extra" in names:
        kw["extra"] = {k: v for k, v in data.items() if k not in names}
    return cls(**kw)
