"""``econbench view PATH --bundle DIR``: the viewer as static files, to share or publish.

The bundle is the page plus one JSON file for every API answer the page can ask for, written
through the same :class:`~econbench.runs.viewer.server.Api` the live server uses, so a bundle
shows exactly what ``econbench view`` shows of finished runs. Any static file server serves
it (``python -m http.server -d DIR``, GitHub Pages, an S3 bucket); browsers refuse ``fetch``
from ``file://`` pages, so it cannot be opened as a plain file.

An answer's address maps to a file name the page computes the same way (``bundle_name``):
``/api/run/ID/transcript?firm=F&day=3`` is ``data/run/ID/transcript/day-3/firm-F.json``.
A model's requests repeat the whole conversation each time, so a bundle keeps each request's
new messages only (from ``new_from``): every message is written once, in the request that
first sent it, and the page says so where it folds the history.

Nothing is polled in a bundle and search (which needs the server) is not offered.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from econbench.jsonio import json_line
from econbench.runs.viewer.data import Catalog, RunEntry
from econbench.runs.viewer.record_data import RecordData, RecordUnavailable
from econbench.runs.viewer.server import SECURITY_HEADERS, Api

SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""Firm and agent names that become parts of a file name (others are left out)."""


class BundleError(ValueError):
    """The bundle cannot be written where asked."""


@dataclass
class BundleStats:
    runs: int = 0
    files: int = 0
    bytes: int = 0


def bundle_name(parts: list[str], query: dict[str, Any] | None = None) -> str:
    """The file of one API answer: path parts, then ``key-value`` per query key, sorted."""
    tail = [f"{key}-{value}" for key, value in sorted((query or {}).items())]
    return "data/" + "/".join([*parts, *tail]) + ".json"


class BundleWriter:
    """Writes the page and every answer for the runs of one catalog into ``out``."""

    def __init__(self, catalog: Catalog, out: Path) -> None:
        self.catalog = catalog
        self.api = Api(catalog)
        self.out = out
        self.stats = BundleStats()

    def write(self) -> BundleStats:
        self._prepare()
        self._page()
        runs = self.catalog.scan()
        self._put(["runs"], None, self.api.handle(["runs"], {}))
        for entry in runs:
            self._run(entry)
            self.stats.runs += 1
        return self.stats

    def _prepare(self) -> None:
        out = self.out
        if out.exists() and not out.is_dir():
            raise BundleError(f"{out} exists and is not a directory")
        if out.exists() and any(out.iterdir()):
            if not (out / "index.html").is_file() or not (out / "data").is_dir():
                raise BundleError(f"{out} is not empty and holds no earlier bundle")
            shutil.rmtree(out / "data")  # an earlier bundle: written afresh
        out.mkdir(parents=True, exist_ok=True)

    def _page(self) -> None:
        static = resources.files("econbench.runs.viewer").joinpath("static")
        html = static.joinpath("index.html").read_text(encoding="utf-8")
        policy = SECURITY_HEADERS["Content-Security-Policy"].replace(
            "; frame-ancestors 'none'",
            "",  # not honoured in a meta tag
        )
        html = html.replace('<html lang="en">', '<html lang="en" data-bundle="1">', 1)
        html = html.replace(
            '<meta charset="utf-8">',
            f'<meta charset="utf-8">\n  <meta http-equiv="Content-Security-Policy" '
            f'content="{policy}">',
            1,
        )
        html = html.replace('"/static/', '"static/')
        self._write("index.html", html.encode("utf-8"))
        for name in ("app.js", "style.css"):
            self._write(f"static/{name}", static.joinpath(name).read_bytes())

    def _run(self, entry: RunEntry) -> None:
        key = entry.run_id
        self._put(["run", key], None, self.api.handle(["run", key], {}))
        entry.data.bundle(lambda parts, query: self._ask(entry, parts, query), SAFE_NAME)
        self._calls(entry)

    def _ask(self, entry: RunEntry, parts: list[str], query: dict[str, Any] | None = None) -> Any:
        body = self.api.handle(
            ["run", entry.run_id, *parts], {k: [str(v)] for k, v in (query or {}).items()}
        )
        self._put(["run", entry.run_id, *parts], query, body)
        return body

    def _calls(self, entry: RunEntry) -> None:
        """Each request's new messages (and the reply), page by page as the API pages them."""
        record = RecordData(entry.ref.path)
        if not record.available():
            return
        try:
            agents = record.agents()["agents"]
        except RecordUnavailable:
            return
        for agent in agents:
            name = agent["agent"]
            if not SAFE_NAME.match(name):
                continue
            for n in range(agent["calls"]):
                start: int | None = 0
                while start is not None:
                    body = record.call(name, n, start)
                    if body is None:
                        break
                    new_from = body["new_from"]
                    body["messages"] = [m for m in body["messages"] if m["i"] >= new_from]
                    body["bundle_delta"] = True
                    query = {"agent": name, "n": n, "from": start}
                    self._put(["run", entry.run_id, "call"], query, body)
                    start = body["next"]

    def _put(self, parts: list[str], query: dict[str, Any] | None, body: Any) -> None:
        self._write(bundle_name(parts, query), json_line(body).encode("utf-8"))

    def _write(self, rel: str, data: bytes) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.stats.files += 1
        self.stats.bytes += len(data)


def write_bundle(root: Path, out: Path) -> BundleStats:
    """The viewer of the runs under ``root`` as static files in ``out``."""
    return BundleWriter(Catalog(root), out).write()
