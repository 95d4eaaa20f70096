"""A person's game in a pseudo-terminal, killed mid-episode and resumed, equals one that never
stopped: the moves recorded before the kill are replayed from ``record.sqlite`` (the person is
not asked them again) and the cell's files end up byte for byte those of the game played in one
go with the same moves.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
from pathlib import Path

from econbench.agents.models.record import CallRecord

MOVES = ["/claim_solver", "/skip_solver", "/claim_solver", "/claim_solver"]
"""The person's moves on seed 2000's four R1 problems."""
PROMPT = b"your reply> "
WAIT_S = 120
"""The longest any wait for the game may take before it counts as never (not a timing)."""


def econbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "econbench.cli", *args]


def play_args(out: Path) -> list[str]:
    return ["allo", "play", "--framing", "r1", "--tasks", "4", "--name", "hana", "--out", str(out)]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["TERM"] = "dumb"
    env["COLUMNS"] = "120"
    return env


class Terminal:
    """A process on a pseudo-terminal: read what it shows, type lines."""

    def __init__(self, args: list[str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, env=environment(), close_fds=True
        )
        os.close(slave)
        self.screen = b""

    def wait_for(self, count: int) -> None:
        """Read until the screen shows ``count`` prompts."""
        while self.screen.count(PROMPT) < count:
            ready, _, _ = select.select([self.master], [], [], WAIT_S)
            assert ready, f"no prompt {count}; the screen:\n{self.screen.decode(errors='replace')}"
            chunk = os.read(self.master, 65536)
            assert chunk, f"the game ended; the screen:\n{self.screen.decode(errors='replace')}"
            self.screen += chunk

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_S)
        os.close(self.master)


def calls(out: Path) -> list[tuple[str, int, str, dict]]:
    with CallRecord(out / "record.sqlite", readonly=True) as record:
        return [(c.agent, c.idx, c.request_key, c.output) for c in record.calls()]


def test_a_game_killed_mid_episode_resumes_as_if_it_never_stopped(tmp_path: Path) -> None:
    # Played in one go, from piped input.
    whole = tmp_path / "whole"
    done = subprocess.run(
        econbench(*play_args(whole)),
        input="\n".join(MOVES) + "\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr

    # Played on a terminal, killed while the third move is asked.
    killed = tmp_path / "killed"
    terminal = Terminal(econbench(*play_args(killed), "--tui"))
    try:
        for number, move in enumerate(MOVES[:2], 1):
            terminal.wait_for(number)
            terminal.type(move)
        terminal.wait_for(3)
    finally:
        terminal.kill()
    shown = terminal.screen.decode(errors="replace")
    assert "--- system ---" in shown and "Problem 3 of 4" in shown
    assert not (killed / "summary.json").exists()
    assert len(calls(killed)) == 2  # each move was recorded as it was made

    # `econbench resume` asks only the moves not made.
    resumed = subprocess.run(
        econbench("resume", str(killed)),
        input="\n".join(MOVES[2:]) + "\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=WAIT_S,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.count("--- you ---") == 2  # the replayed moves, shown, not asked

    for name in ("episodes.jsonl", "summary.json", "config.json", "checkpoint.json"):
        assert (killed / name).read_bytes() == (whole / name).read_bytes(), name
    assert calls(killed) == calls(whole)
    summary = json.loads((killed / "summary.json").read_text())
    assert summary["policy"] == "human:hana" and summary["status"] == "completed"
