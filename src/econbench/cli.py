"""The ``econbench`` command line: one sub-application per benchmark."""

from __future__ import annotations

import typer

from econbench.allo.cli import app as allo_app
from econbench.coffee.cli import app as coffee_app

app = typer.Typer(
    help="econbench: CoffeeBench and AlloBench, LLM agents making economic decisions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(coffee_app, name="coffee", help="CoffeeBench: the 90-day coffee economy.")
app.add_typer(allo_app, name="allo", help="AlloBench: online tool allocation.")


if __name__ == "__main__":
    app()
