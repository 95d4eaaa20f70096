"""The ``econbench`` command line: one sub-application per benchmark."""

from __future__ import annotations

import typer

from econbench.allo.cli import app as allo_app
from econbench.coffee.cli import app as coffee_app
from econbench.hf.models_cli import register as register_models
from econbench.runs.replay_cli import register as register_replay
from econbench.runs.report_cli import register as register_report
from econbench.runs.resume_cli import register as register_resume
from econbench.runs.sweep_cli import register as register_sweep
from econbench.runs.viewer_cli import register as register_view

app = typer.Typer(
    help="econbench: CoffeeBench and AlloBench, LLM agents making economic decisions.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(coffee_app, name="coffee", help="CoffeeBench: the 90-day coffee economy.")
app.add_typer(allo_app, name="allo", help="AlloBench: online tool allocation.")
register_resume(app)
register_view(app)
register_report(app)
register_replay(app)
register_sweep(app)
register_models(app)


if __name__ == "__main__":
    app()
