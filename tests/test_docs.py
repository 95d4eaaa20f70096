"""The documentation holds together: references resolve, links resolve, the site builds.

Docstrings, comments and a few user-visible strings cite sections of ``docs/coffeebench.md``
and ``docs/allobench.md`` ("docs/coffeebench.md §5", "docs/coffeebench.md §6, §8",
"docs/coffeebench.md §1–§9"). A reference is only useful if the file exists and has that
section, so these tests read every such reference in ``src/``, ``tests/``, ``benchmarks/``,
``docs/`` and ``examples/`` and look the sections up in the documents' headings. They also
refuse the older form that cited a specification outside the repository.

The site (``mkdocs.yml``, ``docs/``) is built with ``--strict``, which fails on a broken
link or anchor; the README, which GitHub shows outside the site, has its relative links
checked here. Every ``econbench`` command a fenced shell block of the README or the site
shows is parsed by the command line itself, as ``--help`` would check it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCANNED = ("src/econbench", "tests", "benchmarks", "docs", "examples")
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


# --------------------------------------------------------------------------- the README


def markdown_pages() -> list[Path]:
    """The README, the site's pages and the examples' README."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md")), ROOT / "examples" / "README.md"]


def test_the_readme_is_a_short_page() -> None:
    assert (ROOT / "README.md").stat().st_size < 15_000


LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def anchors_of(page: Path) -> set[str]:
    """The anchors mkdocs gives a page's headings (its toc extension's slugs)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.M)
    return {slugify(re.sub(r"[`*]", "", h), "-") for h in headings}


def broken_links(page: Path) -> list[str]:
    """Relative links of ``page`` whose file, or whose anchor in a Markdown file, is missing."""
    problems = []
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target = match["target"]
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:: not checked offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            problems.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors_of(resolved):
            problems.append(f"{target}: no such heading")
    return problems


@pytest.mark.parametrize("page", ["README.md", "examples/README.md"])
def test_the_readmes_links_resolve(page: str) -> None:
    assert broken_links(ROOT / page) == []


def test_the_link_checker_catches_what_does_not_resolve(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A title\n\n## `Some` section\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](a.md#some-section) [file](b.md) [anchor](a.md#nope) [web](https://x.org/y)"
    )
    assert broken_links(page) == ["b.md: no such file", "a.md#nope: no such heading"]


def test_no_page_points_back_to_the_readme_for_what_moved() -> None:
    """The README is short now: the rules, the figures and the reference live in the site."""
    back = re.compile(r"\bthe README\b|README's|\(README\b|README \(")
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for top in ("docs", "tests", "benchmarks", "examples")
        for path in sorted((ROOT / top).rglob("*"))
        if path.suffix in SUFFIXES and path.is_file() and path != Path(__file__).resolve()
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
        if back.search(line)
    ]
    assert hits == []


# --------------------------------------------------------------------------- the site


def test_the_site_builds_with_strict_link_and_anchor_checks(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a missing page, a broken link or anchor, or a page left out
    of the nav fails the build; the CLI reference is generated from the Typer app by the
    build's hook (``docs/hooks/cli_reference.py``)."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    cli = (tmp_path / "cli" / "index.html").read_text(encoding="utf-8")
    assert "Usage: econbench coffee run [OPTIONS]" in cli
    assert "Usage: econbench allo run [OPTIONS]" in cli
    assert "benchmarks/startup.py" in (tmp_path / "performance" / "index.html").read_text()


def hook(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_lists_every_command_of_the_app() -> None:
    reference = hook("cli_reference")
    paths = [ctx.command_path for _, ctx in reference.commands()]
    rendered = reference.render()
    assert {"econbench", "econbench coffee run", "econbench allo import", "econbench sweep"} <= set(
        paths
    )
    assert all(f"`{p}`" in rendered for p in paths)
    assert "<!-- econbench-cli-reference -->" in (DOCS / "cli.md").read_text()


# --------------------------------------------------------------------------- commands shown


SHELL_BLOCK = re.compile(r"```(?:bash|console|sh|shell)\n(.*?)```", re.S)
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")


def shown_commands(text: str) -> list[list[str]]:
    """The argument lists of every ``econbench`` command in the fenced shell blocks of
    ``text`` (after ``$ `` and ``VAR=value`` prefixes, before a comment or ``&``)."""
    commands = []
    for block in SHELL_BLOCK.findall(text):
        for line in block.replace("\\\n", " ").split("\n"):
            words = shlex.split(line.removeprefix("$ "), comments=True)
            while words and ASSIGNMENT.match(words[0]):
                words.pop(0)
            if words and words[0] == "econbench":
                commands.append([w for w in words[1:] if w != "&"])
    return commands


def parse(args: list[str]) -> None:
    """Parse ``econbench ARGS`` as the command line would, without running the command:
    unknown commands or options and bad option values raise click's usage errors."""
    import typer.main

    from econbench.cli import app

    command, name, ctx = typer.main.get_command(app), "econbench", None
    while hasattr(command, "resolve_command") and args and not args[0].startswith("-"):
        ctx = command.context_class(command, info_name=name, parent=ctx)
        name, command, args = command.resolve_command(ctx, list(args))
    command.make_context(name, list(args), parent=ctx)


def test_every_econbench_command_shown_in_the_docs_parses() -> None:
    shown = [(page, args) for page in markdown_pages() for args in shown_commands(page.read_text())]
    assert len(shown) >= 15  # the README's and the tutorial's at least
    problems = []
    for page, args in shown:
        try:
            parse(args)
        except Exception as error:  # click's UsageError and BadParameter, or an assertion
            problems.append(f"{page.relative_to(ROOT)}: econbench {shlex.join(args)}: {error}")
    assert problems == []


def test_the_command_check_refuses_what_the_cli_refuses() -> None:
    parse(["coffee", "run", "--days", "3", "--agent", "roaster_A=passive"])
    for bad in (
        ["coffee", "runn"],
        ["coffee", "run", "--dayz", "3"],
        ["coffee", "run", "--days", "x"],
    ):
        with pytest.raises(Exception):  # noqa: B017 - click's own error classes are vendored
            parse(bad)
