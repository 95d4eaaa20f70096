"""Experiment files: every number has a finite range, so a sweep never starts a run that a
value out of range would crash hours later."""

from __future__ import annotations

from pathlib import Path

import pytest

from econbench.runs.experiment import ExperimentError, load_plan

ALLO = 'name = "x"\nbenchmark = "allo"\n{top}[matrix]\nframings = ["r0"]\npolicies = ["eager"]\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ALLO.format(top="") + "budgets = [5000]\n", "at most 1000"),
        (ALLO.format(top="") + "costs = [inf]\n", "every cost"),
        (ALLO.format(top="seed = 9223372036854775807\nepisodes = 2\n"), "seed"),
        (ALLO.format(top="seeds = [1, 9223372036854775808]\n"), "seeds"),
        ('name = "c"\nbenchmark = "coffee"\nseeds = [9223372036854775808]\n', "seeds"),
        ('name = "c"\nbenchmark = "coffee"\ndays = 100000\n', "days"),
        ('name = "c"\nbenchmark = "coffee"\nbase = "base.toml"\n', "festival_factor"),
    ],
)
def test_out_of_range_numbers_are_one_error(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "base.toml").write_text("[economy]\nfestival_factor = inf\n")
    path = tmp_path / "exp.toml"
    path.write_text(text)
    with pytest.raises(ExperimentError) as info:
        load_plan(path, check=False)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)
