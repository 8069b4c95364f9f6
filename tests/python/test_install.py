"""`pip install .` into a fresh virtual environment, offline, gives a working
`alloclab` that finds the native parts through ALLOCLAB_PREFIX (docs/lab.md,
"Where the native parts are found")."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def _pip_install(tmp_path):
    """A venv at tmp/v with the package installed from a copy of the sources; returns its bin dir."""
    src = tmp_path / "src"
    src.mkdir()
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, f), src / f)
    shutil.copytree(os.path.join(ROOT, "python", "alloclab"), src / "python" / "alloclab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "v"
    # The test's interpreter is the project's .venv; the new venv sees its packages
    # (numpy, matplotlib, setuptools, wheel) through a .pth file, so nothing is downloaded.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    here = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    with open(os.path.join(site, "_outer.pth"), "w") as f:
        f.write("\n".join(here) + "\n")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        str(src)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return venv / "bin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError as e:
        pytest.fail(f"building the package offline needs setuptools and wheel in the test's environment: {e} "
                    "(scripts/bootstrap installs python/requirements.txt)")
    return _pip_install(tmp_path_factory.mktemp("pip"))


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALLOCLAB_PREFIX")}
    env.update(extra)
    return env


def test_pip_install_gives_a_working_command(installed, tmp_path):
    exe = installed / "alloclab"
    assert exe.exists(), "pip installed no alloclab script"
    build = os.path.join(ROOT, "build", "release")
    r = subprocess.run([str(exe), "compare", "--allocators", "glibc", "--adv", "0,3", "--runs", "3", "--cache", "off",
                        "-o", str(tmp_path / "out"), "--export-json", str(tmp_path / "r.json"), "--", "/bin/true"],
                       capture_output=True, text=True, env=_env(ALLOCLAB_PREFIX=build), cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["format_version"] == 1
    assert len(data["runs"]) == 6 and {c["ok"] for c in data["cells"]} == {3}
    # The installed package is the one that ran, not the checkout's.
    where = subprocess.run([str(installed / "python"), "-c", "import alloclab; print(alloclab.__file__)"],
                           capture_output=True, text=True, env=_env(), cwd=tmp_path).stdout
    assert not where.startswith(os.path.join(ROOT, "python")), where


def test_the_installed_command_says_where_it_looked(installed, tmp_path):
    """Without ALLOCLAB_PREFIX and with nothing installed, a littered run names the search order."""
    if any(os.path.exists(os.path.join(p, "lib", "liballoclab_litter.so")) for p in ("/usr/local", "/usr")):
        pytest.skip("the lab is installed system-wide here")
    r = subprocess.run([str(installed / "alloclab"), "litter", "--profile", "/nonexistent.json", "--adv", "3",
                        "--", "/bin/true"], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120)
    assert r.returncode == 2
    r = subprocess.run([str(installed / "alloclab"), "compare", "--allocators", "glibc", "--adv", "3", "--cache",
                        "off", "-o", str(tmp_path / "o"), "--", "/bin/true"],
                       capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120)
    assert r.returncode == 2
    assert "liballoclab_litter.so not found" in r.stderr and "ALLOCLAB_PREFIX" in r.stderr, r.stderr
