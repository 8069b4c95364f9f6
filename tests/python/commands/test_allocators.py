"""`alloclab allocators` (commands/allocators.py): what is listed, checked against the disk."""

import os


from conftest import peers_on_disk, run_cli



def test_cli_allocators_lists_versions_and_paths(libdir):
    r = run_cli("allocators")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["name", "version", "library"]
    glibc = next(line for line in lines if line.startswith("glibc"))
    assert "glibc 2." in glibc
    # Against a listing of the disk made without the registry: each peer installed here is listed
    # with one of its files, each one that is not is said to be missing.
    listed = {line.split()[0]: line.split()[-1] for line in lines[1:]}
    for name, files in peers_on_disk().items():
        if files:
            assert name in listed and os.path.realpath(listed[name]) in files, (name, listed.get(name), files)
        else:
            assert name not in listed and f"not available: {name}: " in r.stderr, name
    r = run_cli("allocators", "nosuchalloc")
    assert r.returncode == 2 and "unknown allocator" in r.stderr
