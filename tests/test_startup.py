"""The command line loads what a command needs when it runs, and no more.

Each check runs a fresh interpreter and reads its ``sys.modules``: what a module imports is a
behaviour (a heavy SDK at start-up is a cost every command pays), so these are not timings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from econbench import cli

HEAVY = ["gymnasium", "openai", "anthropic", "google.genai", "pandas", "matplotlib", "torch"]
"""Packages no start-up path may import: each costs a tenth of a second to seconds."""


def loaded_after(code: str, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_loads_no_heavy_package_and_no_benchmark(tmp_path: Path) -> None:
    loaded = loaded_after("import econbench.cli", tmp_path)
    assert [m for m in HEAVY if m in loaded] == []
    assert sorted(m for m in loaded if m.startswith("econbench")) == ["econbench", "econbench.cli"]


def test_root_help_loads_no_command_module_and_no_rich_renderer(tmp_path: Path) -> None:
    code = "from econbench.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass"
    loaded = loaded_after(code, tmp_path)
    assert sorted(m for m in loaded if m.startswith("econbench")) == ["econbench", "econbench.cli"]
    assert "typer.rich_utils" not in loaded


def test_a_scripted_coffee_run_loads_no_allobench_gymnasium_or_sdk(tmp_path: Path) -> None:
    code = (
        "from econbench.cli import app\n"
        "try:\n"
        f"    app(['coffee', 'run', '--days', '3', '--agent', 'default=scripted', '--quiet',"
        f" '--out', {str(tmp_path / 'run')!r}])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code"
    )
    loaded = loaded_after(code, tmp_path)
    assert (tmp_path / "run" / "summary.json").is_file()
    assert [m for m in HEAVY if m in loaded] == []
    foreign = ("econbench.allo", "econbench.runs.allo", "econbench.agents.models.hf")
    assert not any(m.startswith(foreign) for m in loaded)
    assert "rich.progress" not in loaded  # --quiet shows no bar


def test_allobench_registers_its_envs_and_loads_them_on_make(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import econbench.allo\n"
        "assert 'econbench.allo.gym.envs' not in sys.modules\n"
        "import gymnasium\n"
        "env = gymnasium.make('AlloBench-R0-v0', cost=3.0)\n"
        "obs, info = env.reset(seed=2000)\n"
        "assert obs.startswith('Draw 1 of 60'), obs\n"
        "assert gymnasium.spec('AlloBench-Features-v0') is not None"
    )
    loaded = loaded_after(code, tmp_path)
    assert "econbench.allo.gym.envs" in loaded  # made through the registered entry point


def test_allobench_after_gymnasium_registers_at_once(tmp_path: Path) -> None:
    code = (
        "import gymnasium\n"
        "import econbench.allo\n"
        "assert gymnasium.spec('AlloBench-R0-Counting-v0') is not None"
    )
    loaded_after(code, tmp_path)


def test_the_model_registry_imports_no_provider_sdk(tmp_path: Path) -> None:
    loaded = loaded_after("import econbench.agents.models.registry", tmp_path)
    assert [m for m in HEAVY if m in loaded] == []


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_the_root_help_summary_is_the_commands_own(name: str) -> None:
    # The root help lists summaries without importing the modules; they must not drift from
    # what each module declares (its help's first paragraph).
    command = cli.load_command(name)
    assert command.name == name
    own = (command.short_help or command.help or "").split("\n\n")[0].strip()
    assert own == cli.COMMANDS[name].summary


@pytest.mark.parametrize("args", [["--help"], []])
def test_root_help_lists_every_command_in_order(args: list[str]) -> None:
    result = CliRunner().invoke(cli.app, args, env={"COLUMNS": "200"})
    assert result.exit_code == (0 if args else 2)  # bare `econbench`: help and exit code 2
    lines = [line.split()[0] for line in result.output.splitlines() if line.startswith("  ")]
    listed = [name for name in lines if name in cli.COMMANDS]
    assert listed == list(cli.COMMANDS)
    for name, spec in cli.COMMANDS.items():  # each summary whole, never cut with "..."
        assert " ".join(spec.summary.split()) in " ".join(result.output.split()), name


def test_a_lazy_command_runs_and_an_unknown_one_is_refused() -> None:
    group = typer.main.get_command(cli.app)
    ctx = group.make_context("econbench", ["coffee", "--help"], resilient_parsing=True)
    assert group.get_command(ctx, "coffee").name == "coffee"
    assert group.get_command(ctx, "nope") is None
    result = CliRunner().invoke(cli.app, ["nope"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_version_prints_the_package_version_and_loads_no_command(tmp_path: Path) -> None:
    from econbench import __version__

    result = CliRunner().invoke(cli.app, ["--version"])
    assert result.exit_code == 0 and result.output == f"econbench {__version__}\n"
    code = (
        "from econbench.cli import app\ntry:\n    app(['--version'])\nexcept SystemExit:\n    pass"
    )
    loaded = loaded_after(code, tmp_path)
    assert sorted(m for m in loaded if m.startswith("econbench")) == ["econbench", "econbench.cli"]


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_no_help_text_loses_its_brackets(name: str) -> None:
    # Help is plain text: with Rich markup, "[run]" or "[models.…]" would print as nothing.
    command = cli.load_command(name)
    ctx = command.make_context(name, ["--help"], resilient_parsing=True)
    assert ctx.command.rich_markup_mode is None
    for sub in getattr(command, "commands", {}).values():
        assert sub.rich_markup_mode is None, sub.name
