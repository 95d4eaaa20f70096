"""``coffee run`` and ``allo run``: ``--dry-run``, ``--cost-limit`` and the estimate printed
before a model plays (issue 28, item 1).

Model runs go through the real OpenAI SDK to the loopback fake server; the fake reports a
fixed, large token count per call, so a run's real spend is known and passes its estimate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from econbench.cli import app

runner = CliRunner()
MODEL = "openai-compatible/fake"
TOKENS_PER_CALL = 2_000_000
"""Input tokens the fake reports per call: at $1 per million, $2 a call."""


def patient(request: BrainRequest) -> BrainReply:
    """A roaster that waits every day: one model call a day, $2 each at the config's price."""
    return BrainReply(
        tool_calls=[{"name": "wait_for_next_day", "arguments": {}}],
        input_tokens=TOKENS_PER_CALL,
        cached_input_tokens=0,
        output_tokens=50,
    )


def coffee_config(path: Path, base_url: str = "http://127.0.0.1:9/v1", price: bool = True) -> Path:
    prices = "input_usd_per_mtok = 1.0\noutput_usd_per_mtok = 1.0\n" if price else ""
    path.write_text(
        f'[run]\ndays = 5\n[agents]\nroaster_A = "{MODEL}"\n'
        f'[models."{MODEL}"]\nbase_url = "{base_url}"\nmax_concurrency = 1\n{prices}'
    )
    return path


def one_line_error(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


# --------------------------------------------------------------------------- coffee run


def test_a_coffee_dry_run_prints_the_estimate_and_writes_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "run"
    args = ["coffee", "run", "--dry-run", "--out", str(out), "--days", "45"]
    args += ["--agent", "roaster_A=anthropic/claude-sonnet-4-6"]
    args += ["--agent", "roaster_B=anthropic/claude-sonnet-4-6"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert not out.exists()
    text = result.output
    for firm in ("roaster_A", "roaster_B"):
        assert firm in text
    assert "500" in text  # 1,000 calls per 90 days, for 45 days: 500 calls a firm
    assert "estimated cost: $" in text and "dry run: nothing was run" in text
    assert "missing before a real run: set ANTHROPIC_API_KEY" in text


def test_a_dry_run_of_scripted_firms_says_no_model_plays(tmp_path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["coffee", "run", "--dry-run", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "no model plays" in result.output and not out.exists()


def test_a_limit_under_the_estimate_refuses_to_start(tmp_path) -> None:
    out = tmp_path / "run"
    config = coffee_config(tmp_path / "c.toml")  # estimate about $5
    result = runner.invoke(
        app, ["coffee", "run", "--config", str(config), "--out", str(out), "--cost-limit", "1"]
    )
    assert result.exit_code == 2, result.output
    assert "over --cost-limit $1.00" in one_line_error(result)
    assert not out.exists()


def test_a_limit_cannot_guard_an_unpriced_model(tmp_path) -> None:
    out = tmp_path / "run"
    config = coffee_config(tmp_path / "c.toml", price=False)
    args = ["coffee", "run", "--config", str(config), "--out", str(out), "--cost-limit", "100"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    line = one_line_error(result)
    assert "has no price" in line and "input_usd_per_mtok" in line
    assert not out.exists()


@pytest.mark.parametrize("limit", ["0", "-3", "nan", "inf"])
def test_a_limit_must_be_a_positive_number(tmp_path, limit: str) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["coffee", "run", "--out", str(out), "--cost-limit", limit])
    assert result.exit_code == 2, result.output
    assert "--cost-limit must be a positive number" in one_line_error(result)
    assert not out.exists()


def test_a_scripted_run_prints_no_estimate(tmp_path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["coffee", "run", "--days", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "estimate" not in result.output.lower()


def test_the_limit_stops_the_run_and_resume_finishes_it_without_paying_twice(
    tmp_path,
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(patient) as server:
        config = coffee_config(tmp_path / "c.toml", server.base_url)
        args = ["coffee", "run", "--config", str(config), "--out", str(out)]
        result = runner.invoke(app, [*args, "--cost-limit", "6"])  # estimate ≈ $5.03
        assert result.exit_code == 3, result.output
        assert "Cost estimate of this run" in result.output  # before the first call
        assert "cost limit reached" in result.output and "econbench resume" in result.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["status"] == "stopped"
        assert summary["stopped"]["error_type"] == "CostLimitReached"
        assert len(server.requests) == 3  # $2 each: the fourth call was never sent

        resumed = runner.invoke(app, ["resume", str(out)])
        assert resumed.exit_code == 0, resumed.output
    final = json.loads((out / "summary.json").read_text())
    assert final["status"] == "completed"
    calls = final["firms"]["roaster_A"]["llm_calls"]
    assert calls == 5 and len(server.requests) == calls  # no call was paid twice
    assert final["firms"]["roaster_A"]["cost_usd"] == pytest.approx(5 * (2.0 + 50e-6))


def test_resume_keeps_a_limit_on_what_the_run_costs_in_all(tmp_path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(patient) as server:
        config = coffee_config(tmp_path / "c.toml", server.base_url)
        args = ["coffee", "run", "--config", str(config), "--out", str(out)]
        assert runner.invoke(app, [*args, "--cost-limit", "6"]).exit_code == 3  # 3 calls, $6
        assert len(server.requests) == 3

        again = runner.invoke(app, ["resume", str(out), "--cost-limit", "6"])
        assert again.exit_code == 3, again.output  # spent already: no new call is sent
        assert len(server.requests) == 3
        assert "cost limit reached" in again.output and "--cost-limit" in again.output

        more = runner.invoke(app, ["resume", str(out), "--cost-limit", "8"])
        assert more.exit_code == 3, more.output  # $6 before, one more $2 call, then stopped
        assert len(server.requests) == 4

        bad = runner.invoke(app, ["resume", str(out), "--cost-limit", "-1"])
        assert bad.exit_code == 2 and "--cost-limit" in one_line_error(bad)
        assert len(server.requests) == 4

        done = runner.invoke(app, ["resume", str(out), "--cost-limit", "100"])
        assert done.exit_code == 0, done.output
    final = json.loads((out / "summary.json").read_text())
    assert final["status"] == "completed"
    assert final["firms"]["roaster_A"]["llm_calls"] == 5 == len(server.requests)


# --------------------------------------------------------------------------- allo run


def eager(request: BrainRequest) -> BrainReply:
    """Builds at first sight (R1's claim_solver), $1 a call at the models file's price."""
    usage = {"input_tokens": 1_000_000, "cached_input_tokens": 0, "output_tokens": 10}
    if not request.tools or request.messages[-1]["role"] == "tool":
        return BrainReply(text="Done.", **usage)
    return BrainReply(tool_calls=[{"name": "claim_solver", "arguments": {}}], **usage)


def models_file(path: Path, base_url: str, price: bool = True) -> Path:
    prices = "input_usd_per_mtok = 1\noutput_usd_per_mtok = 1\n" if price else ""
    path.write_text(f'[models."{MODEL}"]\nbase_url = "{base_url}"\n{prices}')
    return path


def allo_args(out: Path, config: Path, *extra: str) -> list[str]:
    return [
        "allo",
        "run",
        "--framing",
        "r1",
        "--policy",
        MODEL,
        "--seeds",
        "2000-2001",
        "--config",
        str(config),
        "--out",
        str(out),
        *extra,
    ]


def test_an_allo_dry_run_prints_the_estimate_and_writes_nothing(tmp_path) -> None:
    out = tmp_path / "cell"
    config = models_file(tmp_path / "m.toml", "http://127.0.0.1:9/v1")
    result = runner.invoke(app, allo_args(out, config, "--dry-run"))
    assert result.exit_code == 0, result.output
    assert MODEL in result.output and "estimated cost: $" in result.output
    assert "dry run: nothing was run" in result.output
    assert not out.exists()


def test_an_allo_limit_under_the_estimate_refuses_to_start(tmp_path) -> None:
    out = tmp_path / "cell"
    config = models_file(tmp_path / "m.toml", "http://127.0.0.1:9/v1")
    result = runner.invoke(app, allo_args(out, config, "--cost-limit", "0.01"))
    assert result.exit_code == 2, result.output
    assert "over --cost-limit" in one_line_error(result)
    assert not out.exists()


def test_the_allo_limit_stops_the_cell_and_a_higher_limit_continues_it(tmp_path) -> None:
    out = tmp_path / "cell"
    with FakeOpenAIServer(eager) as server:
        config = models_file(tmp_path / "m.toml", server.base_url)
        result = runner.invoke(app, allo_args(out, config, "--cost-limit", "2"))  # est. ≈ $1.1
        assert result.exit_code == 3, result.output
        assert "Cost estimate of this cell" in result.output
        assert "cost limit reached" in result.output and "higher --cost-limit" in result.output
        summary = json.loads((out / "summary.json").read_text())
        assert summary["status"] == "stopped"
        assert summary["stopped"]["error_type"] == "CostLimitReached"
        assert len(server.requests) == 2

        held = runner.invoke(app, ["resume", str(out), "--cost-limit", "2"])
        assert held.exit_code == 3, held.output  # `econbench resume` keeps the limit too
        assert len(server.requests) == 2

        again = runner.invoke(app, allo_args(out, config, "--cost-limit", "100"))
        assert again.exit_code == 0, again.output
    final = json.loads((out / "summary.json").read_text())
    assert final["status"] == "completed" and final["episodes"] == 2
    assert len(server.requests) == final["llm_calls"]  # the two calls were replayed
    assert "Model usage" in again.output and f"{final['llm_calls']:,}" in again.output
