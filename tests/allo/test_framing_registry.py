"""The framing registry: each framing declares its key, ladder order, title, reply style and
report label once, and the framing list, the report and the transfer tables read them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from econbench.allo.framings import FRAMINGS, get_framing, ladder_order, register
from econbench.allo.framings.registry import unregister
from econbench.allo.framings.urn import UrnFraming
from econbench.runs.allo import transfer
from econbench.runs.frames import load_runs
from econbench.runs.report import build_report


class ToyFraming(UrnFraming):
    """A throwaway rung after R3: the urn under another key."""

    name = "toy"
    order = 5
    title = "toy urn (a test's framing)"
    label = "R5 toy"


@pytest.fixture
def toy() -> Iterator[type[ToyFraming]]:
    register(ToyFraming)
    try:
        yield ToyFraming
    finally:
        unregister("toy")


def allo_cell(out: Path, framing: str, first_sight: list[bool]) -> None:
    """A hand-made cell of two seeds, each with one commit of the given first-sight flag."""
    out.mkdir(parents=True)
    config = {"framing": framing, "policy": "acme/m", "skin": "default", "cost": 0.0, "budget": 3}
    (out / "meta.json").write_text(json.dumps({"benchmark": "allo", "schema_version": 1}))
    (out / "config.json").write_text(json.dumps(config))
    with (out / "episodes.jsonl").open("w") as fh:
        for seed, flag in enumerate(first_sight, start=1):
            commits = [{"first_sight": flag, "sighting": 1 if flag else 2}]
            record = {
                "seed": seed, "utility": 10, "opt": 20, "commits": commits,
                "first_sight_commits": int(flag), "turns": [],
            }  # fmt: skip
            fh.write(json.dumps(record) + "\n")
    (out / "summary.json").write_text(json.dumps({**config, "episodes": len(first_sight)}))


def test_the_built_in_rungs_declare_their_order_title_style_and_label() -> None:
    assert list(FRAMINGS) == ["r0", "r1", "r2", "r3", "r0-tool"]
    assert [ladder_order(k) for k in ("r0", "r1", "r2", "r3")] == [0, 1, 2, 3]
    assert {k: (c.reply_style, c.label) for k, c in FRAMINGS.items()} == {
        "r0": ("text", "R0 urn"),
        "r1": ("claim", "R1 declarative"),
        "r2": ("code", "R2 code"),
        "r3": ("build", "R3 full build"),
        "r0-tool": ("keep", "R0 keep/pass tool call"),
    }
    assert [r.title for r in transfer.RUNGS if r.key in ("r0", "r1", "r2", "r3")] == [
        "R0 urn",
        "R1 declarative",
        "R2 code",
        "R3 full build",
    ]


def test_a_registered_framing_sorts_by_its_order_and_shows_its_title_in_the_report(
    toy: type[ToyFraming], tmp_path: Path
) -> None:
    assert list(FRAMINGS) == ["r0", "r1", "r2", "r3", "toy", "r0-tool"]
    assert get_framing("toy").describe()["title"] == "toy urn (a test's framing)"
    allo_cell(tmp_path / "toy", "toy", [True, True])  # written first: order is not by file
    allo_cell(tmp_path / "r3", "r3", [False, False])
    allo_cell(tmp_path / "r0", "r0", [False, False])
    ladder = next(t for t in build_report(load_runs([tmp_path])).tables if t.name == "ladder")
    assert list(ladder.data["framing"]) == ["r0", "r3", "toy"]
    columns = list(ladder.display.columns)
    assert columns.index("r0") < columns.index("r3") < columns.index("toy")
    assert ladder.display.iloc[0]["trigger"] == "toy"  # r3 → toy rises 100 points
    assert (
        "Rungs beyond the paper's R0–R3, in ladder order: "
        "toy: R5 toy (toy urn (a test's framing))." in ladder.notes
    )


def test_the_paper_ladder_gets_no_extra_note(tmp_path: Path) -> None:
    allo_cell(tmp_path / "r0", "r0", [False, False])
    allo_cell(tmp_path / "r1", "r1", [True, True])
    ladder = next(t for t in build_report(load_runs([tmp_path])).tables if t.name == "ladder")
    assert not any("beyond the paper" in n for n in ladder.notes)


def test_an_unknown_rung_is_an_error_not_sorted_last(tmp_path: Path) -> None:
    allo_cell(tmp_path / "r0", "r0", [False, False])
    allo_cell(tmp_path / "r4", "r4", [True, True])
    with pytest.raises(ValueError, match="unknown framing 'r4'"):
        build_report(load_runs([tmp_path]))
    with pytest.raises(ValueError, match="unknown framing 'r4'"):
        ladder_order("r4")


def test_registering_checks_the_declarations(toy: type[ToyFraming]) -> None:
    class SameKey(UrnFraming):
        order = 6

    with pytest.raises(ValueError, match="'r0' is taken"):
        register(SameKey)

    class SameOrder(UrnFraming):
        name = "toy2"
        order = 5

    with pytest.raises(ValueError, match="share order 5"):
        register(SameOrder)

    class BadStyle(UrnFraming):
        name = "toy3"
        order = 7
        reply_style = "shout"  # type: ignore[assignment]

    with pytest.raises(TypeError, match="unknown reply_style 'shout'"):
        register(BadStyle)
    assert list(FRAMINGS) == ["r0", "r1", "r2", "r3", "toy", "r0-tool"]
