"""mkdocs hook: the CLI reference is the command line's own help, rendered at build time.

``docs/cli.md`` holds the marker below; every build replaces it with the help of every
``econbench`` command, read from the Typer app through click's own help formatter, so the
reference cannot drift from the options the commands accept. ``tests/test_docs.py`` builds
the site with ``--strict`` and checks the commands the docs show against the same app.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MARKER = "<!-- econbench-cli-reference -->"
WIDTH = 100
"""Columns the help is formatted at, whatever the terminal that builds the site."""


def walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """Every command under ``command``, depth first in the order its help lists them."""
    yield command, ctx
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            yield from walk(sub, sub.context_class(sub, info_name=name, parent=ctx, **_width()))


def _width() -> dict[str, int]:
    return {"terminal_width": WIDTH, "max_content_width": WIDTH}


def commands() -> Iterator[tuple[Any, Any]]:
    """Each ``econbench`` command (the root first) with the context its help is rendered in."""
    import typer.main

    from econbench.cli import app

    root = typer.main.get_command(app)
    yield from walk(root, root.context_class(root, info_name="econbench", **_width()))


def render() -> str:
    """The reference: a heading and the help text of every command."""
    parts = []
    for command, ctx in commands():
        depth = ctx.command_path.count(" ")
        heading = "#" * min(2 + max(depth - 1, 0), 4)
        parts.append(f"{heading} `{ctx.command_path}`\n\n```text\n{command.get_help(ctx)}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker of ``docs/cli.md`` with the generated reference."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
