"""``econbench view PATH``: serve the trajectory viewer for a run, a sweep or a runs folder."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from econbench.runs.limits import int_option
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
        int, typer.Option(help="Port on 127.0.0.1 (0: pick a free one).", **int_option(0, 65535))
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in the default browser.")
    ] = True,
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle",
            help="Write the viewer and the runs as static files to this folder (to share or "
            "publish; serve it with any static file server) instead of serving.",
        ),
    ] = None,
) -> None:
    """Browse runs in a local web page (127.0.0.1 only); it follows runs still being written."""
    try:
        catalog = Catalog(path)
    except ViewerPathError as exc:
        raise _fail(str(exc)) from None
    if bundle is not None:
        _write_bundle(catalog, bundle)
        return
    try:
        server = ViewerServer(catalog, port=port)
    except OSError as exc:
        raise _fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    runs = len(catalog.scan())
    waiting = "; runs show up as they are written" if runs == 0 else ""
    typer.echo(f"Viewing {runs} run(s) under {path}{waiting} at {server.url}  (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.server_close()


def _write_bundle(catalog: Catalog, out: Path) -> None:
    from econbench.runs.viewer.bundle import BundleError, BundleWriter

    try:
        stats = BundleWriter(catalog, out).write()
    except (BundleError, OSError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(
        f"Wrote {stats.runs} run(s) to {out}: {stats.files} files, {stats.bytes / 1e6:.1f} MB. "
        f"Serve it with: python -m http.server -d {out}"
    )


def register(app: typer.Typer) -> None:
    """Add ``view`` to the top-level command line."""
    app.command("view")(view_command)
