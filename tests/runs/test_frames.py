"""The pandas API: one run, runs in progress, many runs, labels."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import econbench
from econbench.agents.policy import Routine, ScriptedPolicy
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.runner import CellSpec
from econbench.runs.allo.cell import run_cell
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.reading import idle_flags
from econbench.runs.coffee.run import run_to_dir
from econbench.runs.frames import (
    RunSet,
    concat,
    derive_label,
    load_run,
    load_runs,
    load_sweep,
)

DAYS = 8


class Chatty(ScriptedPolicy):
    """Messages two firms on even days, waits on odd ones (idle days and messages)."""

    name = "chatty"

    def routine(self, observation: dict[str, Any]) -> Routine:
        if observation["day"] % 2 == 0:
            yield ToolCall("send_message", {"recipient": "farmer_A", "title": "hi", "body": "."})
            if observation["day"] % 4 == 0:
                yield ToolCall(
                    "send_message", {"recipient": "retailer_B", "title": "hi", "body": "."}
                )
        yield ToolCall("wait_for_next_day")


def coffee(out: Path, seed: int, roaster: str = "scripted", **kw: Any) -> Path:
    agents = {"default": "bargaining", "roaster_A": roaster}
    run_to_dir(RunConfig(seed=seed, days=DAYS, agents=agents), out, **kw)
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("frames")
    coffee(base / "coffee" / "scripted-1", 1)
    coffee(base / "coffee" / "scripted-2", 2)
    coffee(base / "coffee" / "chatty-1", 1, "passive", policies={"roaster_A": Chatty()})
    run_cell(CellSpec("r0", "eager", seeds=(2000, 2001, 2002)), base / "allo" / "eager")
    return base


def summary_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text())


def test_coffee_run_frames_mirror_the_files(root: Path) -> None:
    run_dir = root / "coffee" / "scripted-1"
    run = load_run(run_dir)
    assert (run.benchmark, run.status, run.seed) == ("coffee", "completed", 1)
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    assert len(run.events) == len(lines)
    first = json.loads(lines[0])
    assert run.events.iloc[0]["type"] == first["type"]
    calls = run.events[run.events["type"] == "tool_call"]
    assert all(isinstance(a, dict) for a in calls["arguments"])  # nested payloads stay objects
    assert len(run.daily) == 6 * DAYS
    roaster = run.daily[(run.daily["firm"] == "roaster_A") & (run.daily["day"] == 3)].iloc[0]
    raw = next(
        json.loads(x)
        for x in (run_dir / "daily.jsonl").read_text().splitlines()
        if '"firm":"roaster_A"' in x and json.loads(x)["day"] == 3
    )
    assert roaster["cash"] == raw["cash"]
    assert (
        roaster["inventory.roasted_coffee_kg.qty"] == raw["inventory"]["roasted_coffee_kg"]["qty"]
    )
    assert roaster["inventory_kg"] == sum(v["qty"] for v in raw["inventory"].values())

    summary = summary_of(run_dir)
    frame = run.summary.set_index("firm")
    assert list(frame.index) == list(summary["firms"])
    for firm, data in summary["firms"].items():
        assert frame.loc[firm, "net_income"] == data["net_income"]
        assert frame.loc[firm, "idle_days"] == data["idle_days"]
        for tool, count in data["tool_calls_by_name"].items():
            assert frame.loc[firm, f"tool_calls_by_name.{tool}"] == count
    assert set(frame["seed"]) == {1}
    assert set(frame["days"]) == {DAYS}
    assert not frame["provisional"].any()


def test_idle_flags_reproduce_the_world_counter(root: Path) -> None:
    for name in ("scripted-1", "chatty-1"):
        run = load_run(root / "coffee" / name)
        flags = idle_flags(run.events, run.daily)
        counted = flags.groupby("firm")["idle"].sum()
        for firm, data in summary_of(run.path)["firms"].items():
            assert counted[firm] == data["idle_days"], (name, firm)
    chatty = load_run(root / "coffee" / "chatty-1")
    flags = idle_flags(chatty.events, chatty.daily)
    mine = flags[flags["firm"] == "roaster_A"].set_index("day")["idle"]
    assert list(mine) == [day % 2 == 1 for day in range(DAYS)]


def simulate_in_progress(src: Path, dst: Path, torn: str) -> Path:
    shutil.copytree(src, dst)
    (dst / "summary.json").unlink()
    with (dst / torn).open("a", encoding="utf-8") as fh:
        fh.write('{"seq": 99999, "day": 3, "type": "tool_ca')
    return dst


def test_a_run_in_progress_gets_a_provisional_summary(root: Path, tmp_path: Path) -> None:
    src = root / "coffee" / "chatty-1"
    run = load_run(simulate_in_progress(src, tmp_path / "live", "events.jsonl"))
    assert run.status == "interrupted"  # no process holds its lock
    assert len(run.events) == len(load_run(src).events)  # the torn line is skipped
    summary = summary_of(src)
    frame = run.summary.set_index("firm")
    assert frame["provisional"].all() and set(frame["status"]) == {"interrupted"}
    for firm, data in summary["firms"].items():
        for key in ("net_income", "revenue", "tool_calls", "idle_days", "messages_sent"):
            assert frame.loc[firm, key] == pytest.approx(data[key]), (firm, key)
        assert frame.loc[firm, "cash_end"] == pytest.approx(data["cash_end"])
        for tool, count in data["tool_calls_by_name"].items():
            assert frame.loc[firm, f"tool_calls_by_name.{tool}"] == count
    sent = summary["firms"]["roaster_A"]["messages_sent_by_recipient"]
    assert sent == {"farmer_A": 4, "retailer_B": 2}
    assert frame.loc["roaster_A", "messages_sent_by_recipient.farmer_A"] == 4


def test_allo_frames(root: Path, tmp_path: Path) -> None:
    run = load_run(root / "allo" / "eager")
    assert run.benchmark == "allo" and run.seed is None
    assert list(run.episodes["seed"]) == [2000, 2001, 2002]
    assert "turns" not in run.episodes.columns
    assert list(run.episodes["n_commits"]) == [len(c) for c in run.episodes["commits"]]
    assert len(run.turns) == 3 * 60
    assert set(run.turns["seed"]) == {2000, 2001, 2002}
    assert {"class_label", "t", "kind", "first_sight"} <= set(run.turns.columns)
    assert run.events.empty and run.daily.empty
    [row] = run.summary.to_dict("records")
    summary = summary_of(run.path)
    assert row["score"] == summary["score"] and row["provisional"] is False
    assert (row["score_ci_lo"], row["score_ci_hi"]) == tuple(summary["score_ci"])

    live = load_run(simulate_in_progress(run.path, tmp_path / "cell", "episodes.jsonl"))
    assert live.status == "interrupted" and len(live.episodes) == 3
    [row] = live.summary.to_dict("records")
    assert row["provisional"] is True
    assert row["score"] == pytest.approx(summary["score"])
    assert row["first_sight_rate"] == pytest.approx(summary["first_sight_rate"])


def test_labels_leave_out_the_seed_and_name_differences() -> None:
    plain = RunConfig(seed=3).model_dump(mode="json", by_alias=True)
    assert derive_label("coffee", plain) == "roaster_A=heuristic"
    assert derive_label("coffee", {**plain, "seed": 9}) == "roaster_A=heuristic"
    model = RunConfig(
        agents={"default": "bargaining", "roaster_A": "openai/gpt-5.5"},
        prompts={"roaster_A": "revenue_pressure"},
    ).model_dump(mode="json", by_alias=True)
    assert derive_label("coffee", model) == (
        "roaster_A=openai/gpt-5.5 prompts.roaster_A=revenue_pressure"
    )
    other = RunConfig(
        days=30,
        agents={"default": "passive", "roaster_A": "heuristic", "farmer_B": "scripted"},
        economy={"spoilage_rate": 0.01},
    ).model_dump(mode="json", by_alias=True)
    assert derive_label("coffee", other) == (
        "roaster_A=heuristic default=passive farmer_B=scripted days=30 economy.spoilage_rate=0.01"
    )
    cell = {"framing": "r0", "skin": "quiver", "policy": "eager", "budget": 3, "cost": 10.0}
    assert derive_label("allo", cell) == "eager r0:quiver B=3 K=10"


def test_runs_with_one_label_but_different_configs_are_told_apart(
    root: Path, tmp_path: Path
) -> None:
    for seed in (1, 2):
        shutil.copytree(root / "coffee" / f"scripted-{seed}", tmp_path / f"a{seed}")
    changed = shutil.copytree(root / "coffee" / "scripted-1", tmp_path / "b1")
    config = json.loads((changed / "config.json").read_text())
    config["models"] = {"openai/x": {"temperature": 0.5}}  # not part of the label
    (changed / "config.json").write_text(json.dumps(config))
    labels = {r.path.name: r.label for r in load_runs([tmp_path])}
    assert labels["a1"] == labels["a2"]
    assert labels["a1"] != labels["b1"]
    assert labels["b1"].startswith("roaster_A=scripted days=8 #")


def test_sweep_frames_concatenate_with_run_label_and_seed(root: Path) -> None:
    runs = load_sweep(root)
    assert isinstance(runs, RunSet) and len(runs) == 4
    index = runs.index.set_index("run")
    assert index.loc[str(root / "coffee" / "scripted-2"), "seed"] == 2
    summary = runs.summary
    coffee = summary[summary["benchmark"] == "coffee"]
    assert len(coffee) == 3 * 6
    assert set(summary["benchmark"]) == {"coffee", "allo"}
    scripted = coffee[coffee["label"] == "roaster_A=scripted days=8"]
    assert sorted(set(scripted["seed"])) == [1, 2]
    events = runs.events
    assert len(events) == sum(len(r.events) for r in runs)
    assert list(events.columns[:3]) == ["run", "label", "seed"]
    turns = concat(runs, "turns")
    assert len(turns) == 180 and set(turns["label"]) == {runs.runs[0].label}
    with pytest.raises(ValueError, match="unknown kind"):
        concat(runs, "nope")
    with pytest.raises(FileNotFoundError):
        load_sweep(root / "missing")


def test_lazy_package_attributes_keep_the_cli_free_of_pandas(root: Path) -> None:
    run = econbench.load_run(root / "coffee" / "scripted-1")
    assert isinstance(run.daily, pd.DataFrame)
    assert econbench.load_runs is load_runs and econbench.load_sweep is load_sweep
    with pytest.raises(AttributeError):
        _ = econbench.no_such_thing
    code = (
        "import sys, econbench.cli\n"
        "heavy = {'econbench.runs.frames', 'matplotlib', 'pandas'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
