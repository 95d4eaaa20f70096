"""The scripts in ``examples/`` run, with tiny sizes: what a newcomer copies must work."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_listed_in_the_examples_readme() -> None:
    listed = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert all(f"`{p.name}`" in listed for p in EXAMPLES.glob("*.py"))


def test_an_offline_coffee_run_then_its_summary_read_with_pandas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for roaster in ("heuristic", "passive"):
        out = tmp_path / roaster
        example("coffee_offline").main(["--days", "3", "--roaster", roaster, "--out", str(out)])
        assert (out / "summary.json").is_file()
    assert "roaster_A (passive) earned $" in capsys.readouterr().out
    example("read_summary").main([str(tmp_path)])
    shown = capsys.readouterr().out
    assert "roaster_A=heuristic" in shown and "roaster_A=passive" in shown


def test_an_allo_cell_with_a_reference_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cell"
    example("allo_reference_cell").main(
        ["--policy", "wait:2", "--episodes", "2", "--out", str(out)]
    )
    assert "wait:2 on r0: pooled score" in capsys.readouterr().out
    example("read_summary").main([str(out)])
    assert "wait:2" in capsys.readouterr().out
