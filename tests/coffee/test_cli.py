"""The ``econbench coffee`` commands and config files, as a user meets them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.coffee.config import ConfigError, load_config

runner = CliRunner()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def test_run_writes_the_run_dir_and_prints_the_table(tmp_path) -> None:
    out = tmp_path / "r"
    result = runner.invoke(
        app, ["coffee", "run", "--days", "4", "--seed", "3", "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert "roaster_A" in result.output and "net income" in result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3 and summary["days"] == 4


def test_agent_flags_override_the_config(tmp_path) -> None:
    config = write(
        tmp_path,
        '[run]\nseed = 2\ndays = 3\n[agents]\ndefault = "heuristic"\nroaster_A = "scripted"\n',
    )
    out = tmp_path / "r"
    result = runner.invoke(
        app,
        [
            "coffee",
            "run",
            "--config",
            str(config),
            "--agent",
            "roaster_A=passive",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 2
    assert summary["firms"]["roaster_A"]["policy"] == "passive"
    assert summary["firms"]["roaster_A"]["tool_calls_by_name"] == {"wait_for_next_day": 3}
    assert summary["firms"]["roaster_B"]["policy"] == "heuristic"


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ('[run]\ndays = "ninety"\n', "'days'"),
        ("[run]\nsed = 1\n", "sed"),
        ("[economy]\nspoilage = 0.1\n", "economy.spoilage"),
        ("[economy]\nspoilage_rate = -1\n", "economy.spoilage_rate"),
        ('[economy.roaster]\ncash = "lots"\n', "economy.roaster.cash"),
        ('[agents]\nroaster_C = "passive"\n', "roaster_C"),
        ("[model]\nname = 1\n", "unknown table"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_bad_configs_name_the_key(tmp_path, toml: str, fragment: str) -> None:
    path = write(tmp_path, toml)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert fragment in str(info.value)
    result = runner.invoke(
        app, ["coffee", "run", "--config", str(path), "--out", str(tmp_path / "x"), "--quiet"]
    )
    assert result.exit_code == 2
    assert fragment in result.output
    assert not (tmp_path / "x").exists(), "nothing is written for a bad config"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--agent", "roaster_A=genius"], "unknown policy 'genius'"),
        (["--agent", "nobody=passive"], "unknown firm 'nobody'"),
        (["--agent", "roaster_A"], "FIRM=POLICY"),
        (["--days", "0"], "'days'"),
    ],
)
def test_bad_flags_are_clear_errors(tmp_path, args, fragment) -> None:
    result = runner.invoke(app, ["coffee", "run", *args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert fragment in result.output


def test_economy_overrides_load(tmp_path) -> None:
    path = write(
        tmp_path,
        "[economy]\nspoilage_rate = 0.0\nfestival_factor = 2.0\n"
        '[economy.roaster]\nstart_item = "roasted_coffee_kg"\nstart_qty = 10\n'
        "start_unit_cost = 5.88\ninventory_cap = 100\nopex_per_day = 10\n",
    )
    config = load_config(path)
    assert config.economy.spoilage_rate == 0.0 and config.economy.festival_factor == 2.0
    assert config.economy.roaster.opex_per_day == 10


def test_headroom_prints_the_paper_figure() -> None:
    result = runner.invoke(app, ["coffee", "headroom"])
    assert result.exit_code == 0, result.output
    assert "23,782.50" in result.output and "50,265.00" in result.output
