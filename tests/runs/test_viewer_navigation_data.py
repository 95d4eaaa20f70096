"""What the viewer's server adds for the page to find its way: where each run lies and what
it plays (the run list's groups and filter), a CoffeeBench run's festival days (shaded in the
charts) and an AlloBench episode's task stream with its commits (the episode's strip)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.runs.viewer_samples import allo_cell

from econbench.coffee.paper.economy import FESTIVALS
from econbench.runs import layout
from econbench.runs.viewer import Catalog
from econbench.runs.viewer.coffee_calendar import festivals
from econbench.runs.viewer.coffee_data import CoffeeData
from econbench.runs.viewer.data import place
from econbench.runs.viewer.server import Api


def test_a_runs_place_is_its_parent_folder_and_its_name() -> None:
    assert place("sweep/cell-a/seed_0", Path("/x/sweep/cell-a/seed_0")) == (
        "sweep/cell-a",
        "seed_0",
    )
    assert place("seed_0", Path("/x/seed_0")) == ("", "seed_0")
    assert place(".", Path("/runs/my-run")) == ("", "my-run")


@pytest.fixture(scope="module")
def sweep_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One AlloBench cell copied as ``seed_0`` into three folders, as a sweep lays cells out."""
    root = tmp_path_factory.mktemp("sweep-like")
    cell = allo_cell(root / "template", episodes=1)
    for folder in ("exp/a", "exp/b", "other"):
        shutil.copytree(cell, root / folder / "seed_0")
    shutil.rmtree(cell)
    return root


def test_runs_of_the_same_name_are_told_apart_by_their_group(sweep_like: Path) -> None:
    runs = Api(Catalog(sweep_like)).handle(["runs"], {})["runs"]
    assert [(r["group"], r["name"]) for r in runs] == [
        ("exp/a", "seed_0"),
        ("exp/b", "seed_0"),
        ("other", "seed_0"),
    ]
    assert len({r["id"] for r in runs}) == 3
    for run in runs:
        assert run["actors"] == ["wait:2"]
        assert run["condition"] == "frontier"


def test_a_coffee_runs_facets_name_every_actor_and_its_condition() -> None:
    config = {"agents": {"default": "scripted", "roaster_A": "openai/gpt-5"}}
    assert CoffeeData.facets(config) == {
        "condition": "hardened",
        "actors": ["openai/gpt-5", "scripted"],
    }
    assert CoffeeData.facets({**config, "condition": "paper"})["condition"] == "paper"


def test_festival_days_come_from_the_runs_economy_else_the_default() -> None:
    assert festivals({}) == [{"first": 40, "last": 53, "factor": 3.0, "name": "festival"}]
    economy = {"economy": {"festival_days": [5, 9], "festival_factor": 2.0}}
    assert festivals(economy) == [{"first": 5, "last": 9, "factor": 2.0, "name": "festival"}]
    broken = {"economy": {"festival_days": [9, 5]}}  # not a span: the default's days
    assert (festivals(broken)[0]["first"], festivals(broken)[0]["last"]) == (40, 53)


def test_a_paper_runs_festivals_are_the_references_calendar() -> None:
    shown = festivals({"condition": "paper"})
    assert [(f["first"], f["last"], f["factor"], f["name"]) for f in shown] == [
        tuple(f) for f in FESTIVALS
    ]


def test_the_index_of_a_coffee_run_carries_its_festival_days(tmp_path: Path) -> None:
    data = CoffeeData(tmp_path)
    assert data.index()["festivals"] == []  # no config yet: nothing to shade
    config = {"seed": 1, "days": 3, "economy": {"festival_days": [1, 2]}}
    (tmp_path / layout.CONFIG).write_text(json.dumps(config))
    assert data.index()["festivals"] == [{"first": 1, "last": 2, "factor": 3.0, "name": "festival"}]


def _episode(**more: Any) -> dict[str, Any]:
    turns = [
        {"t": t, "cls": c, "collected": t in (2, 4), "commit": t == 2, "first_sight": t == 0}
        for t, c in enumerate([1, 0, 1, 2, 1])
    ]
    return {
        "stream": {"classes": [1, 0, 1, 2, 1], "labels": ["red", "blue", "green"], "hot": [1]},
        "commits": [
            {"t": 2, "cls": 1, "first_sight": False, "trap": False},
            {"t": 3, "cls": 2, "first_sight": True, "trap": True},
        ],
        "turns": turns,
        **more,
    }


def test_an_episodes_strip_lists_every_task_in_order_with_its_commits() -> None:
    from econbench.runs.viewer.allo_data import episode_strip

    strip = episode_strip(_episode())
    assert [t["label"] for t in strip["tasks"]] == ["blue", "red", "blue", "green", "blue"]
    assert [t["sighting"] for t in strip["tasks"]] == [1, 1, 2, 1, 3]
    assert [t["hot"] for t in strip["tasks"]] == [True, False, True, False, True]
    assert [t["collected"] for t in strip["tasks"]] == [False, False, True, False, True]
    assert strip["commits"] == [
        {"t": 2, "cls": 1, "label": "blue", "first_sight": False, "trap": False},
        {"t": 3, "cls": 2, "label": "green", "first_sight": True, "trap": True},
    ]
    assert strip["hot"] == [1]


def test_a_strip_without_a_recorded_stream_is_read_from_the_turns() -> None:
    from econbench.runs.viewer.allo_data import episode_strip

    row = _episode()
    del row["stream"], row["commits"]
    strip = episode_strip(row)
    assert [t["cls"] for t in strip["tasks"]] == [1, 0, 1, 2, 1]
    labels = [t["label"] for t in strip["tasks"]]
    assert labels == ["class 1", "class 0", "class 1", "class 2", "class 1"]
    assert [c["t"] for c in strip["commits"]] == [2]


def test_the_episode_answer_holds_the_strip_of_a_played_cell(sweep_like: Path) -> None:
    api = Api(Catalog(sweep_like))
    run = api.handle(["runs"], {})["runs"][0]
    episode = api.handle(["run", run["id"], "episode", "0"], {})
    record = layout.read_jsonl(sweep_like / run["rel"] / layout.EPISODES)[0]
    strip = episode["strip"]
    assert len(strip["tasks"]) == len(record["stream"]["classes"]) == len(record["turns"])
    assert [c["t"] for c in strip["commits"]] == [c["t"] for c in record["commits"]]
    assert strip["commits"], "the sample policy commits"
