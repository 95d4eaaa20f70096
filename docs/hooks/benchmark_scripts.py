"""mkdocs hook: the list of measuring scripts on the performance page, read from benchmarks/.

Each script's first docstring paragraph (a shell script's first comment line) says what it
measures; the page shows them as found at build time, so a script added or removed is listed
or dropped without an edit to the docs.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

MARKER = "<!-- econbench-benchmark-scripts -->"
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def summary(path: Path) -> str:
    """What a script measures, in one line."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        first = (ast.get_docstring(ast.parse(text)) or "").split("\n\n")[0]
    else:
        comments = [ln[1:].strip() for ln in text.splitlines()[1:] if ln.startswith("#")]
        first = comments[0] if comments else ""
    return " ".join(first.split()).replace("|", "\\|")


def render() -> str:
    rows = ["| script | what it measures |", "|---|---|"]
    for path in sorted(BENCHMARKS.iterdir()):
        if path.suffix in {".py", ".sh"} and not path.name.startswith("_"):
            rows.append(f"| `benchmarks/{path.name}` | {summary(path)} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker of ``docs/performance.md`` with the table of scripts."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
