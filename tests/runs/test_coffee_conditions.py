"""CoffeeBench conditions: ``hardened`` (econbench's own, the default) and ``paper`` (the
reference implementation's protocol): the config's field and its refusals, ``--condition``,
what a run records, the hand-over of ``paper`` runs to ``econbench.runs.coffee.paper_run``,
directory names, and a report that never pools two conditions and shows the paper's Table 2
beside ``paper`` runs only.

``econbench.runs.coffee.paper_run`` is replaced here by a fake (``sys.modules``) that plays the
run with econbench's own economy and records it as ``paper``: these tests are about the
plumbing, not about what the paper condition plays.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench import api
from econbench.cli import app
from econbench.coffee.config import ConfigError
from econbench.runs.benchmark import ResumeError
from econbench.runs.coffee.config import (
    CONDITIONS,
    DEFAULT_CONDITION,
    RunConfig,
    condition_fields,
    condition_of,
    config_from_tables,
    load_config,
)
from econbench.runs.coffee.report import condition_groups, paper_table2, score_paired, table2
from econbench.runs.coffee.run import resume_to_dir, run_to_dir
from econbench.runs.experiment import load_plan
from econbench.runs.frames import load_runs
from econbench.runs.report import build_report, write_report

runner = CliRunner()
DAYS = 3
OLD_KEYS = ["seed", "days", "agents", "prompts", "models", "economy"]
PAPER_MATRIX = Path(__file__).parents[2] / "configs" / "experiments" / "coffee_paper.toml"
PAPER_CONFIGS = Path(__file__).parents[2] / "configs" / "coffee" / "paper"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refusal(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        config_from_tables(raw)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- the fake paper_run -------------------------------------------------------------------------


class FakePaperRun(types.ModuleType):
    """Stands in for ``econbench.runs.coffee.paper_run``: records each call, and plays the run
    with econbench's economy, then writes config.json and summary.json as a paper run does."""

    def __init__(self) -> None:
        super().__init__("econbench.runs.coffee.paper_run")
        self.calls: list[tuple[str, Any, dict[str, Any]]] = []

    def run_paper_to_dir(self, config: RunConfig, out: Path, **kw: Any) -> dict[str, Any]:
        self.calls.append(("run", config, kw))
        played = config.model_copy(update={"condition": DEFAULT_CONDITION})
        summary = run_to_dir(played, out, overwrite=kw["overwrite"], label=kw["label"])
        summary |= condition_fields(config)
        (out / "config.json").write_text(json.dumps(config.model_dump(mode="json", by_alias=True)))
        (out / "summary.json").write_text(json.dumps(summary))
        return summary

    def resume_paper_to_dir(self, out: Path, **kw: Any) -> dict[str, Any]:
        self.calls.append(("resume", out, kw))
        return {"status": "completed", "condition": "paper"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakePaperRun:
    module = FakePaperRun()
    monkeypatch.setitem(sys.modules, "econbench.runs.coffee.paper_run", module)
    import econbench.runs.coffee as package

    monkeypatch.setattr(package, "paper_run", module, raising=False)
    return module


# -- the config ---------------------------------------------------------------------------------


def test_the_default_is_hardened_and_its_config_json_is_unchanged() -> None:
    config = RunConfig()
    assert config.condition == DEFAULT_CONDITION == "hardened"
    assert set(CONDITIONS) == {"hardened", "paper"}
    dumped = config.model_dump(mode="json", by_alias=True)
    assert list(dumped) == OLD_KEYS  # no "condition": a default run's config.json is as before
    assert condition_fields(config) == {}
    assert RunConfig.model_validate(dumped).condition == "hardened"  # old runs read as hardened
    assert condition_of({"seed": 1}) == "hardened"
    assert condition_of({"condition": "paper"}) == "paper"


def test_a_paper_config_records_its_condition_and_passive_background() -> None:
    config = config_from_tables({"run": {"condition": "paper", "days": 5}})
    assert config.condition == "paper"
    assert config.agents == {"default": "passive", "roaster_A": "heuristic"}
    dumped = config.model_dump(mode="json", by_alias=True)
    assert list(dumped)[:4] == ["seed", "days", "condition", "agents"]
    assert dumped["condition"] == "paper" and dumped["agents"]["default"] == "passive"
    assert condition_fields(config) == {"condition": "paper"}
    again = RunConfig.model_validate(dumped)  # a resume reads it back unchanged
    assert again == config
    explicit = config_from_tables(
        {"run": {"condition": "paper"}, "agents": {"default": "bargaining", "roaster_B": "passive"}}
    )
    assert explicit.agents["default"] == "passive" and explicit.agents["roaster_B"] == "passive"


def test_an_unknown_condition_is_one_line_with_a_suggestion(tmp_path: Path) -> None:
    message = refusal({"run": {"condition": "papr"}})
    assert "unknown condition 'papr'" in message and "did you mean 'paper'?" in message
    path = write(tmp_path / "c.toml", '[run]\ncondition = "hardend"\n')
    with pytest.raises(ConfigError, match="did you mean 'hardened'"):
        load_config(path)
    message = refusal({"run": {"conditon": "paper"}})
    assert "unknown key(s) in [run]" in message and "condition" in message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"economy": {"spoilage_rate": 0.01}}, "[economy] overrides are refused"),
        ({"prompts": {"roaster_A": "revenue_pressure"}}, "[prompts] variants are refused"),
        ({"prompts": {"roaster_A": "standard"}}, "[prompts] variants are refused"),
        ({"agents": {"roaster_B": "bargaining"}}, "'agents.roaster_B': 'bargaining' is refused"),
        ({"agents": {"roaster_A": "markup:1.5"}}, "'agents.roaster_A': 'markup:1.5' is refused"),
        ({"agents": {"default": "negotiating"}}, "'agents.default': 'negotiating' is refused"),
        ({"agents": {"retailer_A": "heuristic"}}, "plays roaster_A or roaster_B only"),
        ({"agents": {"default": "heuristic"}}, "plays roaster_A or roaster_B only"),
        ({"agents": {"roaster_A": "hf/some-model"}}, "no model class for provider 'hf'"),
        (
            {
                "agents": {"roaster_A": "openai/gpt-5.5"},
                "models": {"openai/gpt-5.5": {"temperature": 0.7, "max_tokens": 100}},
            },
            "temperature, max_tokens are refused",
        ),
        (
            {
                "agents": {"roaster_A": "anthropic/claude-haiku-4-5"},
                "models": {"anthropic/claude-haiku-4-5": {"compaction_threshold": 0.5}},
            },
            "compaction_threshold is refused",
        ),
    ],
)
def test_paper_refuses_what_the_reference_fixes(raw: dict[str, Any], expected: str) -> None:
    message = refusal({"run": {"condition": "paper"}, **raw})
    assert expected in message and "condition 'paper'" in message
    config_from_tables(raw)  # the same tables are fine under hardened


def test_paper_allows_the_reference_players() -> None:
    config = config_from_tables(
        {
            "run": {"condition": "paper"},
            "agents": {
                "default": "anthropic/claude-sonnet-4-6",
                "roaster_A": "heuristic",
                "roaster_B": "passive",
                "farmer_A": "passive",
            },
        }
    )
    assert config.policy_for("retailer_A") == "anthropic/claude-sonnet-4-6"
    assert config.policy_for("roaster_A") == "heuristic"


# -- the hand-over --------------------------------------------------------------------------------


def test_a_default_run_plays_here_and_records_no_condition(tmp_path: Path, fake) -> None:
    summary = run_to_dir(RunConfig(days=DAYS), tmp_path / "run")
    assert fake.calls == []
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert list(saved) == OLD_KEYS
    assert "condition" not in summary
    assert "condition" not in json.loads((tmp_path / "run" / "summary.json").read_text())


def test_run_to_dir_hands_a_paper_config_over(tmp_path: Path, fake) -> None:
    config = RunConfig(days=DAYS, condition="paper")
    wrap = object()
    summary = run_to_dir(
        config, tmp_path / "run", overwrite=True, label="x", provider_wrap=wrap, cache=None
    )
    (kind, given, kw) = fake.calls[0]
    assert kind == "run" and given is config
    assert kw == {
        "overwrite": True,
        "on_day": None,
        "policies": None,
        "provider_wrap": wrap,
        "label": "x",
        "cache": None,
    }
    assert summary["condition"] == "paper"
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["condition"] == "paper" and saved["agents"]["default"] == "passive"


def test_resume_follows_the_runs_own_condition(tmp_path: Path, fake) -> None:
    out = tmp_path / "run"
    run_to_dir(RunConfig(days=DAYS, condition="paper"), out)
    summary = resume_to_dir(out, force=True)
    kind, where, kw = fake.calls[-1]
    assert kind == "resume" and where == out and kw["force"] is True and kw["config"] is None
    assert summary["condition"] == "paper"
    with pytest.raises(ResumeError, match=r"condition 'paper'.*cannot be resumed as condition"):
        resume_to_dir(out, config=RunConfig(days=DAYS), force=True)
    hardened = tmp_path / "hardened"
    run_to_dir(RunConfig(days=DAYS), hardened)
    with pytest.raises(ResumeError, match="condition 'hardened'"):
        resume_to_dir(hardened, config=RunConfig(days=DAYS, condition="paper"), force=True)
    with pytest.raises(ResumeError, match="completed run"):  # a hardened run resumes here
        resume_to_dir(hardened)
    assert [c[0] for c in fake.calls] == ["run", "resume"]


def test_the_cli_flag(tmp_path: Path, fake) -> None:
    bad = runner.invoke(app, ["coffee", "run", "--condition", "papr", "--days", "2"])
    assert bad.exit_code == 2 and "did you mean 'paper'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    refused = runner.invoke(
        app, ["coffee", "run", "--condition", "paper", "--agent", "roaster_A=undercut"]
    )
    assert refused.exit_code == 2 and "refused under condition 'paper'" in refused.stderr
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "coffee",
            "run",
            "--condition",
            "paper",
            "--days",
            str(DAYS),
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert fake.calls[0][1].condition == "paper"
    assert json.loads((out / "config.json").read_text())["condition"] == "paper"
    config = write(tmp_path / "p.toml", f'[run]\ncondition = "paper"\ndays = {DAYS}\n')
    result = runner.invoke(
        app, ["coffee", "run", "--config", str(config), "--out", str(tmp_path / "b"), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert len(fake.calls) == 2


def test_the_cli_names_a_default_directory_by_its_condition(
    tmp_path: Path, fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["coffee", "run", "--days", str(DAYS), "--quiet", "--seed", "4"]
    assert runner.invoke(app, [*args, "--condition", "paper"]).exit_code == 0
    assert runner.invoke(app, args).exit_code == 0
    names = {p.name.split("-", 2)[2] for p in (tmp_path / "runs" / "coffee").iterdir()}
    assert names == {"seed4", "seed4-paper"}  # YYYYmmdd-HHMMSS-seed4[-paper]


def test_api_run_coffee_takes_a_condition(tmp_path: Path, fake) -> None:
    result = api.run_coffee(days=DAYS, condition="paper", out=tmp_path / "a")
    assert fake.calls[0][1].condition == "paper"
    assert fake.calls[0][1].agents["default"] == "passive"
    assert result.summary["condition"] == "paper"
    api.run_coffee(days=DAYS, out=tmp_path / "b")
    assert len(fake.calls) == 1  # the default plays here


# -- experiments and sweeps ---------------------------------------------------------------------


def test_an_experiment_names_its_runs_by_condition(tmp_path: Path) -> None:
    text = (
        'name = "c"\nbenchmark = "coffee"\nseeds = [1]\ndays = 3\n{condition}'
        '[matrix]\nroaster_A = ["heuristic", "passive"]\n'
    )
    plain = load_plan(write(tmp_path / "a.toml", text.format(condition="")))
    assert [e.id for e in plain.entries] == [
        "roaster_A-heuristic__seed-1",
        "roaster_A-passive__seed-1",
    ]
    assert all("condition" not in e.config and "condition" not in e.params for e in plain.entries)
    paper = load_plan(write(tmp_path / "b.toml", text.format(condition='condition = "paper"\n')))
    assert [e.id for e in paper.entries] == [
        "roaster_A-heuristic__paper__seed-1",
        "roaster_A-passive__paper__seed-1",
    ]
    assert [e.label for e in paper.entries] == [
        "roaster_A-heuristic__paper",
        "roaster_A-passive__paper",
    ]
    for entry in paper.entries:
        assert entry.config["condition"] == "paper" and entry.params["condition"] == "paper"
        assert entry.config["agents"]["default"] == "passive"
    bad = write(tmp_path / "c.toml", text.format(condition='condition = "papr"\n'))
    with pytest.raises(Exception, match="did you mean 'paper'"):
        load_plan(bad)
    refused = text.format(condition='condition = "paper"\n').replace('"passive"]', '"undercut"]')
    with pytest.raises(Exception, match="refused under condition 'paper'"):
        load_plan(write(tmp_path / "d.toml", refused))


def test_a_base_files_condition_names_the_runs(tmp_path: Path) -> None:
    write(tmp_path / "base.toml", '[run]\ncondition = "paper"\n')
    exp = write(
        tmp_path / "e.toml",
        'name = "c"\nbenchmark = "coffee"\nbase = "base.toml"\nseeds = [0]\n'
        '[matrix]\nroaster_A = ["heuristic"]\n',
    )
    (entry,) = load_plan(exp).entries
    assert entry.id == "roaster_A-heuristic__paper__seed-0"
    assert entry.config["condition"] == "paper"


def test_the_shipped_paper_matrix_and_configs_play_the_paper_condition() -> None:
    plan = load_plan(PAPER_MATRIX, check=False)
    assert len(plan.entries) == 27
    assert all(e.config["condition"] == "paper" and "__paper__" in e.id for e in plan.entries)
    players = {e.config["agents"]["roaster_A"] for e in plan.entries}
    assert "openai-compatible/z-ai/glm-5.1" in players  # the reference's OpenRouter slugs
    assert "openai-compatible/moonshotai/kimi-k2.6" in players
    assert "google/gemini-3.1-pro-preview" in players
    for path in sorted(PAPER_CONFIGS.glob("*.toml")):
        config = load_config(path)
        assert config.condition == "paper", path
        assert config.policy_for("farmer_A") == "anthropic/claude-sonnet-4-6", path


# -- the report -----------------------------------------------------------------------------------


@pytest.fixture
def two_conditions(tmp_path: Path, fake) -> Path:
    """The same configuration played under both conditions (seeds 1 and 2), with the same
    label in meta.json, so only the condition tells them apart."""
    root = tmp_path / "runs"
    for condition in ("hardened", "paper"):
        for seed in (1, 2):
            config = RunConfig(
                seed=seed,
                days=DAYS,
                condition=condition,
                agents={"default": "passive", "roaster_A": "heuristic"},
            )
            run_to_dir(config, root / f"{condition}-{seed}", label="same")
    return root


def test_a_report_never_pools_conditions(two_conditions: Path) -> None:
    runs = load_runs(two_conditions)
    table = table2(runs)
    assert table is not None
    rows = table.data.set_index("configuration")
    assert sorted(rows.index) == ["same", "same [paper]"]
    assert rows.loc["same", "condition"] == "hardened"
    assert rows.loc["same [paper]", "condition"] == "paper"
    assert list(rows["n"]) == [2, 2]
    assert list(table.display.columns[:2]) == ["configuration", "condition"]
    assert score_paired(runs) is None  # two configurations, but of different conditions
    groups = condition_groups(runs)  # what the figures draw, too
    assert {name: len(group) for name, group in groups.items()} == {"same": 2, "same [paper]": 2}


def test_derived_labels_name_the_condition(tmp_path: Path, fake) -> None:
    for condition in ("hardened", "paper"):
        config = RunConfig(
            days=DAYS, condition=condition, agents={"default": "passive", "roaster_A": "heuristic"}
        )
        run_to_dir(config, tmp_path / condition)
    labels = sorted(r.label for r in load_runs(tmp_path))
    assert labels == [
        "roaster_A=heuristic condition=paper default=passive days=3",
        "roaster_A=heuristic default=passive days=3",
    ]
    table = table2(load_runs(tmp_path))
    assert table is not None and len(table.data) == 2


def test_the_papers_table2_stands_beside_every_table2(two_conditions: Path) -> None:
    runs = load_runs(two_conditions)
    hardened = [r for r in runs if condition_of(r.config) == "hardened"]
    assert "condition" not in table2(hardened).data.columns  # type: ignore[union-attr]
    for selection in (hardened, runs):  # beside hardened runs too (issue 28), marked
        names = [t.name for t in build_report(selection).tables]
        assert names.index("paper_table2") == names.index("table2") + 1
    assert paper_table2([]) is None
    table = paper_table2(runs)
    assert table is not None
    assert table.title.startswith("The paper's Table 2")
    assert "Claude Sonnet 4.6" in table.title
    assert list(table.display.columns) == list(table2(runs).display.columns)  # type: ignore[union-attr]
    gpt = table.data.set_index("model").loc["GPT-5.5"]
    assert gpt["net_income_mean"] == 3109.0 and gpt["background"] == "anthropic/claude-sonnet-4-6"
    assert set(table.data["origin"]) == {"paper"}
    assert table.display.iloc[0]["revenue ($)"] == "–"  # a figure not found is never made up


def test_the_written_report_shows_both_conditions_and_the_papers_table(
    two_conditions: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    written = {p.name for p in write_report([two_conditions], out)}
    assert {"table2.md", "paper_table2.md", "paper_table2.csv", "index.html"} <= written
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "The paper&#x27;s Table 2" in page or "The paper's Table 2" in page
    assert "same [paper]" in (out / "table2.md").read_text(encoding="utf-8")


def test_paper_keeps_how_a_model_is_reached_and_a_saved_config_reloads(tmp_path: Path) -> None:
    """base_url, keys, timeouts, retries and concurrency are infrastructure, not protocol; and
    the config.json a paper run writes (every setting written out) validates again."""
    config = config_from_tables(
        {
            "run": {"condition": "paper"},
            "agents": {"roaster_A": "openai/gpt-5.5"},
            "models": {
                "openai/gpt-5.5": {
                    "base_url": "http://127.0.0.1:9/v1",
                    "api_key_env": "MY_KEY",
                    "timeout_s": 60.0,
                    "max_retries": 2,
                    "max_concurrency": 2,
                }
            },
        }
    )
    saved = json.loads(json.dumps(config.model_dump(mode="json", by_alias=True)))
    assert RunConfig.model_validate(saved) == config
