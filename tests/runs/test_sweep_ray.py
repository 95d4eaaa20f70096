"""``econbench sweep --backend ray`` on a local Ray instance: the same run files as the local
backend, and the same skip-on-rerun. Ray starts once for the module (it takes seconds)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import ray  # required: the dev install (and CI) has the ray extra
from rich.console import Console

from econbench.runs.experiment import load_plan
from econbench.runs.layout import read_json
from econbench.runs.sweep import SweepOptions, run_sweep

RUN_FILES = (
    "config.json",
    "events.jsonl",
    "daily.jsonl",
    "episodes.jsonl",
    "summary.json",
    "checkpoint.json",
    "progress.json",
)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module; the sweep joins it instead of starting its own."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def sweep(path: Path, out: Path, backend: str):
    options = SweepOptions(out=out, workers=2, backend=backend, poll_s=0.05)
    return run_sweep(load_plan(path), options, console=Console(file=io.StringIO()))


@pytest.mark.parametrize(
    "experiment",
    [
        'name = "r"\nbenchmark = "coffee"\nseeds = [1, 2]\ndays = 4\n'
        '[matrix]\nroaster_A = ["heuristic"]\n',
        'name = "r"\nbenchmark = "allo"\nepisodes = 3\n'
        '[matrix]\nframings = ["r0"]\npolicies = ["eager", "wait:2"]\n',
    ],
    ids=["coffee", "allo"],
)
def test_ray_and_local_backends_write_identical_runs(local_ray, tmp_path, experiment) -> None:
    path = tmp_path / "e.toml"
    path.write_text(experiment, encoding="utf-8")
    on_ray = sweep(path, tmp_path / "ray", "ray")
    assert on_ray.exit_code == 0
    assert [e.status for e in on_ray.entries] == ["completed", "completed"]
    assert ray.is_initialized()  # the sweep joined the module's instance and left it running
    local = sweep(path, tmp_path / "local", "local")
    assert local.exit_code == 0
    for entry in on_ray.entries:
        a, b = tmp_path / "ray" / "runs" / entry.id, tmp_path / "local" / "runs" / entry.id
        written = [name for name in RUN_FILES if (a / name).exists()]
        assert written and written == [name for name in RUN_FILES if (b / name).exists()]
        for name in written:
            assert (a / name).read_bytes() == (b / name).read_bytes(), (entry.id, name)
        meta_a, meta_b = read_json(a / "meta.json"), read_json(b / "meta.json")
        assert meta_a.pop("created_at") and meta_b.pop("created_at")
        assert meta_a == meta_b
        log = (tmp_path / "ray" / "logs" / f"{entry.id}.log").read_text()
        assert "(ray)" in log and "completed" in log
    assert read_json(tmp_path / "ray" / "sweep.json") == read_json(
        tmp_path / "local" / "sweep.json"
    )
    again = sweep(path, tmp_path / "ray", "ray")
    assert [e.action for e in again.entries] == ["skipped", "skipped"]
