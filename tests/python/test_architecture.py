"""The package's shape (docs/lab.md, "The package's layout"), checked on its source: every
module of python/alloclab parsed with ast, nothing imported or run.

Each test names the rule it keeps; a change that breaks one fails here with the module,
line and import that break it."""

import ast
import os
import sys


from conftest import ROOT

PACKAGE = os.path.join(ROOT, "python", "alloclab")

# The floors, lowest first: a module imports from its own group or one below it, never above.
# (present and measure share a floor and do not import each other.)
ALLOWED = {
    "alloclab": set(),
    "stats": {"alloclab"},
    "core": {"alloclab", "stats", "core"},
    "measure": {"alloclab", "stats", "core", "measure"},
    "present": {"alloclab", "stats", "core", "present"},
    "experiments": {"alloclab", "stats", "core", "measure", "present", "experiments"},
    "commands": {"alloclab", "stats", "core", "measure", "present", "experiments", "commands"},
    "cli": {"alloclab", "commands"},
    "__main__": {"alloclab", "cli"},
    "vam": {"alloclab", "core"},  # the `vam` command: libvam found and preloaded, nothing more
}
# Heavy third-party modules a function may load when it needs them (not at start-up).
LAZY = {"numpy", "matplotlib", "jinja2"}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _modules() -> dict:
    """module name -> (path, ast)"""
    out = {}
    for d, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].replace(os.sep, ".")
                name = name[: -len(".__init__")] if name.endswith(".__init__") else name
                with open(path, encoding="utf-8") as fh:
                    out[name] = (path, ast.parse(fh.read(), path))
    return out


MODULES = _modules()


def _imported(name: str, node) -> list[str]:
    """The lab's modules an import statement in module NAME loads (a package's __init__ counts:
    Python runs it first)."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    else:
        if node.level:
            is_pkg = MODULES[name][0].endswith("__init__.py")
            base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
            stem = ".".join(base + ([node.module] if node.module else []))
        else:
            stem = node.module or ""
        targets = [stem] + [f"{stem}.{a.name}" for a in node.names]
    out = []
    for t in targets:
        parts = t.split(".")
        for i in range(1, len(parts) + 1):  # every package on the way is run too
            m = ".".join(parts[:i])
            if m in MODULES and m != name and m not in out:
                out.append(m)
    return out


def _imports():
    """(module, line, imported module, inside a function?) for every import of the lab's modules."""
    for name, (_, tree) in MODULES.items():
        for node, in_function in _walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(name, node):
                    yield name, node.lineno, target, in_function


def _walk(tree, in_function=False):
    for child in ast.iter_child_nodes(tree):
        yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from _walk(child, inner)


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "alloclab"


def _graph() -> dict:
    g = {m: set() for m in MODULES}
    for name, _, target, _ in _imports():
        g[name].add(target)
    return g


def _cycles(g: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    return out


def depth(g: dict) -> int:
    """The longest chain of imports (modules on it), for the docs: how many floors a value climbs."""
    memo = {}

    def d(v):
        if v not in memo:
            memo[v] = 1 + max((d(w) for w in g[v]), default=0)
        return memo[v]

    return max(d(v) for v in g)


def test_the_package_was_found():
    assert {"alloclab.cli", "alloclab.core.runner", "alloclab.stats"} <= set(MODULES)


def test_no_import_circle_function_level_imports_included():
    assert _cycles(_graph()) == []


def test_imports_only_go_down_the_floors():
    bad = [f"{m}:{line} imports {t}" for m, line, t, _ in _imports() if _group(t) not in ALLOWED[_group(m)]]
    assert bad == []


def test_nothing_but_the_entry_point_imports_the_command_line():
    bad = [f"{m}:{line}" for m, line, t, _ in _imports() if t == "alloclab.cli" and m != "alloclab.__main__"]
    assert bad == []


def test_no_import_inside_a_function_but_the_heavy_third_party_ones():
    bad = []
    for name, (_, tree) in MODULES.items():
        for node, in_function in _walk(tree):
            if in_function and isinstance(node, (ast.Import, ast.ImportFrom)):
                roots = {a.name.split(".")[0] for a in node.names} if isinstance(node, ast.Import) \
                    else {(node.module or "").split(".")[0] if not node.level else "alloclab"}
                if roots - LAZY:
                    bad.append(f"{name}:{node.lineno}")
    assert bad == []


def test_no_module_is_loaded_by_a_name_string():
    bad = []
    for name, (_, tree) in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "importlib" for a in node.names):
                bad.append(f"{name}:{node.lineno} imports importlib")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "importlib":
                bad.append(f"{name}:{node.lineno} imports from importlib")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
                bad.append(f"{name}:{node.lineno} calls __import__")
    assert bad == []


def test_only_cli_knows_argparse():
    """The commands declare their arguments on the parser cli.py hands them; only cli.py imports
    argparse (and turns the argument types' LabError into its usage errors)."""
    bad = [f"{m}:{line}" for m, line, t, _ in _third_party() if t == "argparse" and m != "alloclab.cli"]
    assert bad == []


def _third_party():
    for name, (_, tree) in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    yield name, node.lineno, a.name.split(".")[0], None
            elif isinstance(node, ast.ImportFrom) and not node.level:
                yield name, node.lineno, (node.module or "").split(".")[0], None


def test_no_module_over_500_lines():
    big = {}
    for name, (path, _) in MODULES.items():
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_MODULE_LINES:
            big[name] = n
    assert big == {}


def test_no_function_over_80_lines():
    long = {}
    for name, (_, tree) in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}:{node.lineno}"] = n
    assert long == {}


# -------------------------------------------------- values are parsed once, at the edge

def _calls(module: str, names: tuple):
    """(caller, line) of every call of MODULE.<one of NAMES>, however the caller imported it
    (`from alloclab.core import allocators as a; a.find()`, `from alloclab.core.levels import Level;
    Level.parse()`, `from alloclab.core.allocators import find; find()`)."""
    pkg, _, leaf = module.rpartition(".")
    for name, (_, tree) in MODULES.items():
        aliases, direct = set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == pkg:
                aliases |= {a.asname or a.name for a in node.names if a.name == leaf}
            elif isinstance(node, ast.ImportFrom) and node.module == module:
                direct.update({a.asname or a.name: a.name for a in node.names})
            elif isinstance(node, ast.Import):
                aliases |= {a.asname for a in node.names if a.name == module and a.asname}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in names and isinstance(f.value, ast.Name) \
                    and f.value.id in aliases:
                yield name, node.lineno
            elif isinstance(f, ast.Name) and direct.get(f.id) in names:
                yield name, node.lineno


EDGE = ("alloclab.cli", "alloclab.commands.")


def _edge(module: str) -> bool:
    return module == EDGE[0] or module.startswith(EDGE[1])


def test_allocator_names_are_resolved_at_the_edge():
    """core.allocators.find is the one resolver; below the command line only the study's plan
    names allocators (the ones it picks by default, and glibc, which every study has)."""
    allowed = {"alloclab.core.allocators", "alloclab.experiments.study.plan"}
    calls = list(_calls("alloclab.core.allocators", ("find", "find_many", "available")))
    assert any(_edge(m) for m, _ in calls)          # the check sees the calls there are
    bad = [f"{m}:{line}" for m, line in calls if not _edge(m) and m not in allowed]
    assert bad == []


def test_a_littering_level_is_parsed_only_at_the_edge():
    """Level.parse reads a level from text; below the command line levels arrive as Levels."""
    parses = [(m, line) for m, (_, tree) in MODULES.items() for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and node.attr == "parse" and ast.unparse(node.value) == "Level"
              for line in [node.lineno]]
    assert parses, "the check sees no Level.parse at all"
    bad = [f"{m}:{line}" for m, line in parses if not _edge(m) and m != "alloclab.core.levels"]
    assert bad == []


def test_no_isinstance_str_lookups_below_the_command_line():
    """A value below the edge is typed: nothing asks whether it was given as a string."""
    bad = []
    for name, (_, tree) in MODULES.items():
        if _edge(name):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                    and len(node.args) == 2 and "str" in ast.unparse(node.args[1]).replace("(", " ").split()):
                bad.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert bad == []


def test_one_launch_path():
    """Only core.runner starts a process with an environment of its making (LD_PRELOAD)."""
    bad = []
    for name, (_, tree) in MODULES.items():
        if name == "alloclab.core.runner":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = ast.unparse(node.func)
                if f == "subprocess.Popen" or f.startswith("os.exec") or f.startswith("os.spawn"):
                    bad.append(f"{name}:{node.lineno}: {f}")
                elif f.startswith("subprocess.") and any(k.arg == "env" for k in node.keywords):
                    bad.append(f"{name}:{node.lineno}: {f}(env=...)")
    assert bad == []


def test_one_reader_and_one_writer_per_format():
    """Result files are read and written only by core/results. The exceptions are no result file:
    a native part's own output (the shim's per-process records, the page simulator's report), the
    line `python -m alloclab.measure.memops` prints, and a cache geometry shown in the study's page."""
    readers = {"csv.DictReader", "csv.reader", "json.load", "json.loads"}
    writers = {"csv.DictWriter", "csv.writer", "json.dump", "json.dumps"}
    native = {("alloclab.measure.profile", "json.load"), ("alloclab.measure.memtool", "json.loads"),
              ("alloclab.measure.memops", "json.dumps"), ("alloclab.experiments.study.sections", "json.dumps")}
    bad = []
    for name, (_, tree) in MODULES.items():
        if name.startswith("alloclab.core.results."):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = ast.unparse(node.func)
                if f in readers | writers and (name, f) not in native:
                    bad.append(f"{name}:{node.lineno}: {f}")
    assert bad == []


# ------------------------------------------------------------ the tests mirror the package

TESTS = os.path.join(ROOT, "tests", "python")
# Test files named for a concept rather than a module, by folder; bench/ tests the bench scripts.
CONCEPTS = {".": {"architecture", "install", "docs_pages", "kept_runs"}, "commands": {"bad_input", "protocol"}}
NOT_PACKAGE = {"bench"}


def _folders(top: str) -> dict:
    """folder (relative to TOP) -> the names of its modules and subpackages."""
    out = {}
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        rel = os.path.relpath(d, top)
        out[rel] = {f[:-3] for f in files if f.endswith(".py")} | set(dirs)
    return out


def test_the_tests_mirror_the_package():
    """Each folder of the package has its folder of tests, and each test file names a module
    (test_<module>.py) of the matching package folder, or one of the folder's concepts."""
    package = {d: names for d, names in _folders(PACKAGE).items() if "__init__" in names}
    tests = _folders(TESTS)
    assert sorted(set(package) - set(tests)) == []
    wrong = []
    for d, names in tests.items():
        if d.split(os.sep)[0] in NOT_PACKAGE:
            continue
        for n in names:
            if n.startswith("test_") and n[5:] not in package.get(d, set()) | CONCEPTS.get(d, set()):
                wrong.append(os.path.join(d, n + ".py"))
    assert wrong == []
