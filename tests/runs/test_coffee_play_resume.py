"""A person's CoffeeBench run is a run like any other: recorded, resumed, equal to one that
never stopped (``econbench.runs.play``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from econbench.agents.models.human import PlayerLeft, person_reply
from econbench.agents.tools import ToolCall
from econbench.coffee.policies import UnknownPolicyError
from econbench.coffee.sim import MODEL_DAYS_PER_CHECKPOINT
from econbench.coffee.world import WAIT_TOOL
from econbench.runs.coffee.config import RunConfig
from econbench.runs.coffee.run import resume_to_dir, run_to_dir
from econbench.runs.layout import CONFIG, EVENTS, RECORD
from econbench.runs.play.coffee_panels import CoffeePanels
from econbench.runs.play.commands import parse_command

DAYS = 2
LONG = MODEL_DAYS_PER_CHECKPOINT + 1
"""Long enough for a day-end checkpoint (every ``MODEL_DAYS_PER_CHECKPOINT`` days) before
the last day."""
COMMANDS = [
    "view_listings",
    "post_listing roasted_coffee_kg 10 9.5",
    "make_offer L2 3.9 5",
    'send_message farmer_A Hello "any green beans?"',
    "wait",
    "view_payables",
    "pay_invoice INV2",
    "roast green_coffee_kg 5",
    "wait",
]
"""A short game as roaster_A: a listing, an offer, a message, then a paid invoice and a roast
(the offer is accepted overnight, and its invoice is INV2)."""


class ScriptSeat:
    """Plays ``lines`` in order (then waits); leaves after ``leave_after`` answers."""

    def __init__(self, lines: list[str], leave_after: int | None = None) -> None:
        self.lines = list(lines)
        self.leave_after = leave_after
        self.asked = 0
        self.panels: CoffeePanels | None = None

    def watch(self, world, firm_id: str) -> None:
        self.panels = CoffeePanels(world, firm_id)

    async def ask(self, turn):
        if self.leave_after is not None and self.asked >= self.leave_after:
            raise PlayerLeft("the test left")
        self.asked += 1
        line = self.lines.pop(0) if self.lines else "wait"
        parsed = parse_command(line, turn.tools, WAIT_TOOL)
        assert isinstance(parsed, ToolCall), (line, parsed)
        return person_reply(parsed)


def config(days: int = DAYS) -> RunConfig:
    return RunConfig.model_validate({"days": days, "agents": {"roaster_A": "human:tester"}})


def test_a_person_plays_through_the_agent_loop_and_is_recorded(tmp_path: Path) -> None:
    summary = run_to_dir(config(), tmp_path / "run", seats={"roaster_A": ScriptSeat(COMMANDS)})
    assert summary["status"] == "completed"
    assert summary["firms"]["roaster_A"]["policy"] == "human:tester"
    saved = json.loads((tmp_path / "run" / CONFIG).read_text())
    assert saved["agents"]["roaster_A"] == "human:tester"
    events = [json.loads(line) for line in (tmp_path / "run" / EVENTS).read_text().splitlines()]
    calls = [e for e in events if e["type"] == "model_call" and e["firm"] == "roaster_A"]
    assert calls and all(e["model"] == "human:tester" and e["cost_usd"] == 0.0 for e in calls)
    applied = [e["tool"] for e in events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    assert applied[:4] == ["view_listings", "post_listing", "make_offer", "send_message"]
    paid = [
        e
        for e in events
        if e["type"] == "tool_call" and e["tool"] == "pay_invoice" and e["firm"] == "roaster_A"
    ]
    assert paid and paid[0]["result"]["status"] == "success"
    assert (tmp_path / "run" / RECORD).is_file()


@pytest.mark.parametrize("where", ["first day", "last day"])
def test_a_resumed_game_equals_one_that_never_stopped(tmp_path: Path, where: str) -> None:
    """Left on day 0 (before any checkpoint but the first) or on the last day (after a
    day-end checkpoint): the resume replays the recorded actions, asks only for the rest,
    and writes the same bytes."""
    straight = ScriptSeat(COMMANDS)
    whole = run_to_dir(config(LONG), tmp_path / "whole", seats={"roaster_A": straight})
    leave_after = 2 if where == "first day" else straight.asked - 1
    with pytest.raises(PlayerLeft):
        run_to_dir(
            config(LONG), tmp_path / "cut", seats={"roaster_A": ScriptSeat(COMMANDS, leave_after)}
        )
    checkpoint = json.loads((tmp_path / "cut" / "checkpoint.json").read_text())
    assert (checkpoint["day"] > 0) == (where == "last day")
    rest = ScriptSeat(COMMANDS[leave_after:])
    resumed = resume_to_dir(tmp_path / "cut", seats={"roaster_A": rest})
    assert rest.asked == straight.asked - leave_after  # nothing recorded was asked again
    assert resumed == whole
    for name in (EVENTS, "daily.jsonl"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_looking_at_the_panels_changes_nothing(tmp_path: Path) -> None:
    seat = ScriptSeat(COMMANDS)
    run_to_dir(config(), tmp_path / "run", seats={"roaster_A": seat})
    assert seat.panels is not None
    world = seat.panels.world
    before = world.state.model_dump_json()
    context = seat.panels()
    assert world.state.model_dump_json() == before
    assert set(context["panels"]) == {
        "books",
        "stock",
        "listings",
        "offers",
        "invoices",
        "messages",
    }
    inbox = context["panels"]["messages"]["messages"]
    assert inbox and inbox[0]["body"] == "any green beans?"
    assert context["clock"]["actions_per_day"] == 20


def test_a_person_without_a_seat_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UnknownPolicyError, match=r"played by a person.*econbench coffee play"):
        run_to_dir(config(), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_piped_play_killed_mid_day_resumes_to_the_same_run(tmp_path: Path) -> None:
    """The command line, fed commands on stdin: killed (SIGKILL) on day 1 after a few actions,
    then `econbench resume` fed the rest, equals a game played straight through."""
    script = "\n".join(COMMANDS) + "\n"
    whole = tmp_path / "whole"
    done = _econbench(
        "coffee", "play", "--days", str(DAYS), "--name", "tester", "--out", str(whole), stdin=script
    )
    assert done.returncode == 0, done.stderr
    assert "human:tester" in done.stdout

    cut = tmp_path / "cut"
    proc = subprocess.Popen(
        [*CLI, "coffee", "play", "--days", str(DAYS), "--name", "tester", "--out", str(cut)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(("\n".join(COMMANDS[:6]) + "\n").encode())
    proc.stdin.flush()
    seen = b""
    while seen.count(b"actions left)> ") < 7:  # the prompt after the sixth command
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, "the game ended before the sixth command's prompt"
        seen += chunk
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = _econbench("resume", str(cut), stdin="\n".join(COMMANDS[6:]) + "\n")
    assert resumed.returncode == 0, resumed.stderr
    assert (cut / EVENTS).read_bytes() == (whole / EVENTS).read_bytes()


CLI = (sys.executable, "-m", "econbench.cli")


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}


def _econbench(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )


def test_the_report_keeps_a_person_in_a_configuration_of_their_own(tmp_path: Path) -> None:
    """Same seed, days and background: the person, another person and the heuristic policy
    are three configurations, and a person's LLM cost is no model's (–), not $0.00."""
    from econbench.runs.coffee.report import table2
    from econbench.runs.frames import load_runs

    run_to_dir(config(), tmp_path / "runs" / "ada", seats={"roaster_A": ScriptSeat(COMMANDS)})
    other = config().model_copy(update={"agents": {"roaster_A": "human:bo"}})
    run_to_dir(other, tmp_path / "runs" / "bo", seats={"roaster_A": ScriptSeat(["wait"])})
    policy = config().model_copy(update={"agents": {"roaster_A": "heuristic"}})
    run_to_dir(policy, tmp_path / "runs" / "policy")
    table = table2(load_runs([tmp_path / "runs"]))
    assert table is not None
    rows = table.display.to_dict("records")
    assert len(rows) == 3
    people = [r for r in rows if "human:" in r["configuration"]]
    assert sorted(r["configuration"].split()[0] for r in people) == [
        "roaster_A=human:bo",
        "roaster_A=human:tester",
    ]
    assert {r["n"] for r in rows} == {"1"}
    assert {r["LLM cost (USD)"] for r in people} == {"–"}
