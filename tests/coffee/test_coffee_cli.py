"""The ``econbench coffee`` commands and config files, as a user meets them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.coffee.config import ConfigError
from econbench.runs.coffee.config import load_config

runner = CliRunner()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


def test_run_writes_the_run_dir_and_prints_the_table(tmp_path) -> None:
    out = tmp_path / "r"
    result = runner.invoke(app, ["coffee", "run", "--days", "4", "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "roaster_A" in result.output and "net income" in result.output
    assert "4/4 days" in result.output and f"Run written to {out}" in result.output
    assert "Model usage" not in result.output  # only scripted firms played
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 3 and summary["days"] == 4


def test_quiet_prints_only_the_run_directory(tmp_path) -> None:
    out = tmp_path / "r"
    result = runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{out}\n"
    assert (out / "summary.json").is_file()


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
        (
            ["--agent", "roaster_A=heurstic"],
            "unknown policy 'heurstic' (did you mean 'heuristic'?)",
        ),
        (["--agent", "default=negotating"], "(did you mean 'negotiating'?)"),
        (["--agent", "roaster_A=markp:1.2"], "(did you mean 'markup'?)"),
        (["--agent", "roaster_A=opnai/gpt-5.5"], "(did you mean 'openai'?)"),
        (["--agent", "nobody=passive"], "unknown firm 'nobody'"),
        (["--agent", "rooster_A=passive"], "unknown firm 'rooster_A' (did you mean 'roaster_A'?)"),
        (["--agent", "roaster_A"], "FIRM=POLICY"),
        (["--days", "0"], "'days'"),
    ],
)
def test_bad_flags_are_clear_errors(tmp_path, args, fragment) -> None:
    result = runner.invoke(app, ["coffee", "run", *args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert fragment in result.output


def test_a_firm_typo_in_the_config_file_gets_a_suggestion(tmp_path) -> None:
    path = write(tmp_path, '[agents]\nretailer_b = "passive"\n')
    with pytest.raises(ConfigError, match=r"did you mean 'retailer_B'\?"):
        load_config(path)


def test_brackets_survive_in_help_and_errors(tmp_path) -> None:
    # Rich markup would read [run] or [redacted] as a style tag and print nothing.
    result = runner.invoke(app, ["coffee", "run", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "TOML file: [run], [agents], [economy]." in result.output
    path = write(tmp_path, "[model]\nname = 1\n")
    result = runner.invoke(app, ["coffee", "run", "--config", str(path), "--quiet"])
    assert result.exit_code == 2
    assert "expected [run], [agents]" in " ".join(result.output.split())


def test_a_stop_keeps_brackets_and_leaves_no_bar(tmp_path, monkeypatch) -> None:
    from econbench.runs.coffee import cli as coffee_cli
    from econbench.runs.coffee.run import RunStopped

    def stop(config, out, *, on_day, **kwargs):
        on_day(1)  # the bar has started
        raise RunStopped("the model failed: key [redacted] was refused")

    monkeypatch.setattr(coffee_cli, "run_to_dir", stop)
    result = runner.invoke(app, ["coffee", "run", "--days", "3", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "key [redacted] was refused" in result.output
    assert "days" not in result.output  # the bar was cleared, the error is what is left


def test_an_unusable_run_dir_is_an_error_without_a_bar(tmp_path) -> None:
    out = tmp_path / "r"
    assert runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith("error: run directory") and "days" not in result.output


def test_ctrl_c_says_how_to_resume_and_resume_finishes_the_run(tmp_path, monkeypatch) -> None:
    from econbench.runs.coffee import cli as coffee_cli

    def interrupt(self, day: int) -> None:
        if day == 2:
            raise KeyboardInterrupt

    out, whole = tmp_path / "r", tmp_path / "whole"
    with monkeypatch.context() as patch:
        patch.setattr(coffee_cli.DayBar, "day", interrupt)
        result = runner.invoke(app, ["coffee", "run", "--days", "4", "--out", str(out)])
    assert result.exit_code == 130
    assert f"`econbench resume {out}` continues the run" in " ".join(result.output.split())
    assert runner.invoke(app, ["resume", str(out), "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["coffee", "run", "--days", "4", "--out", str(whole)]).exit_code == 0
    for name in ("events.jsonl", "daily.jsonl"):
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name


def test_seeds_write_one_run_per_seed_and_a_table_across_them(tmp_path) -> None:
    out = tmp_path / "many"
    result = runner.invoke(
        app, ["coffee", "run", "--seeds", "0-1,5", "--days", "3", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["seed_0", "seed_1", "seed_5"]
    assert "3 seeds: net income per firm" in result.output
    for column in ("seed 0", "seed 1", "seed 5", "mean", "sd", "bankrupt"):
        assert column in result.output
    single = tmp_path / "single"
    result = runner.invoke(
        app, ["coffee", "run", "--seed", "5", "--days", "3", "--out", str(single)]
    )
    assert result.exit_code == 0, result.output
    for name in ("events.jsonl", "daily.jsonl", "summary.json"):  # the same run as --seed 5
        assert (out / "seed_5" / name).read_bytes() == (single / name).read_bytes(), name


def test_seeds_quiet_prints_one_directory_per_seed(tmp_path) -> None:
    out = tmp_path / "many"
    args = ["coffee", "run", "--seeds", "2-3", "--days", "2", "--out", str(out), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [str(out / "seed_2"), str(out / "seed_3")]


def test_seeds_default_to_one_parent_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["coffee", "run", "--seeds", "0,1", "--days", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    dirs = [Path(line) for line in result.stdout.splitlines()]
    assert [d.name for d in dirs] == ["seed_0", "seed_1"]
    assert dirs[0].parent == dirs[1].parent and dirs[0].parent.name.endswith("-seeds0_1")
    assert dirs[0].parent.parent == Path("runs") / "coffee"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--seeds", "0-2", "--seed", "1"], "either --seed or --seeds"),
        (["--seeds", "2-0"], "bad --seeds '2-0'"),
        (["--seeds", "x"], "bad --seeds 'x'"),
    ],
)
def test_bad_seeds_are_refused(tmp_path, args, fragment) -> None:
    result = runner.invoke(app, ["coffee", "run", *args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and fragment in result.output
    assert not (tmp_path / "x").exists()


def test_seeds_refuse_a_used_seed_directory_before_any_seed_runs(tmp_path) -> None:
    out = tmp_path / "many"
    used = out / "seed_1"
    assert runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(used)]).exit_code == 0
    result = runner.invoke(
        app, ["coffee", "run", "--seeds", "0-1", "--days", "2", "--out", str(out)]
    )
    assert result.exit_code == 2 and f"run directory {used} already holds files" in result.output
    assert not (out / "seed_0").exists()
    again = ["coffee", "run", "--seeds", "0-1", "--days", "2", "--out", str(out), "--overwrite"]
    assert runner.invoke(app, again).exit_code == 0


def test_a_stopped_seed_names_the_seeds_that_did_not_start(tmp_path, monkeypatch) -> None:
    from econbench.runs.coffee import cli as coffee_cli
    from econbench.runs.coffee.run import RunStopped

    real = coffee_cli.run_to_dir

    def stop_seed_1(config, out, **kwargs):
        if config.seed == 1:
            raise RunStopped("provider outage")
        return real(config, out, **kwargs)

    monkeypatch.setattr(coffee_cli, "run_to_dir", stop_seed_1)
    out = tmp_path / "many"
    result = runner.invoke(
        app, ["coffee", "run", "--seeds", "0-3", "--days", "2", "--out", str(out)]
    )
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "provider outage" in text
    assert f"Seeds 2, 3 did not start; run them with --seeds 2,3 --out {out}" in text


def test_the_tables_show_model_usage_for_model_played_firms() -> None:
    from rich.console import Console

    from econbench.runs.coffee.cli import seeds_table, summary_table, usage_table

    def firm(policy: str, income: float, **usage) -> dict:
        return {
            "policy": policy,
            "net_income": income,
            "revenue": 0.0,
            "tool_calls": 0,
            "idle_days": 0,
            "bankrupt": False,
            "bankrupt_day": None,
            **usage,
        }

    def summary(seed: int, cost) -> dict:
        priced = {"cost_usd": cost, "cost_usd_priced_part": 0.25}
        return {
            "seed": seed,
            "days_run": 2,
            "deals": 0,
            "consumer_sales_kg": 0,
            "firms": {
                "roaster_A": firm(
                    "openai/gpt-x",
                    10.0 * (seed + 1),
                    llm_calls=3,
                    input_tokens=1200,
                    cached_input_tokens=200,
                    output_tokens=50,
                    **priced,
                ),
                "roaster_B": firm("scripted", -1.0, llm_calls=0),
            },
        }

    def text(table) -> str:
        console = Console(width=200, record=True)
        console.print(table)
        return console.export_text()

    one = text(usage_table([summary(0, 0.25)]))
    assert "roaster_A" in one and "openai/gpt-x" in one and "roaster_B" not in one
    assert "3" in one and "1,200" in one and "200" in one and "50" in one and "0.2500" in one
    both = text(usage_table([summary(0, 0.25), summary(1, None)]))  # seed 1: unpriced calls
    assert "2 seeds together" in both and "2,400" in both and "0.5000 + unpriced" in both
    assert usage_table([{**summary(0, 0.0), "firms": {"x": firm("passive", 0.0)}}]) is None
    assert "openai/gpt-x" in text(summary_table(summary(0, 0.25)))
    across = text(seeds_table([summary(0, 0.25), summary(1, 0.25)]))
    assert "10.00" in across and "20.00" in across and "15.00" in across  # seeds, mean


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
    from econbench.coffee.config import is_model

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
        "google/gemini-3.1-pro-preview",  # the reference's model names (its experiments/)
        "anthropic/claude-sonnet-4-6",
        "anthropic/claude-haiku-4-5",
        "openai-compatible/moonshotai/kimi-k2.6",  # through OpenRouter, as the reference
        "openai-compatible/z-ai/glm-5.1",
        "passive",
        "heuristic",
    }
    assert {c.policy_for("retailer_B") for c in paper} == {"anthropic/claude-sonnet-4-6"}
    assert {c.condition for c in paper} == {"paper"}
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


def test_the_documented_config_examples_load(tmp_path) -> None:
    import re
    import shutil

    from econbench.runs.experiment import load_plan

    repo = Path(__file__).parents[2]
    pages = ("configuration.md", "models.md")  # run configs, experiment files, model settings
    text = "\n".join((repo / "docs" / page).read_text() for page in pages)
    blocks = re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
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
