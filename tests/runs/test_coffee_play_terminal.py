"""``econbench coffee play`` in the terminal: piped commands, and a pseudo-terminal with
``readline`` (tab completion, help, clear errors, quit and resume)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from econbench.agents.tools import ToolCall
from econbench.coffee.toolkit import toolkit_class
from econbench.runs.layout import CONFIG, EVENTS
from econbench.runs.play.commands import Control, Refused, parse_command

CLI = (sys.executable, "-m", "econbench.cli")
TOOLS = list(toolkit_class("roaster").tool_specs().values())
WAIT_S = 60.0
"""The longest a read of the game's output may wait before it counts as never (not a timing
of the game: a loaded CI machine must not fail it)."""


def test_commands_read_positional_and_keyword_arguments_in_schema_order() -> None:
    call = parse_command("make_offer L2 3.5 20", TOOLS, "wait_for_next_day")
    assert call == ToolCall("make_offer", {"listing_id": "L2", "offered_price": 3.5, "qty": 20})
    call = parse_command(
        'send_message farmer_A title="Hi there" body="a=b, c"', TOOLS, "wait_for_next_day"
    )
    assert call == ToolCall(
        "send_message", {"recipient": "farmer_A", "title": "Hi there", "body": "a=b, c"}
    )
    assert parse_command("next day", TOOLS, "wait_for_next_day") == ToolCall(
        "wait_for_next_day", {}
    )
    assert parse_command("help roast", TOOLS, "wait_for_next_day") == Control("help", "roast")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("make_offer L2 cheap 20", "'offered_price': Input should be a valid number"),
        ("make_offer L2", "missing required argument 'offered_price'"),
        ("roast green_coffee_kg 5 6", "too many arguments"),
        ("mkae_offer L2 3 4", "unknown tool 'mkae_offer'. Available tools: post_listing"),
        ('send_message "farmer_A', "cannot read the command"),
    ],
)
def test_a_bad_command_is_refused_in_the_tools_own_words(line: str, error: str) -> None:
    parsed = parse_command(line, TOOLS, "wait_for_next_day")
    assert isinstance(parsed, Refused)
    assert parsed.result["status"] == "error" and error in parsed.message


def test_piped_commands_play_and_quit_leaves_a_resumable_game(
    tmp_path: Path,
) -> None:
    out = tmp_path / "game"
    played = subprocess.run(
        [*CLI, "coffee", "play", "--days", "2", "--name", "pipe", "--out", str(out)],
        input="post_listing roasted_coffee_kg 10 9.5\nroast green_coffee_kg zero\nquit\nwait\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert played.returncode == 130, played.stderr
    assert "> post_listing roasted_coffee_kg 10 9.5" in played.stdout  # echoed as a transcript
    assert '"seller": "roaster_A"' in played.stdout  # the listing's result
    assert "roast: invalid arguments: 'qty_kg'" in played.stdout
    assert f"econbench resume {out}" in played.stderr
    assert json.loads((out / CONFIG).read_text())["agents"]["roaster_A"] == "human:pipe"
    finished = subprocess.run(
        [*CLI, "resume", str(out)],
        input="wait\n" * 6,  # enough for the days left and any wake
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert finished.returncode == 0, finished.stderr
    assert "human:pipe" in finished.stdout
    events = [json.loads(line) for line in (out / EVENTS).read_text().splitlines()]
    tools = [e["tool"] for e in events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    assert tools[0] == "post_listing" and set(tools[1:]) == {"wait_for_next_day"}


def test_the_terminal_completes_helps_and_stops_on_ctrl_c_in_a_pseudo_terminal(
    tmp_path: Path,
) -> None:
    out = tmp_path / "tty"
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [*CLI, "coffee", "play", "--tui", "--days", "2", "--name", "tty", "--out", str(out)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**_env(), "TERM": "xterm"},
        close_fds=True,
        preexec_fn=_own_terminal,  # Ctrl-C reaches it as it would in a terminal window
    )
    os.close(terminal)
    screen = Screen(controller)
    try:
        screen.expect("(20 actions left)> ")
        screen.send("view_li\t")  # completed by readline
        screen.send("\r")
        screen.expect('"count"')
        screen.expect("(19 actions left)> ")
        screen.send("help post_listing\r")
        screen.expect("asking_price (number, required)")
        screen.send("make_offer L2 nothing 5\r")
        screen.expect("Input should be a valid number")
        screen.expect("(19 actions left)> ")  # a refused command spends no action
        screen.send("\x03")  # Ctrl-C
        screen.expect(f"econbench resume {out}")
        assert proc.wait(timeout=WAIT_S) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    events = [json.loads(line) for line in (out / EVENTS).read_text().splitlines()]
    tools = [e["tool"] for e in events if e["type"] == "tool_call" and e["firm"] == "roaster_A"]
    assert tools == ["view_listings"]


class Screen:
    """What the game wrote to the pseudo-terminal, read as it comes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = ""
        self.mark = 0

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def expect(self, text: str) -> None:
        """Wait until ``text`` appears after what the last expect matched."""
        deadline = time.monotonic() + WAIT_S
        while text not in self.text[self.mark :]:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the screen ends with {self.text[-800:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the game exited and closed its side
                    chunk = b""
                assert chunk or text in self.text[self.mark :], f"the game ended before {text!r}"
                self.text += chunk.decode("utf-8", "replace")
        self.mark = self.text.index(text, self.mark) + len(text)


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pseudo-terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}


def test_a_game_against_model_played_firms_prints_their_cost_estimate_first(tmp_path) -> None:
    from tests.fakes.common import BrainReply
    from tests.fakes.openai_server import FakeOpenAIServer
    from typer.testing import CliRunner

    from econbench.cli import app

    model = "openai-compatible/fake"

    def waits(_request) -> BrainReply:
        return BrainReply(tool_calls=[{"name": "wait_for_next_day", "arguments": {}}])

    with FakeOpenAIServer(waits) as server:
        config = tmp_path / "c.toml"
        config.write_text(
            f'[agents]\nroaster_B = "{model}"\n[models."{model}"]\nbase_url = '
            f'"{server.base_url}"\ninput_usd_per_mtok = 1.0\noutput_usd_per_mtok = 1.0\n'
        )
        args = ["coffee", "play", "--tui", "--days", "1", "--config", str(config)]
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "g")], input="quit\n")
    assert result.exit_code == 130, result.output
    assert "Cost estimate of the model-played firms" in result.output
    assert result.output.index("Cost estimate") < result.output.index("Day 0 of 1")
