"""``econbench view --bundle``: the runs as static files, the same answers the server gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.runs.viewer_samples import allo_cell, coffee_run
from typer.testing import CliRunner

from econbench.cli import app
from econbench.runs.viewer import Catalog
from econbench.runs.viewer.bundle import BundleError, bundle_name, write_bundle
from econbench.runs.viewer.data import run_id
from econbench.runs.viewer.server import Api


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundle-samples")
    coffee_run(root / "coffee", days=3)
    allo_cell(root / "allo", episodes=2)
    return root


def read(out: Path, parts: list[str], query: dict | None = None) -> object:
    return json.loads((out / bundle_name(parts, query)).read_text(encoding="utf-8"))


def test_the_bundle_holds_the_answers_of_the_api(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    stats = write_bundle(samples, out)
    api = Api(Catalog(samples))
    coffee, allo = run_id("coffee"), run_id("allo")
    assert stats.runs == 2
    assert read(out, ["runs"]) == api.handle(["runs"], {})
    assert read(out, ["run", coffee, "day", "1"]) == api.handle(["run", coffee, "day", "1"], {})
    transcript = {"firm": "roaster_A", "day": 2}
    want = api.handle(["run", coffee, "transcript"], {"firm": ["roaster_A"], "day": ["2"]})
    assert read(out, ["run", coffee, "transcript"], transcript) == want
    assert read(out, ["run", allo, "episode", "1"]) == api.handle(["run", allo, "episode", "1"], {})
    html = (out / "index.html").read_text()
    assert 'data-bundle="1"' in html and 'src="static/app.js"' in html
    assert "Content-Security-Policy" in html and (out / "static" / "style.css").is_file()


def test_a_bundle_keeps_each_message_once(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    write_bundle(samples, out)
    coffee = run_id("coffee")
    first = read(out, ["run", coffee, "call"], {"agent": "roaster_A", "n": 0, "from": 0})
    second = read(out, ["run", coffee, "call"], {"agent": "roaster_A", "n": 1, "from": 0})
    assert isinstance(first, dict) and isinstance(second, dict)
    assert [m["i"] for m in first["messages"]] == list(range(first["total_messages"]))
    assert [m["i"] for m in second["messages"]] == list(
        range(second["new_from"], second["total_messages"])
    )
    assert second["bundle_delta"] is True


def test_a_bundle_is_written_afresh_but_never_over_other_files(
    samples: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b"
    write_bundle(samples, out)
    stale = out / "data" / "run" / "gone.json"
    stale.write_text("{}")
    write_bundle(samples, out)
    assert not stale.exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(BundleError, match="not empty"):
        write_bundle(samples, other)
    assert (other / "keep.txt").read_text() == "mine"


def test_view_bundle_on_the_command_line(samples: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["view", str(samples), "--bundle", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert "Wrote 2 run(s)" in result.output and "http.server" in result.output
    assert (tmp_path / "b" / "index.html").is_file()
