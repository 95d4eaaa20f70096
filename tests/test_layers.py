"""The import graph points down only: cli → runs → coffee | allo → agents (see DESIGN.md).

Every module's imports are read from its source (``ast``, function-level imports included,
since a lazy import is still an arrow), so a violation fails here before it can hide behind
an import that happens not to run.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "econbench"

KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()
"""Arrows that break the rule on purpose, each with its reason (none today)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every ``econbench`` module ``path`` imports, at any depth of its code."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> set[str]:
    """The ``econbench`` modules a module of ``package`` with this source imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
    return {m for m in found if m == "econbench" or m.startswith("econbench.")}


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    """``coffee``, ``allo``, ``runs``, ``cli``, ``agents`` or ``agents.models`` (the
    providers); ``other`` for the rest (``econbench``, ``jsonio``, …)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "other"
    if parts[1] == "agents" and len(parts) > 2 and parts[2] == "models":
        return "agents.models"
    if parts[1] in ("coffee", "allo", "runs", "cli", "agents"):
        return parts[1]
    return "other"


FORBIDDEN = {
    "coffee": {"runs", "cli", "agents.models"},
    "allo": {"runs", "cli", "agents.models"},
    "agents": {"coffee", "allo", "runs", "cli"},
    "agents.models": {"coffee", "allo", "runs", "cli"},
}
"""Per layer, the layers it must never import."""


def test_every_arrow_points_down() -> None:
    bad = sorted(
        (source, target)
        for source, targets in graph().items()
        for target in targets
        if layer(target) in FORBIDDEN.get(layer(source), set())
        and (source, target) not in KNOWN_EXCEPTIONS
    )
    assert not bad, "imports against the layers:\n" + "\n".join(f"{a} -> {b}" for a, b in bad)


def test_the_known_exceptions_still_exist() -> None:
    """An exception that was fixed is struck from the list, so it cannot come back."""
    edges = {(a, b) for a, targets in graph().items() for b in targets}
    assert edges >= KNOWN_EXCEPTIONS, sorted(KNOWN_EXCEPTIONS - edges)


def cycles_across_packages(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of modules that span more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len({layer(m) for m in component}) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycle_spans_two_packages() -> None:
    """No chain of imports leads from a module of one package (coffee, allo, runs, agents,
    agents.models) back to itself through another: the packages stay layered even where
    a subpackage (``agents.models``) and its parent use each other's modules."""
    edges = {
        source: {t for t in targets if (source, t) not in KNOWN_EXCEPTIONS}
        for source, targets in graph().items()
    }
    cycles = cycles_across_packages(edges)
    assert not cycles, "import cycles across packages:\n" + "\n".join(map(str, cycles))


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {
        "econbench.coffee.a": {"econbench.runs.b"},
        "econbench.runs.b": {"econbench.coffee.a"},
        "econbench.agents.c": set(),
    }
    assert cycles_across_packages(edges) == [["econbench.coffee.a", "econbench.runs.b"]]


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    """A function-level import counts, and a relative one resolves to its module."""
    source = (
        "from . import state\n"
        "def f():\n"
        "    from econbench.runs.store import write_json\n"
        "    from ..agents.models import base\n"
    )
    found = imports_in(source, "econbench.coffee")
    assert found == {"econbench.coffee", "econbench.runs.store", "econbench.agents.models"}
    assert {layer(m) for m in found} & FORBIDDEN["coffee"] == {"runs", "agents.models"}
