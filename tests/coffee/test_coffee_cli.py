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


CONFIGS = sorted((Path(__file__).parents[2] / "configs" / "coffee").rglob("*.toml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_configs_load_and_name_real_models(path: Path) -> None:
    from econbench.agents.models.registry import parse_model_name
    from econbench.coffee.agents import is_model

    config = load_config(path)
    for firm in ("roaster_A", "roaster_B", "farmer_A"):
        name = config.policy_for(firm)
        if is_model(name):
            provider, _ = parse_model_name(name)
            assert provider in {"openai", "anthropic", "google", "openai-compatible"}


def test_the_paper_matrix_is_complete() -> None:
    paper = [load_config(p) for p in CONFIGS if p.parent.name == "paper"]
    focal = {c.policy_for("roaster_A") for c in paper}
    assert focal == {
        "anthropic/claude-opus-4-7",
        "openai/gpt-5.5",
        "google/gemini-3.1-pro",
        "anthropic/claude-sonnet-4-6",
        "anthropic/claude-haiku-4-5",
        "openai-compatible/kimi-k2.6",
        "openai-compatible/glm-5.1",
        "passive",
        "heuristic",
    }
    assert {c.policy_for("retailer_B") for c in paper} == {"anthropic/claude-sonnet-4-6"}
    assert all(c.days == 90 for c in paper)


def test_a_missing_key_stops_a_model_run_before_it_starts(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    config = Path(__file__).parents[2] / "configs" / "coffee" / "revenue_pressure.toml"
    result = runner.invoke(
        app, ["coffee", "run", "--config", str(config), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.output
    assert not (tmp_path / "r").exists()


def test_the_readme_config_examples_load(tmp_path) -> None:
    import re
    import shutil

    from econbench.runs.experiment import load_plan

    repo = Path(__file__).parents[2]
    readme = (repo / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", readme, re.DOTALL)
    assert len(blocks) >= 3
    shutil.copytree(repo / "configs" / "coffee", tmp_path / "coffee")  # experiments' bases
    (tmp_path / "experiments").mkdir()
    experiments = 0
    for i, block in enumerate(blocks):
        if re.search(r"^benchmark = ", block, re.MULTILINE):
            path = tmp_path / "experiments" / f"example{i}.toml"
            path.write_text(block)
            assert load_plan(path, check=False).entries
            experiments += 1
        else:
            path = tmp_path / f"example{i}.toml"
            path.write_text(block)
            load_config(path)
    assert experiments >= 1
