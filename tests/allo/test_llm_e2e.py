"""AlloBench episodes played by a model through the real provider SDKs and fake servers.

The fake model commits at first sight in every framing (the ``eager`` policy, spoken in each
framing's own language), so its allocation score must equal the bare game's eager score on
the same seeds, and every commit must be a first-sight commit.
"""

from __future__ import annotations

import json

import pytest
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.common import BrainReply, BrainRequest
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.openai_server import FakeOpenAIServer
from typer.testing import CliRunner

from econbench.allo.game import Game
from econbench.allo.game.metrics import summarize
from econbench.allo.game.stream import generate_stream
from econbench.allo.solvers.policies import make_policy
from econbench.cli import app

SEEDS = [2000, 2001]
runner = CliRunner()


def eager_brain(request: BrainRequest) -> BrainReply:
    """Keep / claim / build at once; in R3 write a (wrong) script, then answer 0."""
    tools = {t["name"] for t in request.tools}
    last = request.messages[-1]
    if not tools:
        return BrainReply(text="A new colour. I keep it.\nDECISION: KEEP")
    if "write_script" in tools:
        if last["role"] == "tool":  # the script is written: answer and end the task
            submit = next(t for t in request.tools if t["name"] == "submit_answer")
            key = next(iter(submit["parameters"]["properties"]))  # "value" under "paper"
            return BrainReply(tool_calls=[{"name": "submit_answer", "arguments": {key: 0}}])
        n = sum(1 for m in request.messages if m["role"] == "user")
        code = "def solve(inputs: dict) -> int:\n    return 0\n"
        return BrainReply(
            tool_calls=[{"name": "write_script", "arguments": {"name": f"s{n}", "code": code}}]
        )
    if last["role"] == "tool":
        return BrainReply(text="Done.")
    if "claim_solver" in tools and any(
        "code" in t["parameters"].get("properties", {}) for t in request.tools
    ):
        code = "def solve(inputs: dict) -> float:\n    return 0.0\n"
        return BrainReply(tool_calls=[{"name": "claim_solver", "arguments": {"code": code}}])
    return BrainReply(tool_calls=[{"name": "claim_solver", "arguments": {}}])


def bare_eager_score() -> float:
    results = []
    for seed in SEEDS:
        stream = generate_stream(seed)
        game = Game(stream)
        policy = make_policy("eager")
        policy.reset(stream)
        while not game.done:
            turn = game.turn()
            game.step(policy.decide(game.view()) if turn.needs_decision else False)
        results.append(game.result())
    return summarize(results, n_boot=10)["score"]


SERVERS = {
    "openai-compatible/fake": (FakeOpenAIServer, "OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1"),
    "openai/gpt-5.5": (FakeOpenAIServer, "OPENAI_BASE_URL", "OPENAI_API_KEY", "/v1"),
    "anthropic/claude-opus-4-7": (
        FakeAnthropicServer,
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "",
    ),
    "google/gemini-3.1-pro": (FakeGeminiServer, "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", ""),
}
CASES = [(framing, "openai-compatible/fake") for framing in ("r0", "r1", "r2", "r3")] + [
    ("r0", "anthropic/claude-opus-4-7"),
    ("r2", "anthropic/claude-opus-4-7"),
    ("r1", "google/gemini-3.1-pro"),
    ("r3", "openai/gpt-5.5"),
]


@pytest.mark.parametrize(("framing", "model"), CASES)
def test_episodes_through_each_sdk(tmp_path, monkeypatch, framing: str, model: str) -> None:
    server_class, url_var, key_var, suffix = SERVERS[model]
    out = tmp_path / "cell"
    with server_class(eager_brain) as server:
        monkeypatch.setenv(url_var, server.root_url + suffix)
        monkeypatch.setenv(key_var, "sk-test-not-a-real-key-0123456789")
        result = runner.invoke(
            app,
            [
                "allo",
                "run",
                "--framing",
                framing,
                "--policy",
                model,
                "--seeds",
                "2000-2001",
                "--out",
                str(out),
            ],
        )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == model and summary["episodes"] == len(SEEDS)
    assert summary["unresolved_turns"] == 0
    assert summary["first_sight_rate"] == 1.0
    assert summary["score"] == pytest.approx(bare_eager_score())
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").open()]
    replies = [r for e in episodes for t in e["turns"] for r in t.get("replies", [])]
    assert replies and all(r["usage"]["input_tokens"] > 0 for r in replies)
    if framing == "r3":
        assert summary["realised_utility_mean"] < summary["utility_mean"], "wrong scripts earn 0"
    for path in out.iterdir():
        assert b"sk-test-not-a-real-key" not in path.read_bytes(), path.name


def test_usage_and_cost_are_summed_per_cell(tmp_path, monkeypatch) -> None:
    out = tmp_path / "cell"
    with FakeAnthropicServer(eager_brain) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.root_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key-0123456789")
        result = runner.invoke(
            app,
            [
                "allo",
                "run",
                "--framing",
                "r1",
                "--policy",
                "anthropic/claude-haiku-4-5",
                "--episodes",
                "1",
                "--out",
                str(out),
            ],
        )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["llm_calls"] == summary["decision_turns"] > 0
    assert summary["input_tokens"] > summary["output_tokens"] > 0
    assert summary["cost_usd"] > 0


def test_a_fatal_model_error_stops_cleanly_and_keeps_finished_episodes(
    tmp_path, monkeypatch
) -> None:
    from tests.fakes.common import Fault

    out = tmp_path / "cell"
    with FakeOpenAIServer(eager_brain) as server:
        # Episode 2000 takes 4 questions (eager, B = 3, then the session ends); the 6th
        # request fails with a bad key.
        server.faults.extend([Fault("delay", seconds=0.0)] * 5 + [Fault("status", status=401)])
        monkeypatch.setenv("OPENAI_BASE_URL", server.root_url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123456789")
        result = runner.invoke(
            app,
            [
                "allo",
                "run",
                "--framing",
                "r1",
                "--policy",
                "openai-compatible/fake",
                "--seeds",
                "2000-2003",
                "--out",
                str(out),
            ],
        )
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "stopped:" in said and "econbench resume" in said
    assert "sk-test-not-a-real-key" not in result.output
    kept = (out / "episodes.jsonl").read_text().splitlines()
    assert 1 <= len(kept) < 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["stopped"]["error_type"]
    # The key is fixed: the cell resumes after its last finished episode.
    with FakeOpenAIServer(eager_brain) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.root_url + "/v1")
        result = runner.invoke(app, ["resume", str(out), "--quiet"])
        assert result.exit_code == 0, result.output
        with_resume = len(server.requests)
    records = [json.loads(line) for line in (out / "episodes.jsonl").open()]
    assert [r["seed"] for r in records] == [2000, 2001, 2002, 2003]
    assert with_resume < 4 * 4, "finished episodes were not played again"
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"
