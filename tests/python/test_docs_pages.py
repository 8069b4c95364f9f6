"""The results page stays a page, and its history stays findable.

docs/results.md holds what is true now: at most 800 lines, citing at most 20
commits. What was measured before lives in dated notes under docs/notes/
(YYYY-MM-DD-topic.md), each listed in docs/notes/README.md. Links into the
page and the notes must land on a file and, with an anchor, on a heading.
The checks are plain functions so that the tests below can show each one
failing on a page or a folder built to break it."""

import datetime
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
RESULTS = os.path.join(DOCS, "results.md")
NOTES = os.path.join(DOCS, "notes")

MAX_LINES = 800
MAX_COMMITS = 20

# A commit is cited as 7 to 40 hex digits in backticks, or after "on" or "commit".
_HASH_IN_BACKTICKS = re.compile(r"`([0-9a-f]{7,40})`")
_HASH_AFTER_WORD = re.compile(r"\b(?:on|commit)\s+`?([0-9a-f]{7,40})(?![0-9A-Za-z_])")
_NOTE_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-[a-z0-9][a-z0-9-]*\.md$")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def cited_commits(text):
    """The distinct commit hashes a page cites."""
    return set(_HASH_IN_BACKTICKS.findall(text)) | set(_HASH_AFTER_WORD.findall(text))


def page_problems(text, max_lines=MAX_LINES, max_commits=MAX_COMMITS):
    """What keeps `text` from being the results page: too long, too many commits."""
    problems = []
    lines = len(text.splitlines())
    if lines > max_lines:
        problems.append(f"{lines} lines, more than {max_lines}")
    commits = cited_commits(text)
    if len(commits) > max_commits:
        problems.append(f"cites {len(commits)} commits, more than {max_commits}: "
                        + ", ".join(sorted(commits)))
    return problems


def note_name_problem(name):
    """Why `name` is not a note's file name (YYYY-MM-DD-topic.md, a real date), or None."""
    m = _NOTE_NAME.match(name)
    if not m:
        return f"{name}: not named YYYY-MM-DD-topic.md"
    try:
        datetime.date(*(int(g) for g in m.groups()))
    except ValueError:
        return f"{name}: {m.group(1)}-{m.group(2)}-{m.group(3)} is not a date"
    return None


def notes_problems(notes_dir):
    """Notes without a date in their name, and notes the index does not list."""
    names = sorted(n for n in os.listdir(notes_dir) if n != "README.md")
    problems = [p for p in (note_name_problem(n) for n in names) if p]
    index = os.path.join(notes_dir, "README.md")
    if not os.path.exists(index):
        return problems + ["no README.md listing the notes"]
    with open(index, encoding="utf-8") as f:
        listed = {os.path.normpath(t.split("#")[0]) for t in _LINK.findall(f.read())}
    problems += [f"{n}: not listed in README.md" for n in names if n not in listed]
    return problems


def slug(heading):
    """The anchor a Markdown renderer gives a heading (GitHub's rule)."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(path):
    found, fenced = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced and (m := _HEADING.match(line)):
                found.add(slug(m.group(1)))
    return found


def broken_links(path, wanted=lambda target: True):
    """Relative links in `path` (to files `wanted` picks) that do not resolve."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue                                   # http:, mailto: ...
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not wanted(dest):
            continue
        if not os.path.exists(dest):
            broken.append(f"{target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor")
    return broken


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- the tree's pages ---------------------------------------------------------

def test_results_page_is_within_its_limits():
    assert page_problems(_read(RESULTS)) == []


def test_every_note_is_dated_and_listed():
    assert os.path.isdir(NOTES)
    assert notes_problems(NOTES) == []


def test_links_into_the_results_page_and_the_notes_resolve():
    def ours(dest):
        return dest == RESULTS or dest.startswith(NOTES + os.sep)
    pages = [os.path.join(ROOT, "README.md"), RESULTS]
    pages += [os.path.join(DOCS, n) for n in os.listdir(DOCS) if n.endswith(".md")]
    pages += [os.path.join(NOTES, n) for n in os.listdir(NOTES)]
    broken = {p: b for p in sorted(set(pages)) if (b := broken_links(p, ours))}
    assert broken == {}


# --- the checks can fail ----------------------------------------------------------

def test_a_page_over_800_lines_fails():
    assert page_problems("x\n" * 800) == []
    assert page_problems("x\n" * 801) == ["801 lines, more than 800"]


def test_a_page_citing_21_commits_fails():
    hashes = [f"{i:07x}a" for i in range(21)]           # 8 hex digits each
    twenty = "\n".join(f"measured on `{h}`" for h in hashes[:20])
    assert page_problems(twenty) == []
    assert page_problems(twenty + f"\nand commit {hashes[20]}")[0].startswith("cites 21 commits")


def test_commits_are_counted_in_backticks_and_after_on_or_commit():
    text = ("on `abc1234`; on 5f3201e, commit deadbeef0; `0123456789abcdef0123456789abcdef01234567`;\n"
            "twice `abc1234`; not `abc123` (six), not 1.0000000, not `VAM_PAGE_MAX=8192`, not on the 12th")
    assert cited_commits(text) == {"abc1234", "5f3201e", "deadbeef0",
                                   "0123456789abcdef0123456789abcdef01234567"}


def test_a_note_without_a_date_or_missing_from_the_index_fails(tmp_path):
    (tmp_path / "2026-11-21-littered.md").write_text("# a\n")
    (tmp_path / "threads.md").write_text("# b\n")
    (tmp_path / "2026-13-40-bad-date.md").write_text("# c\n")
    (tmp_path / "README.md").write_text("- [2026-11-21-littered.md](2026-11-21-littered.md)\n")
    assert notes_problems(tmp_path) == [
        "2026-13-40-bad-date.md: 2026-13-40 is not a date",
        "threads.md: not named YYYY-MM-DD-topic.md",
        "2026-13-40-bad-date.md: not listed in README.md",
        "threads.md: not listed in README.md",
    ]
    os.remove(tmp_path / "README.md")
    assert "no README.md listing the notes" in notes_problems(tmp_path)


def test_a_link_to_a_missing_note_or_anchor_fails(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "2026-11-21-a.md").write_text("# A\n\n## The papers' claims\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](notes/2026-11-21-a.md#the-papers-claims) [gone](notes/2026-11-22-b.md)\n"
                    "[bad anchor](notes/2026-11-21-a.md#threads) [web](https://example.org)\n")
    assert broken_links(str(page)) == ["notes/2026-11-22-b.md: no such file",
                                       "notes/2026-11-21-a.md#threads: no heading with that anchor"]


@pytest.mark.parametrize("heading,anchor", [("The papers' claims", "the-papers-claims"),
                                            ("vam against the peers on the study's programs",
                                             "vam-against-the-peers-on-the-studys-programs"),
                                            ("Ablation with `VAM_LARGE_QUICK`", "ablation-with-vam_large_quick")])
def test_anchors_follow_the_renderers_rule(heading, anchor):
    assert slug(heading) == anchor
