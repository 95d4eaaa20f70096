"""``econbench view PATH``: serve the trajectory viewer for a run, a sweep or a runs folder."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from econbench.runs.viewer import Catalog, ViewerPathError, ViewerServer


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def view_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="A CoffeeBench run directory, an AlloBench cell, a sweep, or a folder of runs."
        ),
    ],
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (0: pick a free one).", min=0, max=65535)
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in the default browser.")
    ] = True,
) -> None:
    """Browse runs in a local web page (127.0.0.1 only); it follows runs still being written."""
    try:
        catalog = Catalog(path)
    except ViewerPathError as exc:
        raise _fail(str(exc)) from None
    try:
        server = ViewerServer(catalog, port=port)
    except OSError as exc:
        raise _fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    runs = len(catalog.scan())
    typer.echo(f"Viewing {runs} run(s) under {path} at {server.url}  (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.server_close()


def register(app: typer.Typer) -> None:
    """Add ``view`` to the top-level command line."""
    app.command("view")(view_command)
