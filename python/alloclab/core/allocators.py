"""The allocator registry: every allocator a run can preload, found by name.

An :class:`Allocator` is what a run preloads beneath the program: ``glibc`` is
the system allocator (nothing preloaded); ``jemalloc``, ``mimalloc`` and
``tcmalloc`` are the peers installed on the system (found with ``ldconfig -p``
and a few standard directories); ``vam`` is this project's drop-in malloc
(``build/release/src/vam/libvam.so`` in a checkout, the package's own copy
after ``pip install``, or the installed library directory); and any path to a shared object is accepted as an allocator too.

:func:`find` is the one place an allocator's name is resolved: the command
line calls it (directly, or through :func:`find_many` for a list), and
everything below takes the :class:`Allocator` it returns.

API::

    find(name_or_path) -> Allocator        # LabError when unknown; NotInstalled when not on this machine
    check_options(allocator)               # LabError when a variant's options are rejected (find calls it)
    find_many(text) -> list[Allocator]     # "glibc,jemalloc" | "all" | paths; each through find()
    available(names=KNOWN, missing=None) -> list[Allocator]   # those present here, in that order
    KNOWN                                  # the names find() understands
    shim(kind) -> str                      # path of liballoclab_<kind>.so (profile | litter)
    lab_libdir() -> str | None             # where the shims were found
    vam_library(twin="") -> str | None    # libvam.so, or libvam-<twin>.so (the `vam` command)
    from_build(found, text, libvam)        # vam taken from a build tree (the bench scripts)
    source_id(path) -> str | None          # the commit a vam library says it was built from
    check_claimed_commit(name, path)       # LabError unless a library named vam-<hex> was built from <hex>
    again(name) / is_again(name) / measured_again(allocator)   # an A/A null's twin, named NAME~again

The shims and libvam are found through alloclab.core.paths (one search order
for every native part: ``$ALLOCLAB_PREFIX``, the package's ``native`` directory,
the checkout's ``build/release``, the install prefix, ``sys.prefix``,
``/usr/local``, ``/usr``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import subprocess
import time

from alloclab import LabError
from alloclab.core import paths, runner

# Name -> shared-object names to look for, best first.
PEERS = {
    "jemalloc": ["libjemalloc.so.2", "libjemalloc.so"],
    "mimalloc": ["libmimalloc.so.2", "libmimalloc.so"],
    "tcmalloc": ["libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libtcmalloc_minimal.so"],
}
KNOWN = ["glibc", *PEERS, "vam"]
# libvam.so's instrumented builds, found by name but never among "all" (a study of vam-secure's
# checks would not be a study of vam): the secure mode, the counting build.
VAM_TWINS = ("vam-secure", "vam-stats")

SYSTEM_LIBDIRS = [
    "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/usr/local/lib", "/usr/lib64", "/usr/lib", "/lib64", "/lib",
]


# An A/A null's twin: an allocator measured a second time in the same rounds as itself, under its
# name with AGAIN after it ("glibc~again"). Twin and original are one library with one environment,
# so the ratio of their times is an effect of nothing, measured as the run measures everything else.
AGAIN = "~again"


def again(name: str) -> str:
    return name + AGAIN


def is_again(name: str) -> bool:
    return name.endswith(AGAIN)


def measured_again(a: "Allocator") -> "Allocator":
    """A, the same library and settings, under again(A.name): the twin of an A/A null."""
    return dataclasses.replace(a, name=again(a.name))


class NotInstalled(LabError):
    """A known allocator whose library is not on this machine (a peer not installed, vam not built)."""


@dataclasses.dataclass(frozen=True)
class Allocator:
    """One allocator a program can run on.

    name     short name used in tables and files ("glibc", "jemalloc", ...,
             "vam@VAM_ORDER=fifo" for a variant)
    path     shared object to LD_PRELOAD, or None for the system allocator
    version  best-effort version string ("unknown" when it cannot be told)
    env      (VAR, VALUE) pairs set for every run on it: a variant of an
             allocator with its options changed (find: "vam@VAM_ORDER=fifo")
    """

    name: str
    path: str | None
    version: str
    env: tuple = ()

    def info(self) -> dict:
        """What a result records of the allocator: its name, version and library (and the
        variables a variant sets)."""
        out = {"name": self.name, "version": self.version, "path": self.path}
        if self.env:
            out["env"] = [f"{k}={v}" for k, v in self.env]
        return out

    @property
    def preload(self) -> list[str]:
        return [self.path] if self.path else []

    @property
    def environ(self) -> dict[str, str]:
        return dict(self.env)


# A variant: an allocator's name or path, then "@VAR=VALUE" once per option.
_VARIANT = re.compile(r"^(?P<base>[^@]+?)(?P<opts>(?:@[^@=]*=[^@]*)+)$")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Set by the lab itself for every run: a variant may not change them.
_RESERVED = ("LD_PRELOAD", "LITTER_", "ALLOCLAB_")


def _variant(key: str) -> Allocator | None:
    """The allocator variant written BASE@VAR=VALUE[@VAR=VALUE...], or None if
    key has no "@"; raises LabError for a malformed or reserved option."""
    if "@" not in key:
        return None
    m = _VARIANT.match(key)
    if not m:
        raise LabError(f"allocator variant {key!r}: expected NAME@VAR=VALUE[@VAR=VALUE...], "
                       "e.g. vam@VAM_ORDER=fifo")
    pairs = []
    for opt in m.group("opts")[1:].split("@"):
        var, value = opt.split("=", 1)
        if not _VAR_NAME.match(var):
            raise LabError(f"allocator variant {key!r}: {var!r} is not an environment variable name")
        if var == "LD_PRELOAD" or var.startswith(_RESERVED[1:]):
            raise LabError(f"allocator variant {key!r}: {var} is set by the lab itself")
        if var in dict(pairs):
            raise LabError(f"allocator variant {key!r}: {var} given twice")
        pairs.append((var, value))
    base = find(m.group("base"))
    if base.env:
        raise LabError(f"allocator variant {key!r}: its base is a variant already")
    suffix = "".join(f"@{v}={x}" for v, x in pairs)
    variant = Allocator(base.name + suffix, base.path, base.version, tuple(pairs))
    check_options(variant)
    return variant


# What an allocator prints when it does not take an option as given (vam, reap, mimalloc and
# jemalloc all say one of these).
_REJECTED = re.compile(r"ignored|unknown option|out of range|invalid", re.IGNORECASE)


def check_options(a: Allocator) -> None:
    """LabError when the allocator rejects one of the variant's options, so that a variant is never
    measured as the default it fell back to: `true` runs on the allocator with the options and
    without them, and a warning only the first printed refuses the variant, quoted."""
    if not a.env:
        return
    true = [shutil.which("true") or "/bin/true"]

    def said(env):
        r = runner.run(true, preload=a.preload, env=env, timeout=30, direct=True)
        return [x.strip() for x in r.stderr_tail.splitlines() if _REJECTED.search(x)]

    plain = set(said(None))
    rejected = [x for x in said(a.environ) if x not in plain]
    if rejected:
        raise LabError(f"allocator variant {a.name!r}: {a.name.split('@')[0]} rejects its options "
                       f"and would run as its default: {'; '.join(rejected)}")


def lab_libdir() -> str | None:
    """The directory holding liballoclab_profile.so, or None."""
    p = paths.find("liballoclab_profile.so")
    return os.path.dirname(p) if p else None


def shim(kind: str) -> str:
    """Absolute path of liballoclab_<kind>.so (kind: "profile" or "litter")."""
    name = f"liballoclab_{kind}.so"
    p = paths.find(name)
    if p:
        return p
    raise LabError(f"{name} not found ({paths.describe()})")


@functools.lru_cache(maxsize=1)
def _ldconfig() -> dict[str, str]:
    """soname -> path from `ldconfig -p` (empty when ldconfig is unavailable)."""
    out = {}
    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            text = subprocess.run([exe, "-p"], capture_output=True, text=True, check=False).stdout
        except OSError:
            continue
        for line in text.splitlines():
            m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
            if m and ("x86-64" in m.group(2) or "64bit" in m.group(2) or "AArch64" in m.group(2)
                      or m.group(1) not in out):
                out.setdefault(m.group(1), m.group(3))
        break
    return out


def _locate(sonames: list[str]) -> str | None:
    table = _ldconfig()
    for so in sonames:
        if so in table and os.path.exists(table[so]):
            return table[so]
        for d in SYSTEM_LIBDIRS:
            p = os.path.join(d, so)
            if os.path.exists(p):
                return p
    return None


@functools.lru_cache(maxsize=None)
def _package_version(path: str) -> str | None:
    """Debian package version owning path, or None."""
    candidates = {path, os.path.realpath(path)}
    for c in list(candidates):  # /lib is a symlink to /usr/lib on merged-/usr systems
        if c.startswith("/lib/"):
            candidates.add("/usr" + c)
    for c in candidates:
        try:
            r = subprocess.run(["dpkg-query", "-S", c], capture_output=True, text=True, check=False)
        except OSError:
            return None
        if r.returncode == 0 and ":" in r.stdout:
            pkg = r.stdout.split(": ")[0].split(",")[0].strip()
            v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                               capture_output=True, text=True, check=False)
            if v.returncode == 0 and v.stdout.strip():
                return f"{v.stdout.strip()} ({pkg.split(':')[0]})"
    return None


def _version_of(path: str) -> str:
    v = _package_version(path)
    if v:
        return v
    if os.path.basename(path).startswith("libvam"):
        return _build_version(path)
    m = re.search(r"\.so\.([\d.]+)$", os.path.realpath(path))
    return m.group(1) if m else "unknown"


# The string every vam library carries (cmake/vam_source_id.cmake): the commit it was built
# from, "+changes" when its sources differed from that commit, or "unknown".
_SOURCE_ID = re.compile(rb"alloclab-vam-source: ([0-9a-f]{40}(\+changes)?|unknown)\x00")


def source_id(path: str) -> str | None:
    """The commit the vam library at `path` was built from ("<40 hex>", "<40 hex>+changes" or
    "unknown"), or None when it carries no such string (a build from before it was added)."""
    with open(path, "rb") as f:
        data = f.read()
    m = _SOURCE_ID.search(data)
    return m.group(1).decode() if m else None


def check_claimed_commit(name: str, path: str) -> None:
    """A name vam-<hex> (vam-9fb1ad7=LIB) says the library was built from that commit, and a run
    will carry it as that commit's vam: LabError unless the library says the same itself,
    built from a commit starting with <hex>, with no changes."""
    m = re.fullmatch(r"vam-([0-9a-f]{7,40})", name.strip().lower())
    if not m:
        return
    sid = source_id(path)
    if sid is None or sid == "unknown":
        raise LabError(f"{name} names commit {m.group(1)}, but {path} does not say which commit it was built "
                       f"from (a build from before libraries recorded it, or outside a git checkout): "
                       f"build {m.group(1)} and give that library")
    commit, changes = sid.partition("+")[::2]
    if not commit.startswith(m.group(1)) or changes:
        built = f"commit {commit[:12]}" + (" with changes" if changes else "")
        raise LabError(f"{name} names commit {m.group(1)}, but {path} was built from {built}")


def _build_version(path: str) -> str:
    """A libvam built here has no package: its version is when it was built and, read from the
    library itself, the commit it was built from. A copy of an old build keeps its commit when
    the copy gets a new time."""
    built = time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.stat(path).st_mtime))
    sid = source_id(path)
    if sid is None or sid == "unknown":
        return f"alloclab build of {built} UTC" + (", source commit unknown" if sid else "")
    commit, changes = sid.partition("+")[::2]
    return f"alloclab build of {built} UTC from commit {commit[:12]}" + (" with changes" if changes else "")


def glibc_version() -> str:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or "unknown"
    except (ValueError, OSError):
        return "unknown"


def vam_library(twin: str = "") -> str | None:
    """libvam.so where the lab finds its native parts (core/paths.py), or None; with `twin`
    ("stats", "secure", "memcheck") that instrumented build of it (libvam-<twin>.so)."""
    return paths.find(_twin_name(twin))


def _twin_name(twin: str) -> str:
    return f"libvam-{twin}.so" if twin else "libvam.so"


def find(name: str) -> Allocator:
    """The allocator called `name` ("glibc", a peer, "vam") or at path `name`;
    NAME@VAR=VALUE[@VAR=VALUE...] is that allocator with those variables set
    for its runs (a variant: "vam@VAM_ORDER=fifo").

    Raises NotInstalled (a LabError) when a known allocator's library is not on this machine,
    LabError when the name is unknown or the path is not a shared object.
    """
    key = name.strip()
    variant = _variant(key)
    if variant is not None:
        return variant
    low = key.lower()
    if low in ("glibc", "system", "libc"):
        return Allocator("glibc", None, glibc_version())
    if low in PEERS:
        path = _locate(PEERS[low])
        if not path:
            raise NotInstalled(f"allocator {low!r} is not installed (looked for {', '.join(PEERS[low])})")
        return Allocator(low, path, _version_of(path))
    if low in ("vam", *VAM_TWINS):
        twin = low.split("-", 1)[1] if "-" in low else ""
        p = vam_library(twin)
        if p:
            return Allocator(low, p, _build_version(p))
        raise NotInstalled(f"allocator {low!r} is not built: {os.path.basename(_twin_name(twin))} not found "
                           f"({paths.describe()})")
    if "/" in key or key.endswith(".so") or ".so." in key:
        if not os.path.isfile(key):
            raise LabError(f"allocator library {key!r} does not exist")
        with open(key, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise LabError(f"allocator library {key!r} is not a shared object (ELF)")
        base = os.path.basename(key)
        short = re.sub(r"^lib", "", re.sub(r"\.so(\..*)?$", "", base)) or base
        return Allocator(short, os.path.abspath(key), _version_of(key))
    raise LabError(f"unknown allocator {name!r}; known: {', '.join(KNOWN)}, or a path to a .so")


def from_build(found: list[Allocator], text: str | None, libvam: str) -> list[Allocator]:
    """`found` (parsed from `text`, the --allocators of a bench script) with vam
    and its variants, where named ("vam", "vam@VAR=...") rather than given as a
    path, taken from the build tree's libvam.so when it exists."""
    named = {t.strip().lower().split("@")[0] for t in text.split(",")} if text else {"vam"}
    if "vam" not in named or not os.path.exists(libvam):
        return list(found)
    return [dataclasses.replace(a, path=libvam, version=_build_version(libvam)) if a.name.split("@")[0] == "vam"
            else a for a in found]


def available(names=None, missing: list | None = None) -> list[Allocator]:
    """The allocators of NAMES (default KNOWN) present on this machine, in that order; why each
    missing one is missing is appended to MISSING when given."""
    out = []
    for n in KNOWN if names is None else names:
        try:
            out.append(find(n))
        except LabError as e:
            if missing is not None:
                missing.append(f"{n}: {e}")
    return out


def find_many(text: str) -> list[Allocator]:
    """Comma-separated names or .so paths, or variants (NAME@VAR=VALUE: find), each resolved by
    find(); "all" means every allocator found here. LabError for none, an unknown one, or one twice."""
    names = [x.strip() for x in str(text).split(",") if x.strip()]
    if not names:
        raise LabError("no allocator given")
    if [n.lower() for n in names] == ["all"]:
        found = available()
        if not found:
            raise LabError("no allocator found on this machine")
        return found
    out = [find(n) for n in names]
    seen = set()
    for a in out:
        if a.name in seen:
            raise LabError(f"allocator {a.name!r} given twice")
        seen.add(a.name)
    return out
