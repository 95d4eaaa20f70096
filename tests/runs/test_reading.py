"""The reading seam: benchmarks found by name, none imported before it is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from econbench.runs.reading import BENCHMARKS, reader_for


def test_every_benchmark_has_a_reader_named_after_it() -> None:
    assert BENCHMARKS == ("coffee", "allo")
    titles = {name: reader_for(name).title for name in BENCHMARKS}
    assert titles == {"coffee": "CoffeeBench", "allo": "AlloBench"}
    assert all(reader_for(name).name == name for name in BENCHMARKS)


def test_an_unknown_benchmark_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown benchmark 'chess'"):
        reader_for("chess")


def test_the_shared_readers_import_no_benchmark() -> None:
    code = (
        "import sys\n"
        "import econbench.runs.frames, econbench.runs.report, econbench.runs.viewer\n"
        "loaded = [m for m in sys.modules if m.split('.')[:2] in "
        "(['econbench', 'coffee'], ['econbench', 'allo'])\n"
        "          or m.split('.')[:3] in "
        "(['econbench', 'runs', 'coffee'], ['econbench', 'runs', 'allo'])]\n"
        "print(sorted(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_label_and_the_seed_come_from_the_benchmark() -> None:
    cell = {"framing": "r1", "policy": "wait:2", "budget": 3, "cost": 10.0, "seed": 4}
    assert reader_for("allo").label(cell) == "wait:2 r1 B=3 K=10"
    assert reader_for("allo").seed({"seed": 4}, cell) is None
    assert reader_for("coffee").seed({}, {"seed": 7}) == 7
    assert reader_for("coffee").seed({"seed": 8}, {"seed": 7}) == 8
    assert "seed" not in reader_for("coffee").identity({"seed": 7, "days": 3})
