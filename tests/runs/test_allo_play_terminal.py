"""``econbench allo play`` in the terminal, fed from piped standard input (one command a line).

What the person is shown is what a model is sent (the cell's own system prompt and tools),
their replies are read as a model's (R0's text, R1's and R2's calls, R3's scripts run in
econbench's sandbox), and the cell is recorded as ``human:<name>``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.agents.models.record import CallRecord
from econbench.allo.episodes.runner import CellSpec
from econbench.allo.game.stream import StreamConfig
from econbench.allo.sandbox.core import ALLOW_WEAK_ENV, bwrap_path
from econbench.cli import app
from econbench.runs.play.allo_play import play_in_terminal
from econbench.runs.play.allo_terminal import TerminalSeat

runner = CliRunner()


def play_cli(tmp_path: Path, *args: str, typed: str) -> tuple[int, str, Path]:
    out = tmp_path / "cell"
    result = runner.invoke(
        app, ["allo", "play", "--tui", "--out", str(out), "--tasks", "4", *args], input=typed
    )
    return result.exit_code, result.output, out


def episode(out: Path) -> dict:
    [line] = (out / "episodes.jsonl").read_text().splitlines()
    return json.loads(line)


def test_r0_shows_the_models_prompt_and_reads_text_replies(tmp_path: Path) -> None:
    typed = ":help\n/keep\nDECISION: KEEP\n\nkeep\nDECISION: PASS\n**DECISION:** KEEP\n"
    code, output, out = play_cli(tmp_path, "--framing", "r0", "--name", "carol", typed=typed)
    assert code == 0, output
    config = json.loads((out / "config.json").read_text())
    assert config["policy"] == "human:carol"
    assert config["system_prompt"] in output  # exactly the model's system prompt
    assert "Draw 1 of 4: a red ball appears." in output
    assert "(reply with DECISION: KEEP or DECISION: PASS)" in output
    assert "/TOOL k=v code=<<<" in output  # :help
    assert "no tool 'keep' in this turn; the tools are: none (reply with text)" in output
    record = episode(out)
    decisions = [t for t in record["turns"] if t["kind"] == "decision"]
    # Seed 2000 draws red, blue, blue, green: the second blue is collected unasked.
    assert [t["replies"][0]["text"] for t in decisions] == [
        "DECISION: KEEP",
        "keep",
        "DECISION: PASS",
    ]
    assert [t["how"] for t in decisions] == ["tag", "lead", "tag"]
    assert [t["decision"] for t in decisions] == ["commit", "commit", "pass"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == "human:carol" and summary["cost_usd"] == 0.0
    assert summary["status"] == "completed"
    assert "AlloBench r0 · human:carol" in output


def test_r2_code_is_read_as_a_block_and_sent_verbatim(tmp_path: Path) -> None:
    code_lines = [
        "def solve(inputs: dict) -> float:",
        "    x = inputs['X']  # a = b",
        "    return x",
    ]
    typed = "/claim_solver code=<<<\n" + "\n".join(code_lines) + "\n>>>\n" + "/skip_solver\n" * 3
    spec = CellSpec(framing="r2", policy="human:dan", seeds=(2000,), config=StreamConfig(n_tasks=4))
    out = tmp_path / "r2"
    shown = io.StringIO()
    outcome = play_in_terminal(
        spec, out, spec.make_framing(), TerminalSeat(io.StringIO(typed), shown), resume=False
    )
    assert outcome.status == "over"
    first = episode(out)["turns"][0]
    [call] = first["replies"][0]["tool_calls"]
    assert call["name"] == "claim_solver" and call["executed"]
    assert call["arguments"] == {"code": "\n".join(code_lines)}
    assert first["commit"] is True
    assert "/claim_solver(code: string)" in shown.getvalue()
    with CallRecord(out / "record.sqlite", readonly=True) as record:
        calls = list(record.calls("seed-2000"))
    assert len(calls) == 4 and calls[0].output["tool_calls"][0]["arguments"]["code"]


def test_r3_scripts_run_in_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if bwrap_path() is None:
        monkeypatch.setenv(ALLOW_WEAK_ENV, "1")
    script = "def solve(inputs: dict) -> float:\n    return inputs['BASE'] % inputs['MOD']\n"
    typed = (
        f"/write_script name=rem code=<<<\n{script}>>>\n"
        '/run_script {"name": "rem", "inputs": {"BASE": 17, "MOD": 5}}\n'
        "/submit_answer value=nope\n"  # refused here: not a number
        "/submit_answer value=2\n"
        "/submit_answer value=7\n"
    )
    spec = CellSpec(
        framing="r3", policy="human:erin", seeds=(2000,), config=StreamConfig(n_tasks=2)
    )
    out = tmp_path / "r3"
    shown = io.StringIO()
    outcome = play_in_terminal(
        spec, out, spec.make_framing(), TerminalSeat(io.StringIO(typed), shown), resume=False
    )
    assert outcome.status == "over"
    assert "'nope' is not a valid number" in shown.getvalue()
    record = episode(out)
    assert record["r3"]["writes"] == 1 and record["r3"]["submits"] == 2
    runs = [r for t in record["turns"] for r in t.get("sandbox", [])]
    assert runs and runs[0]["ok"]
    results = [c["result"] for t in record["turns"] for r in t["replies"] for c in r["tool_calls"]]
    assert any(r.get("return_value") == 2.0 for r in results)
    assert '"return_value": 2.0' in shown.getvalue()  # the person saw the script's result


def test_leaving_keeps_the_moves_and_the_same_command_continues(tmp_path: Path) -> None:
    args = ("--framing", "r1", "--name", "fay")
    code, output, out = play_cli(tmp_path, *args, typed="/claim_solver\n:quit\n")
    assert code == 130
    assert "every move is kept" in output and "econbench resume" in output
    assert not (out / "summary.json").exists()
    with CallRecord(out / "record.sqlite", readonly=True) as record:
        assert record.count_calls() == 1
    code, output, out = play_cli(
        tmp_path, *args, typed="/skip_solver\n/skip_solver\n/skip_solver\n"
    )
    assert code == 0, output
    assert "--- you ---\n/claim_solver {}" in output  # the replayed move, shown again
    turns = [t for t in episode(out)["turns"] if t["kind"] == "decision"]
    assert [t["decision"] for t in turns] == ["commit", "pass", "pass", "pass"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--framing", "r1", "--name", "no spaces"], "invalid player name"),
        (["--framing", "r9"], "unknown framing 'r9'"),
        (["--framing", "r1", "--tui", "--open"], "--tui plays in the terminal"),
        (["--framing", "r1", "--condition", "nope"], "nope"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "cell"
    result = runner.invoke(app, ["allo", "play", "--out", str(out), *args], input="")
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_a_person_is_no_model_for_allo_run(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["allo", "run", "--framing", "r1", "--actor", "human:gus", "--out", str(tmp_path / "x")],
    )
    assert result.exit_code == 2
    assert "human:gus is a person" in result.output and "econbench allo play" in result.output


def test_the_report_keeps_each_person_in_a_row_of_their_own(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("ivy", "jon"):
        spec = CellSpec(
            framing="r1", policy=f"human:{name}", seeds=(2000,), config=StreamConfig(n_tasks=4)
        )
        seat = TerminalSeat(io.StringIO("/claim_solver\n" * 4), io.StringIO())
        play_in_terminal(spec, runs / spec.slug(), spec.make_framing(), seat, resume=False)
    eager = ["allo", "run", "--framing", "r1", "--actor", "eager", "--tasks", "4"]
    model = runner.invoke(app, [*eager, "--episodes", "1", "--out", str(runs / "eager"), "--quiet"])
    assert model.exit_code == 0, model.output
    report = runner.invoke(app, ["report", str(runs), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    rows = (tmp_path / "report" / "ladder.csv").read_text().splitlines()
    kinds = [tuple(line.split(",")[:2]) for line in rows[1:]]
    assert kinds == [("eager", "reference"), ("human:ivy", "person"), ("human:jon", "person")]
    ladder = (tmp_path / "report" / "ladder.md").read_text()
    assert "People (human:<name>, econbench allo play) follow the models" in ladder
