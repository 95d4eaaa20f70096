"""``allo run`` shows a model's calls, tokens and cost, and the summary's build charge K is
``build_cost`` (old cells' ``cost`` still read) (issue 28, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from econbench.allo.game.metrics import read_summary
from econbench.cli import app
from econbench.runs.allo.cli import surface_row
from econbench.runs.frames import load_run

runner = CliRunner()
MODEL = "openai-compatible/fake"


def eager(request: BrainRequest) -> BrainReply:
    usage = {"input_tokens": 1_000, "cached_input_tokens": 0, "output_tokens": 10}
    if not request.tools or request.messages[-1]["role"] == "tool":
        return BrainReply(text="Done.", **usage)
    return BrainReply(tool_calls=[{"name": "claim_solver", "arguments": {}}], **usage)


def play(tmp_path: Path, priced: bool) -> tuple[object, dict]:
    out = tmp_path / "cell"
    with FakeOpenAIServer(eager) as server:
        prices = "input_usd_per_mtok = 1\noutput_usd_per_mtok = 1\n" if priced else ""
        config = tmp_path / "m.toml"
        config.write_text(f'[models."{MODEL}"]\nbase_url = "{server.base_url}"\n{prices}')
        args = ["allo", "run", "--framing", "r1", "--policy", MODEL, "--episodes", "1"]
        result = runner.invoke(
            app, [*args, "--cost", "10", "--config", str(config), "--out", str(out)]
        )
    assert result.exit_code == 0, result.output
    return result, json.loads((out / "summary.json").read_text())


def test_a_model_cell_prints_its_calls_tokens_and_cost(tmp_path) -> None:
    result, summary = play(tmp_path, priced=True)
    assert "Model usage" in result.output
    assert summary["llm_calls"] > 0 and summary["cost_usd"] > 0
    assert f"{summary['llm_calls']:,}" in result.output
    assert f"{summary['input_tokens']:,}" in result.output
    assert summary["build_cost"] == 10.0 and "cost" not in summary


def test_an_unpriced_model_cell_says_unpriced(tmp_path) -> None:
    result, summary = play(tmp_path, priced=False)
    assert summary["cost_usd"] is None
    usage = result.output[result.output.index("Model usage") :]
    assert "unpriced" in usage and "0.0000" not in usage


def test_a_reference_policy_prints_no_usage(tmp_path) -> None:
    args = ["allo", "run", "--framing", "r0", "--policy", "eager", "--episodes", "1"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "cell")])
    assert result.exit_code == 0, result.output
    assert "Model usage" not in result.output and "estimate" not in result.output.lower()


def test_an_old_summary_s_cost_is_read_as_the_build_cost(tmp_path) -> None:
    old = {"framing": "r0", "policy": "eager", "cost": 20.0, "budget": 3, "cost_usd": 0.0}
    assert read_summary(old)["build_cost"] == 20.0 and "cost" not in read_summary(old)
    assert surface_row(old)["build_cost"] == 20.0
    assert surface_row({**old, "build_cost": 5.0})["build_cost"] == 5.0  # the new name wins


def test_frames_read_an_old_cell_s_build_cost(tmp_path) -> None:
    out = tmp_path / "cell"
    args = ["allo", "run", "--framing", "r0", "--policy", "eager", "--episodes", "1"]
    assert runner.invoke(app, [*args, "--cost", "10", "--out", str(out)]).exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    summary["cost"] = summary.pop("build_cost")  # as a cell written before the rename
    (out / "summary.json").write_text(json.dumps(summary))
    row = load_run(out).summary.iloc[0]
    assert row["build_cost"] == 10.0
