"""The terminal seat: an AlloBench turn as text, the person's reply on a command line.

Each turn prints what is new in the conversation (the first turn: the system prompt, the
tools and the first question), exactly as the model receives it, then reads one reply:

- a line of text is the reply's text (R0: ``DECISION: KEEP``, or just ``keep``, which the
  game reads as the model's reply is read); ``<<<`` alone opens a reply of several lines,
  closed by ``>>>`` alone;
- ``/TOOL`` calls a tool, with its arguments as a JSON object (``/run_script {"name": "f",
  "inputs": {"X": 3}}``) or as ``key=value`` words (``/submit_answer value=42``; a value is
  JSON where it parses, or where the parameter is a string, the text as written);
  ``key=<<<`` as the last word reads that argument from the next lines up to ``>>>`` (R2's
  code, R3's scripts), and on a terminal ``key=:edit`` opens it in ``$EDITOR``;
- ``:tools``, ``:history`` (the whole conversation again), ``:help``, ``:quit`` (leave; every
  move so far is kept).

It reads from a terminal (with ``readline``'s line editing and history) or, one command per
line, from piped standard input; the end of the input is leaving the seat.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from econbench.agents.models.base import ChatMessage, ModelOutput
from econbench.agents.models.human import Turn
from econbench.runs.play.allo_turns import (
    PlayerLeft,
    ReplyError,
    ToolView,
    check_call,
    model_output,
    quick_replies,
    shared_prefix,
    tool_views,
)

BLOCK_OPEN, BLOCK_CLOSE = "<<<", ">>>"
HELP = """Reply with one of:
  TEXT                    a text reply (R0: DECISION: KEEP / DECISION: PASS, or keep / pass)
  <<<  ...lines...  >>>   a text reply of several lines
  /TOOL                   call a tool without arguments (R1: /claim_solver, /skip_solver)
  /TOOL {"k": v, ...}     call a tool with a JSON object of arguments
  /TOOL k=v k2=v2         the same, word by word (/submit_answer value=42)
  /TOOL k=v code=<<<      ...then the code on the next lines, closed by >>> alone
  /TOOL code=:edit        (on a terminal) write that argument in $EDITOR
Commands: :tools  :history (the whole conversation again)  :help  :quit (leave; all is kept)"""


class TerminalSeat:
    """Plays turns on a text stream: prints each turn, reads the person's reply."""

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
        editor: Callable[[str], str] | None = None,
    ) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.interactive = self.stdin.isatty() if interactive is None else interactive
        self.editor = editor or _edit_in_editor
        self._shown: list[ChatMessage] = []
        self._tools: list[str] | None = None
        if self.interactive:
            import readline  # noqa: F401 - line editing and history for input()

    # ----------------------------------------------------------------- the seat
    async def ask(self, turn: Turn) -> ModelOutput:
        """Show what is new in ``turn``; return the person's reply as the model's output."""
        tools = tool_views(turn.tools)
        self._show(turn.messages, tools)
        while True:
            line = self._read("your reply> ")
            if not line.strip():
                continue
            try:
                output = self._reply(line, turn, tools)
            except ReplyError as exc:
                self._say(f"! {exc} (:help lists the forms)")
                continue
            if output is not None:
                return output

    def start(self, player: str, cell: str, out: str, episodes: int, done: int) -> None:
        """Say who plays what, where it is kept and how to leave."""
        left = episodes - done
        self._say(
            f"{player} plays {cell}: {left} episode(s) to play"
            + (f" ({done} done)" if done else "")
            + f". Every move is saved in {out}; :quit (or Ctrl-C) leaves, and the same "
            "command continues. :help lists the reply forms."
        )

    def episode_finished(self, record: dict[str, Any]) -> None:
        """The episode's score, once it is over (the game never shows it during play)."""
        self._say(
            f"\n=== episode (seed {record['seed']}) over: you collected {record['utility']:g} "
            f"of the {record['opt']:g} a player who knew the stream would have "
            f"(score {record['score']:.3f}) ==="
        )
        self._shown = []
        self._tools = None

    def finished(self, summary: dict[str, Any]) -> None:
        """Nothing more to ask (the command prints the cell's table)."""

    # ----------------------------------------------------------------- display
    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def _show(self, messages: list[ChatMessage], tools: list[ToolView]) -> None:
        if shared_prefix(self._shown, messages) < len(self._shown):
            self._say("(your last reply was withdrawn from the conversation, as a model's is)")
        names = [t.name for t in tools]
        first = not self._shown
        new = messages[shared_prefix(self._shown, messages) :] if not first else messages
        for message in new:
            if message.role == "assistant":
                if first:  # a continued game: the moves replayed from its record
                    self._say(f"--- you ---\n{_reply_text(message)}")
                continue
            self._print_message(message)
            if message.role == "system" and names:
                self._print_tools(tools)
                self._tools = names
        if names and names != self._tools:
            self._print_tools(tools)
            self._tools = names
        options = quick_replies(messages)
        if options and first:
            self._say(f"(reply with {' or '.join(options)})")
        self._shown = list(messages)

    def _print_message(self, message: ChatMessage) -> None:
        if message.role == "tool":
            head = f"--- tool result ({message.name or 'tool'}) ---"
        else:
            head = f"--- {message.role} ---"
        self._say(f"{head}\n{message.content}")

    def _print_tools(self, tools: Sequence[ToolView]) -> None:
        self._say("--- tools ---")
        for tool in tools:
            self._say(f"/{tool.name}{_signature(tool)}\n{_indent(tool.description)}")

    # ----------------------------------------------------------------- input
    def _read(self, prompt: str) -> str:
        if self.interactive and self.stdin is sys.stdin:
            try:
                return input(prompt)
            except EOFError:
                raise PlayerLeft("the input ended") from None
        if self.interactive:
            self.stdout.write(prompt)
            self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise PlayerLeft("the input ended")
        return line.rstrip("\r\n")

    def _block(self) -> str:
        """The lines up to ``>>>`` alone on a line."""
        lines = []
        while (line := self._read("... ")).strip() != BLOCK_CLOSE:
            lines.append(line)
        return "\n".join(lines)

    def _reply(self, line: str, turn: Turn, tools: list[ToolView]) -> ModelOutput | None:
        """The reply ``line`` stands for, or ``None`` for a command that only shows."""
        stripped = line.strip()
        if stripped.startswith(":"):
            return self._command(stripped, turn, tools)
        if stripped == BLOCK_OPEN:
            return model_output(self._block())
        if stripped.startswith("/"):
            name, arguments = self._call(stripped[1:], tools)
            return model_output("", (name, check_call(name, arguments, tools)))
        return model_output(line)

    def _command(self, command: str, turn: Turn, tools: list[ToolView]) -> None:
        word = command.split()[0].lower()
        if word in (":q", ":quit", ":exit"):
            raise PlayerLeft("the player left")
        if word in (":tools", ":t"):
            self._print_tools(tools) if tools else self._say("(no tools: reply with text)")
        elif word in (":history", ":all", ":prompt"):
            for message in turn.messages:
                if message.role == "assistant":
                    self._say(f"--- you ---\n{_reply_text(message)}")
                else:
                    self._print_message(message)
        elif word in (":help", ":h", ":?"):
            self._say(HELP)
        else:
            raise ReplyError(f"unknown command {word}")
        return None

    def _call(self, text: str, tools: list[ToolView]) -> tuple[str, Any]:
        """A ``/TOOL …`` line (without the slash) as a tool name and its arguments."""
        name, _, rest = text.partition(" ")
        rest = rest.strip()
        tool = next((t for t in tools if t.name == name), None)
        if tool is None:
            check_call(name, {}, tools)  # says which tools there are
        assert tool is not None
        if rest.startswith("{"):
            try:
                return name, json.loads(rest)
            except json.JSONDecodeError as exc:
                raise ReplyError(f"the arguments are not valid JSON: {exc.msg}") from None
        try:
            words = shlex.split(rest)
        except ValueError as exc:
            raise ReplyError(f"cannot read the arguments: {exc}") from None
        arguments: dict[str, Any] = {}
        for i, word in enumerate(words):
            key, eq, value = word.partition("=")
            if not eq or not key:
                raise ReplyError(f"{word!r} is not key=value")
            if value in (BLOCK_OPEN, ":edit") and i != len(words) - 1:
                raise ReplyError(f"{key}={value} must be the last word")
            if value == BLOCK_OPEN:
                arguments[key] = self._block()
            elif value == ":edit":
                if not self.interactive:
                    raise ReplyError(":edit needs a terminal; use <<< … >>> instead")
                arguments[key] = self.editor(f"{name}.{key}")
            else:
                arguments[key] = _value(value, tool.properties.get(key))
        return name, arguments


def _value(text: str, schema: Any) -> Any:
    """A ``key=value`` word's value: the text for a string parameter, JSON otherwise."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind == "string":
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if kind in ("number", "integer", "object", "array", "boolean"):
            raise ReplyError(f"{text!r} is not a valid {kind}") from None
        return text


def _signature(tool: ToolView) -> str:
    params = []
    for key, schema in tool.properties.items():
        kind = schema.get("type", "any") if isinstance(schema, dict) else "any"
        optional = "" if key in tool.required else "?"
        params.append(f"{key}{optional}: {kind}")
    return f"({', '.join(params)})"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _reply_text(message: ChatMessage) -> str:
    parts = [message.content] if message.content else []
    parts += [f"/{c.name} {json.dumps(c.arguments)}" for c in message.tool_calls]
    return "\n".join(parts)


def _edit_in_editor(label: str) -> str:
    """The text the person writes in ``$EDITOR`` (``vi`` when unset)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="econbench-play-") as folder:
        path = os.path.join(folder, f"{label}.py")
        with open(path, "w", encoding="utf-8"):
            pass
        try:
            subprocess.run([*shlex.split(editor), path], check=False)
        except OSError as exc:
            raise ReplyError(f"cannot start the editor {editor!r}: {exc}") from None
        with open(path, encoding="utf-8") as fh:
            return fh.read()
