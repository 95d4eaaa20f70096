"""Write ``docs/coffee_conditions.md``: what a model reads under CoffeeBench's two conditions,
as a readable diff.

``paper`` reproduces the reference implementation's texts byte for byte
(``econbench.coffee.paper``); ``hardened`` (the default) starts from them and changes only the
sentences its rules require (``econbench.coffee.prompts``, the tool descriptions of
``econbench.coffee.toolkit``). For roaster_A at the default economy and prompt variant, this
script renders both conditions' system prompt, first user message and tool descriptions and
writes one unified diff per text (``-`` the paper's line, ``+`` hardened's), one sentence per
line and wrapped, so a changed sentence shows as itself and not as a reflowed paragraph.

Run from the repository root: ``python scripts/coffee_condition_diff.py`` (``--check``
compares instead of writing, exit status 1 when the committed file is stale).
``tests/coffee/test_condition_diff.py`` runs the check, so the docs cannot go stale.
"""

from __future__ import annotations

import difflib
import inspect
import re
import sys
import textwrap
from pathlib import Path

FIRM = "roaster_A"
WIDTH = 96
"""Columns a diff line is wrapped at (before its ``+``/``-``/space marker)."""
TARGET = Path(__file__).resolve().parents[1] / "docs/coffee_conditions.md"

_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=[A-Z`\"(*])")
"""A sentence boundary: end punctuation (not of "e.g." or "i.e."), spaces, then what starts a
sentence."""
_BULLET = re.compile(r"^(?:[-·*] |Args:)")


def reflow(text: str) -> str:
    """A docstring's hard-wrapped lines joined into the logical lines they continue, so the
    reference's wrapping (hardened sends its descriptions as single lines) is not a difference.

    A line continues the one before it unless either is blank, the one before ends with ":",
    or it starts a bullet; at the left margin it continues a margin line, elsewhere only a
    line indented less (an argument's or a bullet's continuation)."""
    out: list[str] = []
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        indent = len(line) - len(line.lstrip())
        prev_indent = len(prev) - len(prev.lstrip())
        joins = (
            line.strip()
            and prev.strip()
            and not prev.rstrip().endswith(":")
            and not _BULLET.match(line.strip())
            and (indent > prev_indent or indent == prev_indent == 0)
        )
        if joins:
            out[-1] = prev.rstrip() + " " + line.strip()
        else:
            out.append(line.rstrip())
    return "\n".join(out)


def paper_texts() -> dict[str, str]:
    """The paper condition's texts for roaster_A: system prompt, day-0 message, tools."""
    from econbench.coffee.paper.economy import build_economy
    from econbench.coffee.paper.prompts import INITIAL_OBSERVATION, system_prompt
    from econbench.coffee.paper.tools import tool_specs

    books = build_economy(0, 90).business_apps[FIRM]
    texts = {"system prompt": system_prompt(FIRM).strip("\n"), "day-0 message": INITIAL_OBSERVATION}
    for spec in tool_specs(books):
        texts[spec.name] = reflow(inspect.cleandoc(spec.description))
    return texts


def _hardened_tool_text(spec: object) -> str:
    """A hardened tool as the model meets it: the description, then each parameter's
    description (which hardened sends inside the JSON schema), laid out as the reference's
    ``Args:`` block so the two read side by side."""
    lines = [spec.description]  # type: ignore[attr-defined]
    params = [p for p in spec.signature if p.description]  # type: ignore[attr-defined]
    if params:
        lines += ["", "Args:"] + [f"    {p.name}: {p.description}" for p in params]
    return "\n".join(lines)


def hardened_texts() -> dict[str, str]:
    """The hardened condition's texts for roaster_A, tools in the paper's order (a tool only
    one condition has comes last)."""
    from econbench.coffee.config import WorldConfig
    from econbench.coffee.paper.tools import tool_names
    from econbench.coffee.prompts import DAY0_MESSAGE, system_prompt
    from econbench.coffee.toolkit import toolkit_class

    specs = toolkit_class("roaster").tool_specs()
    order = [n for n in tool_names("roaster") if n in specs]
    order += [n for n in specs if n not in order]
    texts = {
        "system prompt": system_prompt(FIRM, WorldConfig()),
        "day-0 message": DAY0_MESSAGE,
    }
    for name in order:
        texts[name] = reflow(_hardened_tool_text(specs[name]))
    return texts


def diff_lines(text: str) -> list[str]:
    """A text as the diff compares it: each line split into sentences, each sentence wrapped
    at ``WIDTH``. A line's first sentence keeps the line's indent, its later sentences are
    indented two spaces more, and a wrapped sentence's continuation lines four."""
    out: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        if not line.strip():
            out.append("")
            continue
        indent = line[: len(line) - len(line.lstrip())]
        for i, sentence in enumerate(_SENTENCE_END.split(line.strip())):
            out += textwrap.wrap(
                sentence,
                WIDTH,
                initial_indent=indent if i == 0 else indent + "  ",
                subsequent_indent=indent + "    ",
                break_long_words=False,
                break_on_hyphens=False,
            ) or [indent]
    return out


def unified(paper: str | None, hardened: str | None, context: int = 2) -> list[str]:
    """The unified diff of two texts (``None``: the condition has no such text)."""
    before = diff_lines(paper) if paper is not None else []
    after = diff_lines(hardened) if hardened is not None else []
    lines = difflib.unified_diff(
        before, after, fromfile="paper", tofile="hardened", n=context, lineterm=""
    )
    return [line.rstrip() for line in lines]


HEADER = """\
# CoffeeBench conditions: what the model reads

<!-- Generated by scripts/coffee_condition_diff.py; do not edit by hand. -->

CoffeeBench has two conditions (docs/coffeebench.md). `paper` sends the reference
implementation's texts byte for byte (`econbench.coffee.paper`). `hardened`, the default for
new leaderboards and RL, runs econbench's economy with the reference's defects fixed, and its
texts start from the reference's and change only the sentences its rules require
(`coffee/prompts/*.md`, the tool descriptions in `coffee/toolkit.py`, the day-0 message in
`coffee/prompts/__init__.py`).

Below, for roaster_A at the default economy and prompt variant, each text the model reads is
shown as a unified diff: `-` lines are the paper's, `+` lines hardened's, unmarked lines are
the same in both. For readability each line is split into sentences (a line's later sentences
indented two spaces) and wrapped at {width} columns (continuations indented four); the texts
themselves are not. A hardened tool's parameter descriptions, which it sends inside the JSON
schema, are laid out as the reference's `Args:` block; the schemas themselves (types,
defaults, enums) are not compared here. `python scripts/coffee_condition_diff.py` regenerates
this file; a test fails when it is stale.
"""


def _fence(lines: list[str]) -> list[str]:
    body = "\n".join(lines)
    fence = "````" if "```" in body else "```"
    return [fence + "diff", *lines, fence]


def render() -> str:
    """The whole of ``docs/coffee_conditions.md``."""
    paper, hardened = paper_texts(), hardened_texts()
    out = [HEADER.format(width=WIDTH)]
    sections = [("System prompt", "system prompt"), ("Day-0 message", "day-0 message")]
    for title, key in sections:
        out += [f"## {title}", ""]
        out += _section(paper.get(key), hardened.get(key), context=3)
    out += ["## Tool descriptions", ""]
    names = [n for n in paper if n not in dict(sections).values()]
    names += [n for n in hardened if n not in names and n not in dict(sections).values()]
    for name in names:
        out += [f"### {name}", ""]
        out += _section(paper.get(name), hardened.get(name), context=20)
    return "\n".join(out).rstrip("\n") + "\n"


def _section(paper: str | None, hardened: str | None, context: int) -> list[str]:
    if paper is None or hardened is None:
        which = "hardened" if paper is None else "paper"
        note = f"Only the {which} condition has this tool."
        return [note, "", *_fence(unified(paper, hardened, context)), ""]
    if paper == hardened:
        return ["Identical in both conditions.", ""]
    return [*_fence(unified(paper, hardened, context)), ""]


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python scripts/coffee_condition_diff.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
