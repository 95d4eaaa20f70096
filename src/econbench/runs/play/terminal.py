"""Play in the terminal: the turn as text, then a command line of tool names.

On a TTY the line is read with the standard library's ``readline`` (tab completion of the
tool names, the seat's commands and a tool's ``key=``; the session's history on the arrow
keys). From a pipe, commands are read one per line, so a script or a test can play; each is
echoed after the prompt, so what was played reads as a transcript. The end of the input (or
``quit``) leaves the seat: the run stops where it is and ``econbench resume`` continues it.

A command that cannot be sent (an unknown tool, a bad argument) prints the error result the
tool would have returned, and the prompt asks again: no action is spent on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from econbench.agents.models.base import ModelOutput
from econbench.agents.models.human import person_reply
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.runs.play.commands import (
    CONTROLS,
    Control,
    Refused,
    parse_command,
    tool_help,
    usage_line,
)
from econbench.runs.play.seat import PendingTurn, RemoteSeat
from econbench.runs.play.transcript import first_shown, message_text

START_HINT = (
    "You play as a model would: one tool call per command (`TOOL ARG…` or `TOOL key=value`), "
    "`wait` ends your day, `help` lists the commands."
)
POLL_S = 0.2
"""How often the terminal looks whether the run has ended while no turn is waiting."""


class TerminalPlayer:
    """The person's side of a ``RemoteSeat`` in a terminal (see the module docstring)."""

    def __init__(
        self,
        seat: RemoteSeat,
        *,
        stdin: TextIO,
        stdout: TextIO,
        interactive: bool,
        wait_tool: str | None = None,
    ) -> None:
        self.seat = seat
        self.stdin, self.stdout = stdin, stdout
        self.interactive = interactive
        self.wait_tool = wait_tool
        self.shown: int | None = None
        """How many messages of the conversation the person has seen."""
        self._tools: list[ToolSpec] = []
        if interactive:
            self._setup_readline()

    def play(self) -> None:
        """Answer turns until the run is over or the person leaves."""
        while True:
            pending = self.seat.wait_turn(POLL_S)
            if pending is None:
                if self.seat.finished:
                    return
                continue
            self.show(pending)
            output = self.read_action(pending)
            if output is None:
                self.seat.leave("the player left")
                return
            self.seat.answer(pending.number, output)

    # ------------------------------------------------------------ showing
    def show(self, pending: PendingTurn) -> None:
        """What is new in the conversation since the person last looked."""
        messages = pending.turn.messages
        if self.shown is None:
            self.print(START_HINT)
        start = first_shown(messages) if self.shown is None else self.shown
        for message in messages[start:]:
            if message.role == "assistant" and self.shown is not None:
                continue  # the person's own last command, already on screen
            self.print(message_text(message))
        self.shown = len(messages)

    def prompt(self, pending: PendingTurn) -> str:
        clock = pending.context.get("clock") or {}
        if not clock:
            return "> "
        return (
            f"{pending.context.get('firm', '')} day {clock['day']} {clock['time']} "
            f"({clock['actions_left']} actions left)> "
        )

    def print(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    # ------------------------------------------------------------ reading
    def read_action(self, pending: PendingTurn) -> ModelOutput | None:
        """Read lines until one is an action; ``None`` when the person leaves."""
        self._tools = list(pending.turn.tools)
        while True:
            line = self.read_line(self.prompt(pending))
            if line is None:
                return None
            parsed = parse_command(line, self._tools, self.wait_tool)
            if isinstance(parsed, ToolCall):
                return person_reply(parsed)
            if isinstance(parsed, Refused):
                self.print(f"<- error: {json.dumps(parsed.result, ensure_ascii=False)}")
                continue
            if parsed.name == "quit":
                return None
            self.control(parsed, pending)

    def read_line(self, prompt: str) -> str | None:
        """One command line; ``None`` at the end of the input."""
        if self.interactive:
            try:
                return input(prompt)
            except EOFError:
                self.print()
                return None
        self.stdout.write(prompt)
        line = self.stdin.readline()
        if not line:
            self.print()
            return None
        self.print(line.rstrip("\n"))
        return line

    def control(self, command: Control, pending: PendingTurn) -> None:
        """Answer one of the seat's own commands (no action is spent)."""
        tools = self._tools
        if command.name == "help" and command.argument:
            spec = next((t for t in tools if t.name == command.argument.strip()), None)
            self.print(tool_help(spec) if spec else f"no tool named {command.argument!r}")
        elif command.name == "help":
            self.print(help_text(tools, self.wait_tool))
        elif command.name == "tools":
            self.print("\n\n".join(tool_help(t) for t in tools))
        elif command.name == "prompt":
            messages = pending.turn.messages
            self.print(messages[0].content if messages else "")
        elif command.name == "show":
            self.print(panel_text(pending.context, command.argument.strip()))

    # ------------------------------------------------------------ readline
    def _setup_readline(self) -> None:
        try:
            import readline
        except ImportError:  # pragma: no cover - a Python built without it
            return
        readline.set_completer(self._complete)
        readline.set_completer_delims(" \t")
        doc = getattr(readline, "__doc__", "") or ""
        binding = "bind ^I rl_complete" if "libedit" in doc else "tab: complete"
        readline.parse_and_bind(binding)

    def _complete(self, text: str, state: int) -> str | None:
        import readline

        words = readline.get_line_buffer().lstrip().split()
        completing_first = not words or (
            len(words) == 1 and not readline.get_line_buffer().endswith(" ")
        )
        if completing_first:
            options = [t.name for t in self._tools] + [*CONTROLS, "wait"]
        else:
            spec = next((t for t in self._tools if t.name == words[0]), None)
            keys = list((spec.parameters.get("properties") or {}) if spec else [])
            options = [f"{key}=" for key in keys]
            if words[0] in ("help", "show"):
                options = [t.name for t in self._tools] + list(PANEL_NAMES)
        matches = sorted(o for o in options if o.startswith(text))
        return matches[state] if state < len(matches) else None


PANEL_NAMES = ("books", "stock", "listings", "offers", "invoices", "messages")


def help_text(tools: Sequence[ToolSpec], wait_tool: str | None) -> str:
    """The commands: every tool's usage line, then the seat's own commands."""
    lines = ["Tools (each spends one action; arguments in order, or key=value):"]
    lines += [f"  {usage_line(t)}" for t in tools]
    lines.append("Also:")
    if wait_tool is not None:
        lines.append(f"  wait (or: next day): end your day ({wait_tool})")
    lines += [f"  {text}" for text in CONTROLS.values()]
    return "\n".join(lines)


def panel_text(context: dict[str, Any], name: str) -> str:
    """One panel (or, with no name, the clock and the panels' names) as indented JSON."""
    panels = context.get("panels") or {}
    if not name:
        clock = json.dumps(context.get("clock") or {}, ensure_ascii=False)
        return f"clock: {clock}\npanels: {', '.join(panels) or '(none)'}"
    if name not in panels:
        return f"no panel {name!r}; panels: {', '.join(panels) or '(none)'}"
    return json.dumps(panels[name], indent=2, ensure_ascii=False)
