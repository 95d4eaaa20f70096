"""The ``econbench`` command line: one sub-application per benchmark, loaded when it runs.

Importing this module loads Typer and nothing of econbench: each top-level command lives in
its own module (``runs/coffee/cli.py``, ``runs/allo/cli.py``, ``runs/*_cli.py``, the local
models' CLI), imported only when that command is invoked, so ``econbench --help`` or a
scripted coffee run does not pay for Gymnasium, provider SDKs, pandas or matplotlib. The root
help lists the commands from the one-line summaries below; a test checks that they match what
each module declares.

Help and errors are plain text (``rich_markup_mode=None`` here, which every sub-command built
under the root inherits): Rich markup would read the brackets of ``[run]``, ``[models]`` or
``[redacted]`` as style tags and print nothing in their place.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """Where a top-level command is defined, and the summary the root help shows for it."""

    module: str
    summary: str
    app: str | None = None
    """The module's ``typer.Typer`` sub-application; ``None``: the module's ``register(root)``."""


COMMANDS: dict[str, LazyCommand] = {
    "resume": LazyCommand(
        "econbench.runs.resume_cli",
        "Continue a run that was killed or stopped, from its last checkpoint.",
    ),
    "view": LazyCommand(
        "econbench.runs.viewer_cli",
        "Browse runs in a local web page (127.0.0.1 only); it follows runs still being written.",
    ),
    "report": LazyCommand(
        "econbench.runs.report_cli",
        "Tables, figures and one self-contained index.html over many runs.",
    ),
    "replay": LazyCommand(
        "econbench.runs.replay_cli",
        "Re-run a run with every model reply served from its record (no API keys, no cost),\n"
        "then compare the new log with the original's.",
    ),
    "sweep": LazyCommand(
        "econbench.runs.sweep_cli",
        "Run an experiment's matrix of runs (agents × seeds × variants, or AlloBench cells).",
    ),
    "coffee": LazyCommand(
        "econbench.runs.coffee.cli", "CoffeeBench: the 90-day coffee economy.", app="app"
    ),
    "allo": LazyCommand("econbench.runs.allo.cli", "AlloBench: online tool allocation.", app="app"),
    "models": LazyCommand(
        "econbench.agents.models.hf.cli", "Local models for hf/PATH: prepare smollm2 or tiny."
    ),
}
"""The top-level commands in the order the help lists them."""


def load_command(name: str) -> Any:
    """Import the module of command ``name`` and build its click command as the root would."""
    spec = COMMANDS[name]
    module = importlib.import_module(spec.module)
    holder = typer.Typer(rich_markup_mode=None)  # a sub-command inherits its builder's mode
    if spec.app is not None:
        holder.add_typer(getattr(module, spec.app), name=name, help=spec.summary)
    else:
        module.register(holder)
    return typer.main.get_group(holder).commands[name]


class LazyGroup(TyperGroup):
    """The root group: a command's module is imported on first use; help shows summaries."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._loaded: dict[str, Any] = {}
        self._summaries_only = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in COMMANDS if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if self._summaries_only and cmd_name not in self._loaded:
            summary = COMMANDS[cmd_name].summary
            return typer.core.TyperCommand(
                name=cmd_name, help=summary, short_help=" ".join(summary.split())
            )
        if cmd_name not in self._loaded:
            self._loaded[cmd_name] = load_command(cmd_name)
        return self._loaded[cmd_name]

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # Bare ``econbench``: the help on stdout and exit code 2, as Typer's rich help did
        # (it printed while formatting; the plain help below is returned, so print it here).
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(2)
        if not ctx.resilient_parsing and args[:1] in (["sweep"], ["allo"]):  # `allo sweep`
            # A pool sweep's workers import econbench while this process loads the command;
            # those its sweep did not take end with the command.
            from econbench.runs.pool_prestart import discard_all, prestart_for

            prestart_for(args)
            ctx.call_on_close(discard_all)
        return super().parse_args(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # Listing the commands needs only their summaries, not their modules.
        self._summaries_only = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._summaries_only = False


app = typer.Typer(
    cls=LazyGroup,
    help="econbench: CoffeeBench and AlloBench, LLM agents making economic decisions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def print_version(value: bool) -> None:
    """``--version``: the installed package's version, then exit (before any command runs)."""
    if value:
        from econbench import __version__

        typer.echo(f"econbench {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the econbench version and exit.",
        callback=print_version,
        is_eager=True,
    ),
) -> None:
    # A root callback makes Typer build a group, whose commands LazyGroup supplies.
    pass


if __name__ == "__main__":
    app()
