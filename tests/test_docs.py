"""Every reference to the rules documents resolves.

Docstrings, comments and a few user-visible strings cite sections of ``docs/coffeebench.md``
and ``docs/allobench.md`` ("docs/coffeebench.md §5", "docs/coffeebench.md §6, §8",
"docs/coffeebench.md §1–§9"). A reference is only useful if the file exists and has that
section, so these tests read every such reference in ``src/``, ``tests/`` and
``benchmarks/`` and look the sections up in the documents' headings. They also refuse the
older form that cited a specification outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCANNED = ("src/econbench", "tests", "benchmarks")
SUFFIXES = {".py", ".md", ".toml", ".txt"}

SECTION = r"§\d+(?:\.\d+)*"
REFERENCE = re.compile(
    r"docs/(?P<file>[A-Za-z0-9_-]+\.md)\s+"
    rf"(?P<sections>{SECTION}(?:\s*(?:,|–|-|and|or)\s*{SECTION})*)"
)
HEADING = re.compile(r"^#{1,6}\s+(?P<number>\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
# Split so that this file does not match its own patterns.
DANGLING = (
    re.compile("spec" + r"\s*§", re.IGNORECASE),
    re.compile("spec" + r"/(?:coffee|allo)bench\.md"),
)


def scanned_files() -> list[Path]:
    """The text files whose references must resolve (this test's own file excluded)."""
    out = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and path != Path(__file__).resolve():
                out.append(path)
    return out


def sections_of(doc: Path) -> set[str]:
    """Section numbers of a document's headings: "## 5. Shipping risk" gives "5"."""
    return {m["number"] for m in HEADING.finditer(doc.read_text(encoding="utf-8"))}


def references(text: str) -> list[tuple[str, list[str]]]:
    """Each docs reference in ``text``: the file name and the section numbers it cites."""
    return [
        (m["file"], re.findall(r"§(\d+(?:\.\d+)*)", m["sections"]))
        for m in REFERENCE.finditer(text)
    ]


def unresolved(text: str, docs: Path = DOCS) -> list[str]:
    """References in ``text`` whose file or section does not exist, as readable strings."""
    problems = []
    for name, numbers in references(text):
        doc = docs / name
        if not doc.is_file():
            problems.append(f"docs/{name} does not exist")
            continue
        known = sections_of(doc)
        problems += [f"docs/{name} has no §{n}" for n in numbers if n not in known]
    return problems


def test_the_rules_documents_exist_with_numbered_sections() -> None:
    assert sections_of(DOCS / "coffeebench.md") >= {str(n) for n in range(1, 17)}
    assert sections_of(DOCS / "allobench.md") >= {str(n) for n in range(1, 9)}


def test_every_docs_reference_resolves() -> None:
    problems = []
    cited: set[str] = set()
    for path in scanned_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        cited |= {name for name, _ in references(text)}
        problems += [f"{path.relative_to(ROOT)}: {p}" for p in unresolved(text)]
    assert problems == []
    # The scan found the references the code carries (a broken pattern would find none).
    assert {"coffeebench.md", "allobench.md"} <= cited


def test_no_reference_to_a_specification_outside_the_repository() -> None:
    hits = []
    for path in scanned_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.split("\n"), start=1):
            if any(p.search(line) for p in DANGLING):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []


def test_the_readme_links_both_documents() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/coffeebench.md)" in readme
    assert "(docs/allobench.md)" in readme


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see docs/coffeebench.md §5.", []),
        ("(docs/coffeebench.md §6, §8)", []),
        ("docs/coffeebench.md §1–§9", []),
        ("docs/allobench.md §9 and §10", ["docs/allobench.md has no §10"]),
        ("docs/coffeebench.md §99", ["docs/coffeebench.md has no §99"]),
        ("docs/coffeebench.md §7.3", ["docs/coffeebench.md has no §7.3"]),
        ("docs/nowhere.md §1", ["docs/nowhere.md does not exist"]),
    ],
)
def test_the_checker_catches_what_does_not_resolve(text: str, expected: list[str]) -> None:
    assert unresolved(text) == expected
