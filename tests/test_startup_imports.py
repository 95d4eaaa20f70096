"""What an all-scripted ``coffee run`` and ``econbench --help`` leave out of ``sys.modules``.

A scripted run needs the economy (numpy for its seeded draws), its policies and the run
directory's writers; the model side (registry, providers, prices, retries, ``.env``), Rich
under ``--quiet`` and ``tomllib`` without ``--config`` are imported only where they are used.
Each check runs the CLI's ``main`` in a fresh interpreter and reads ``sys.modules`` at its
end, so an import that creeps back onto the path fails here (these are not timings).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MODEL_SIDE = [
    "econbench.agents.models.registry",
    "econbench.agents.models.cache",
    "econbench.agents.models.record",
    "econbench.agents.models.wraps",
    "econbench.agents.models.compat",
    "econbench.agents.models.scripted",
    "econbench.agents.models.openai_provider",
    "econbench.agents.models.anthropic_provider",
    "econbench.agents.models.gemini_provider",
    "econbench.agents.models.hf",
    "econbench.coffee.prompts",
    "econbench.coffee.render",
    "openai",
    "anthropic",
    "google.genai",
    "httpx",
    "dotenv",
]
"""Modules only a model-played firm needs."""

NOT_FOR_A_QUIET_SCRIPTED_RUN = [
    *MODEL_SIDE,
    "rich",  # --quiet prints one line with typer.echo
    "tomllib",  # no --config file
    "econbench.coffee.headroom",  # the headroom command's
    "asyncio",  # only model-played firms run concurrently
    "econbench.agents.react",  # scripted firms' zero usage comes from agents.stats
    "econbench.allo",
    "econbench.runs.allo",
    "sqlite3",
    "pandas",
    "matplotlib",
    "gymnasium",
    "torch",
]
"""Absent at the end of ``coffee run --agent default=scripted --quiet`` (a package counts
with its submodules)."""

NOT_FOR_THE_ROOT_HELP = [
    "pydantic",
    "rich",
    "numpy",
    "asyncio",
    "ssl",
    "email",
    "dotenv",
    "tomllib",
    "econbench.coffee",
    "econbench.runs",
    "econbench.agents",
]
"""Absent after ``econbench --help``: it lists summaries, so no command module is loaded."""


def modules_after(args: list[str], cwd: Path) -> set[str]:
    """``sys.modules`` of a fresh interpreter after ``econbench ARGS`` (its exit code 0)."""
    script = (
        "import json, sys\n"
        "from econbench.cli import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def present(loaded: set[str], packages: list[str]) -> list[str]:
    """The modules of ``loaded`` that are one of ``packages`` or inside one."""
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in packages))


def test_a_quiet_scripted_coffee_run_loads_no_model_side_rich_or_toml(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["coffee", "run", "--agent", "default=scripted", "--days", "2", "--quiet"]
    loaded = modules_after([*args, "--out", str(out)], tmp_path)
    assert (out / "summary.json").is_file()  # the run did play
    assert "econbench.coffee.sim" in loaded  # and the check reads the right process
    assert present(loaded, NOT_FOR_A_QUIET_SCRIPTED_RUN) == []


def test_a_config_file_loads_tomllib_and_a_shown_run_loads_rich(tmp_path: Path) -> None:
    # The lazy imports still happen where they are needed.
    config = tmp_path / "run.toml"
    config.write_text("[run]\ndays = 2\n\n[agents]\ndefault = 'scripted'\n", encoding="utf-8")
    args = ["coffee", "run", "--config", str(config), "--out", str(tmp_path / "run")]
    loaded = modules_after(args, tmp_path)
    assert {"tomllib", "rich.console", "rich.table"} <= loaded
    assert present(loaded, MODEL_SIDE) == []


def test_the_root_help_loads_no_command_pydantic_or_rich(tmp_path: Path) -> None:
    loaded = modules_after(["--help"], tmp_path)
    assert present(loaded, NOT_FOR_THE_ROOT_HELP) == []
