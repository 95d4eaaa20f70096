"""Bad user input (issue 22, item 14): a config or experiment path that is a FIFO, a device,
a directory or a huge file; numbers of the wrong type; matrices and settings beyond the
limits. Each is one readable error line, exit code 2, and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from econbench.agents.models.settings import ModelSettings
from econbench.cli import app
from econbench.coffee.config import FIRMS
from econbench.runs.coffee.config import RunConfig
from econbench.runs.experiment import ExperimentError, load_plan
from econbench.runs.limits import MAX_BUDGET, MAX_ENTRIES, MAX_TASKS
from econbench.runs.user_files import MAX_USER_FILE_BYTES, UserFileError, read_user_text

runner = CliRunner()
CLI = [sys.executable, "-m", "econbench.cli"]
R0 = ["allo", "run", "--framing", "r0", "--policy", "eager", "--episodes", "1"]


def invoke(args: list[str], seconds: float = 20.0) -> Any:
    """Run the command line in-process, failing (not hanging) if it does not return."""
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(runner.invoke(app, args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{args} still running after {seconds} s"
    return box[0]


def error_line(result: Any) -> str:
    """The command's stderr, which must be exactly one ``error: …`` line."""
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.output
    return lines[0]


# -------------------------------------------------------------------- the files a user names


def special_file(tmp_path: Path, kind: str) -> Path:
    """A path of ``kind`` that no command may read as a TOML file."""
    path = tmp_path / f"{kind}.toml"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading blocks until a writer comes: never here
    elif kind == "fifo-link":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        path.write_text("# padding\n" * (MAX_USER_FILE_BYTES // 10 + 1))  # valid TOML
    elif kind == "device":
        path = Path("/dev/null")  # reads as empty: a command that took it would run defaults
    return path


KINDS = {
    "fifo": "is a FIFO (named pipe)",
    "fifo-link": "is a FIFO (named pipe)",
    "directory": "is a directory",
    "huge": "is larger than 1 MiB",
    "device": "is a character device",
}
COMMANDS = {
    "coffee run --config": lambda path, out: ["coffee", "run", "--config", str(path), "--out", out],
    "coffee headroom --config": lambda path, out: ["coffee", "headroom", "--config", str(path)],
    "allo run --config": lambda path, out: [*R0, "--config", str(path), "--out", out],
    "sweep": lambda path, out: ["sweep", str(path), "--out", out],
    "sweep --dry-run": lambda path, out: ["sweep", str(path), "--dry-run", "--out", out],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_special_or_huge_file_is_one_line_and_writes_nothing(
    tmp_path: Path, command: str, kind: str
) -> None:
    if kind == "device" and not Path("/dev/null").is_char_device():
        pytest.skip("no /dev/null here")
    path = special_file(tmp_path, kind)
    out = tmp_path / "out"
    line = error_line(invoke(COMMANDS[command](path, str(out))))
    assert KINDS[kind] in line and str(path) in line
    assert not out.exists()
    if kind.startswith("fifo"):
        assert path.is_fifo(), "the FIFO is left as it was"


@pytest.mark.parametrize("kind", ["fifo", "directory", "huge"])
@pytest.mark.parametrize("key", ["base", "variant"])
def test_an_experiment_naming_a_special_file_is_one_error(
    tmp_path: Path, key: str, kind: str
) -> None:
    path = special_file(tmp_path, kind)
    experiment = tmp_path / "exp.toml"
    named = f'base = "{path.name}"\n' if key == "base" else ""
    matrix = f'[matrix]\nvariants = ["{path.name}"]\n' if key == "variant" else ""
    experiment.write_text(f'name = "x"\nbenchmark = "coffee"\n{named}{matrix}')
    box: list[BaseException] = []

    def load() -> None:
        try:
            load_plan(experiment, check=False)
        except BaseException as exc:
            box.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "reading the experiment's files hung"
    [exc] = box
    assert isinstance(exc, ExperimentError), repr(exc)
    assert f"{key} file {path} {KINDS[kind]}" in str(exc) and "\n" not in str(exc)


def test_an_endless_device_is_refused_before_a_byte_is_read() -> None:
    if not Path("/dev/zero").is_char_device():
        pytest.skip("no /dev/zero here")
    with pytest.raises(UserFileError, match="is a character device"):
        read_user_text("/dev/zero")


def test_a_file_just_under_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "padded.toml"
    text = "# x\n" * (MAX_USER_FILE_BYTES // 4)
    path.write_text(text)
    assert read_user_text(path) == text


# -------------------------------------------------------------------- types


def numbers(doc: object, path: tuple = ()) -> Iterator[tuple[tuple, int | float]]:
    """Every number in a JSON-like document, with its path (booleans are not numbers)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from numbers(value, (*path, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from numbers(value, (*path, index))
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        yield path, doc


def replaced(doc: object, path: tuple, value: object) -> object:
    """``doc`` with the value at ``path`` replaced (the rest shared, not copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: replaced(doc[head], rest, value)}
    assert isinstance(doc, list)
    return [replaced(v, rest, value) if i == head else v for i, v in enumerate(doc)]


def converted(model: type[BaseModel], doc: dict[str, Any]) -> list[str]:
    """Each number of the valid ``doc`` that ``model`` still takes when TOML spells it
    ``true``, or, for an integer, as the same value with a ``.0`` (both must be refused)."""
    assert model.model_validate(doc).model_dump(mode="json", by_alias=True) == doc
    accepted = []
    for path, value in numbers(doc):
        for bad in (True, float(value)) if isinstance(value, int) else (True,):
            try:
                model.model_validate(replaced(doc, path, bad))
            except ValidationError:
                continue
            accepted.append(f"{'.'.join(map(str, path))} = {bad!r}")
    return accepted


SETTINGS = ModelSettings(
    temperature=0.5, max_tokens=100, thinking_budget=10, context_window=1000, timeout_s=10.0,
    max_concurrency=2, compaction_threshold=0.5, max_retries=1, max_backoff_s=1.0, top_p=0.5,
    seed=1,
)  # fmt: skip
"""Every number of the per-model settings set, so the walks below reach them all."""


def test_no_number_of_a_run_config_is_converted() -> None:
    """``seed = true`` and ``days = 2.0`` ran as seed 1 and 2 days: walk a complete config,
    economy and model settings included, so no field, present or future, converts."""
    doc = RunConfig(models={"openai/gpt-5.5": SETTINGS}).model_dump(mode="json", by_alias=True)
    assert sum(1 for _ in numbers(doc)) > 50  # the walk reached the economy and the settings
    assert converted(RunConfig, doc) == []


@pytest.mark.parametrize("benchmark", ["coffee", "allo"])
def test_no_number_of_an_experiment_is_converted(benchmark: str) -> None:
    from econbench.runs.benchmark import get_benchmark

    schema = get_benchmark(benchmark).experiment_schema()
    common = {"name": "x", "benchmark": benchmark, "models": {"openai/gpt-5.5": SETTINGS}}
    if benchmark == "coffee":
        raw = {**common, "seeds": [1, 2], "days": 5, "matrix": {"roaster_A": ["heuristic"]}}
    else:
        matrix = {"framings": ["r0"], "policies": ["eager"], "budgets": [1, 3], "costs": [0.5]}
        raw = {**common, "episodes": 2, "seed": 7, "matrix": matrix}
    doc = schema.model_validate(raw).model_dump(mode="json", by_alias=True)
    assert converted(schema, doc) == []


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("[run]\nseed = true\n", "'seed'"),
        ("[run]\ndays = 2.0\n", "'days'"),
        ("[economy]\nshipping_days = 1.0\n", "economy.shipping_days"),
        ("[economy]\nfestival_days = [40, 53.0]\n", "economy.festival_days.1"),
        ("[economy]\nship_loss_prob = false\n", "economy.ship_loss_prob"),
        ('[economy]\nfestival_factor = "3"\n', "economy.festival_factor"),
        ("[models.'openai/gpt-5.5']\nmax_tokens = true\n", "max_tokens"),
        ("[models.'openai/gpt-5.5']\nmax_retries = 2.0\n", "max_retries"),
    ],
)
def test_a_number_of_the_wrong_type_in_a_config_is_refused(
    tmp_path: Path, table: str, expected: str
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(table)
    out = tmp_path / "out"
    line = error_line(invoke(["coffee", "run", "--config", str(config), "--out", str(out)]))
    assert expected in line
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["coffee", "run", "--days", "2.0"],
        ["coffee", "run", "--seed", "true"],
        ["coffee", "run", "--seed", "1e3"],
        ["coffee", "run", "--seed", "9" * 5000],  # int() itself refuses over 4,300 digits
        [*R0[:-2], "--episodes", "2.0"],
        [*R0, "--tasks", "60.0"],
        [*R0, "--budget", "3.0"],
        ["allo", "sweep", "--workers", "2.0"],
        ["sweep", "x.toml", "--retries", "1.5"],
        ["view", ".", "--port", "80.0", "--no-open"],
    ],
)
def test_an_integer_option_takes_whole_numbers_only(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out"
    result = invoke([*args, "--out", str(out)] if args[0] != "view" else args)
    assert result.exit_code == 2, result.output
    assert "Invalid value for" in result.output
    assert "is not a whole number" in result.output or "is too large" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()


# -------------------------------------------------------------------- bounds


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tasks", "10000000"], f"--tasks must be at most {MAX_TASKS:,}, got 10,000,000"),
        (["--budget", "1000000"], f"--budget must be at most {MAX_BUDGET:,}, got 1,000,000"),
        (["--seed", str(2**63 - 1), "--episodes", "2"], "seeds must be at most"),
    ],
)
def test_allo_run_refuses_settings_beyond_the_limits(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    out = tmp_path / "out"
    base = R0 if "--episodes" not in args else R0[:-2]
    assert expected in error_line(invoke([*base, *args, "--out", str(out)]))
    assert not out.exists()


def test_allo_run_and_experiment_files_share_the_budget_limit(tmp_path: Path) -> None:
    experiment = tmp_path / "exp.toml"
    for budget, accepted in ((MAX_BUDGET, True), (MAX_BUDGET + 1, False)):
        out = tmp_path / f"b{budget}"
        result = invoke([*R0, "--budget", str(budget), "--quiet", "--out", str(out)])
        assert (result.exit_code == 0) is accepted, result.output
        experiment.write_text(
            'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r0"]\n'
            f'policies = ["eager"]\nbudgets = [{budget}]\n'
        )
        try:
            load_plan(experiment, check=False)
            file_accepted = True
        except ExperimentError as exc:
            assert f"at most {MAX_BUDGET}" in str(exc)
            file_accepted = False
        assert file_accepted is accepted


def test_allo_sweep_beyond_the_budget_limit_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["allo", "sweep", "--policies", "eager", "--costs", "0", "--budgets", "5000"]
    assert "--budget must be at most" in error_line(invoke([*args, "--out", str(out)]))
    assert not out.exists()


def test_allo_sweep_refuses_too_many_cells_before_building_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cells(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a cell was built")

    monkeypatch.setattr("econbench.runs.allo.cli.CellSpec", no_cells)
    budgets = ",".join(str(b) for b in range(1, 101))
    costs = ",".join(str(k) for k in range(101))
    out = tmp_path / "out"
    args = ["allo", "sweep", "--policies", "eager", "--budgets", budgets, "--costs", costs]
    line = error_line(invoke([*args, "--out", str(out)]))
    assert f"10,100 cells, more than the {MAX_ENTRIES:,}" in line
    assert not out.exists()


def coffee_matrix(policies_per_firm: int, firms: int) -> str:
    """An experiment whose matrix gives ``firms`` firms as many policies each, over 3 seeds."""
    policies = ", ".join(f'"markup:{i}"' for i in range(policies_per_firm))
    axes = "".join(f"{firm} = [{policies}]\n" for firm in FIRMS[:firms])
    return f'name = "big"\nbenchmark = "coffee"\nseeds = "1-3"\n[matrix]\n{axes}'


def test_a_coffee_matrix_over_the_limit_is_refused_before_an_entry_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_entries(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an entry was built")

    monkeypatch.setattr("econbench.runs.coffee.experiment._coffee_config", no_entries)
    experiment = tmp_path / "exp.toml"
    experiment.write_text(coffee_matrix(59, 2))  # 59 × 59 × 3 seeds = 10,443 runs
    with pytest.raises(ExperimentError, match=r"expands to 10,443 runs, more than the 10,000"):
        load_plan(experiment, check=False)


def test_an_allo_matrix_over_the_limit_is_refused_before_a_cell_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cells(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a cell was built")

    monkeypatch.setattr("econbench.runs.allo.experiment.CellSpec", no_cells)
    budgets = ", ".join(str(b) for b in range(1, 51))
    costs = ", ".join(str(k) for k in range(101))
    experiment = tmp_path / "exp.toml"
    experiment.write_text(
        'name = "big"\nbenchmark = "allo"\n[matrix]\nframings = ["r0", "r1"]\n'
        f'policies = ["eager"]\nbudgets = [{budgets}]\ncosts = [{costs}]\n'
    )
    with pytest.raises(ExperimentError, match=r"expands to 10,100 cells, more than the 10,000"):
        load_plan(experiment, check=False)


def test_the_allo_cell_count_is_the_number_of_cells_built(tmp_path: Path) -> None:
    """Rungs in any case and skins of rungs other than R0: the count before
    expansion dedups as the expansion does, so the limit refuses only what is too large."""
    from econbench.runs.allo.experiment import cell_count

    experiment = tmp_path / "exp.toml"
    experiment.write_text(
        'name = "x"\nbenchmark = "allo"\n[matrix]\nframings = ["r0", "R0", "r1", "r2"]\n'
        'policies = ["eager", "wait:2"]\nskins = ["default", "chest", "quiver"]\n'
        "budgets = [1, 3]\ncosts = [0, 10.0]\n"
    )
    plan = load_plan(experiment, check=False)
    assert len(plan.entries) == cell_count(plan.experiment.matrix) == (3 + 1 + 1) * 2 * 2 * 2


def test_a_sixty_million_run_dry_run_errors_at_once(tmp_path: Path) -> None:
    """The issue's case, through a real process: refused from the axes' lengths at once.
    The process may use at most 1 GiB (expanding the matrix took minutes and gigabytes), so
    a regression fails fast with a MemoryError instead of taking the machine down."""
    resource = pytest.importorskip("resource")

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    experiment = tmp_path / "big.toml"
    experiment.write_text(coffee_matrix(20, 6))  # 20⁶ × 3 seeds = 192,000,000 runs
    out = tmp_path / "sweep"
    done = subprocess.run(
        [*CLI, "sweep", str(experiment), "--dry-run", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        preexec_fn=cap_memory,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {experiment}: the matrix expands to 192,000,000 runs, more than the "
        f"{MAX_ENTRIES:,} one experiment may hold; shorten its axes or split it into several "
        "experiments"
    ]
    assert done.stdout == "" and not out.exists()
