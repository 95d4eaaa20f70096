"""Bad input from a model or a user: clear errors, no crash, nothing half-written."""

from __future__ import annotations

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import econbench.allo  # noqa: F401 - registers the environments
from econbench.agents.tools import ToolCall
from econbench.allo.episodes.actors import FunctionActor, Reply, ToolResult
from econbench.allo.episodes.runner import CellSpec, play_episode
from econbench.allo.framings import get_framing
from econbench.allo.framings.code import check_solver_code, strip_fences
from econbench.allo.game.stream import StreamConfig, generate_stream
from econbench.allo.gym.vector import VectorFeaturesGame
from econbench.cli import app

runner = CliRunner()


def test_fenced_code_counts_and_is_kept_without_the_fence() -> None:
    code = "```python\ndef solve(inputs):\n    return 1\n```"
    assert check_solver_code(code) is None
    assert strip_fences(code) == "def solve(inputs):\n    return 1"
    assert check_solver_code("```\n```") == "code is empty"
    assert check_solver_code("```python\nnot python at all\n```").startswith("code does not")


def test_non_finite_run_script_inputs_are_an_error_result() -> None:
    code = "def solve(inputs):\n    return 0\n"

    def script(inputs, history) -> Reply:
        last = inputs[-1]
        if isinstance(last, ToolResult) and last.name == "write_script":
            return Reply(
                tool_calls=[
                    ToolCall("run_script", {"name": "s", "inputs": {"x": float("nan")}}, "b")
                ]
            )
        if isinstance(last, ToolResult) and last.name == "run_script":
            assert "finite" in last.result["error"]
            return Reply(tool_calls=[ToolCall("submit_answer", {"answer": 0}, "c")])
        return Reply(tool_calls=[ToolCall("write_script", {"name": "s", "code": code}, "a")])

    episode = play_episode(
        get_framing("r3", protocol="econbench"),
        lambda info: FunctionActor(script),
        generate_stream(2000),
    )
    runs = [
        c
        for t in episode.record["turns"]
        for r in t.get("replies", [])
        for c in r["tool_calls"]
        if c["name"] == "run_script"
    ]
    assert runs and all(c["result"]["status"] == "error" for c in runs)


@pytest.mark.parametrize("budget", [1, 5])
@pytest.mark.parametrize("stream_budget", ["fixed", "cell"])
def test_envs_play_the_runners_stream_for_the_same_budget(budget: int, stream_budget: str) -> None:
    # The streams follow the paper's protocol by default: the B = 3 stream of a seed in every
    # cell ("fixed"); "cell" draws them with the cell's B (the old rule). Envs and runner agree.
    cell = CellSpec(framing="r0", policy="eager", budget=budget, stream_budget=stream_budget)  # type: ignore[arg-type]
    expected = generate_stream(2000, cell.stream_config)
    if stream_budget == "fixed":
        assert expected == generate_stream(2000, StreamConfig())
    else:
        assert expected == generate_stream(2000, StreamConfig(budget=budget))
    env = gym.make("AlloBench-Features-v0", budget=budget, stream_budget=stream_budget)
    env.reset(seed=2000)
    assert env.unwrapped.stream.classes == expected.classes
    game = VectorFeaturesGame(budget=budget, stream_budget=stream_budget)  # type: ignore[arg-type]
    game.reset([2000])
    assert game.streams[0].classes == expected.classes


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--policy", "bayes:0"], "cap must be at least 1"),
        (["--policy", "bayes:exact"], "only tractable"),
        (["--policy", "eager", "--cost", "1e300"], "--cost"),
        (["--policy", "eager", "--seeds", "0-2000000000"], "longer than"),
        (["--policy", "eager", "--episodes", "0"], "--episodes"),
    ],
)
def test_bad_cli_input_is_refused_before_anything_is_written(tmp_path, args, fragment) -> None:
    out = tmp_path / "cell"
    result = runner.invoke(app, ["allo", "run", "--framing", "r0", *args, "--out", str(out)])
    assert result.exit_code == 2
    assert fragment in " ".join(result.output.split())
    assert not out.exists()


def test_an_output_path_that_is_a_file_is_refused(tmp_path) -> None:
    path = tmp_path / "file"
    path.write_text("keep me")
    result = runner.invoke(
        app,
        [
            "allo",
            "run",
            "--framing",
            "r0",
            "--policy",
            "eager",
            "--episodes",
            "1",
            "--out",
            str(path),
        ],
    )
    assert result.exit_code == 2 and "not a directory" in result.output
    assert path.read_text() == "keep me"


def test_a_models_config_that_is_not_tables_is_refused(tmp_path) -> None:
    path = tmp_path / "m.toml"
    path.write_text("models = 3\n")
    result = runner.invoke(
        app,
        [
            "allo",
            "run",
            "--framing",
            "r0",
            "--policy",
            "eager",
            "--episodes",
            "1",
            "--config",
            str(path),
            "--out",
            str(tmp_path / "cell"),
        ],
    )
    assert result.exit_code == 2 and "[models]" in result.output
