"""The runs the viewer serves: found by scanning one folder, named by opaque ids.

The page addresses a run by an id handed out by the scan, never by a path, so no URL can
reach a file outside the runs found (no path traversal). The folder is scanned again on
each listing, so the runs a live sweep adds appear; a run's status is re-read on each
request, so a run that finishes or stops shows it.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from econbench.runs import layout
from econbench.runs.reading import reader_for


class ViewerPathError(ValueError):
    """The folder given to the viewer holds nothing it can show."""


def run_id(rel: str) -> str:
    """A short, stable id for the run at ``rel`` (relative to the scanned folder)."""
    return hashlib.sha1(rel.encode("utf-8")).hexdigest()[:12]


def check_root(path: Path) -> Path:
    """``path`` if it is a directory: a run, a sweep or a folder of runs — maybe still empty,
    as a ``./runs`` folder is before the first run starts (the listing is rescanned, so runs
    show up as they are written)."""
    if not path.exists():
        raise ViewerPathError(f"{path} does not exist")
    if not path.is_dir():
        raise ViewerPathError(f"{path} is not a directory (give a run, sweep or runs folder)")
    return path


def sweep_of(root: Path) -> dict[str, Any] | None:
    """What the page shows of the sweep at ``root`` (its name and planned entries), if any."""
    if not layout.is_sweep_dir(root):
        return None
    doc = layout.read_json(root / layout.SWEEP)
    if not isinstance(doc, dict):
        return {"name": root.name, "entries": None}
    entries = doc.get("entries")
    return {
        "name": doc.get("name") or root.name,
        "benchmark": doc.get("benchmark"),
        "description": doc.get("description"),
        "entries": len(entries) if isinstance(entries, list) else None,
    }


@dataclass
class RunEntry:
    """One run found by the scan, with its incremental reader."""

    run_id: str
    rel: str
    ref: layout.RunRef
    config: dict[str, Any]
    data: Any
    """The benchmark's incremental reader (its reader's ``viewer_data``)."""

    def item(self) -> dict[str, Any]:
        """The run as a row of the run list."""
        group, name = place(self.rel, self.ref.path)
        return {
            "id": self.run_id,
            "rel": self.rel,
            "group": group,
            "name": name,
            **self.data.facets(self.config),
            "label": self.ref.label,
            "benchmark": self.ref.benchmark,
            "status": self.ref.status,
            "brief": brief(self.ref.benchmark, self.config, self.ref.meta),
            "seed": self.ref.meta.get("seed", self.config.get("seed")),
            "headline": self.data.headline(self.config, self.ref.summary),
        }

    def overview(self) -> dict[str, Any]:
        """The run's settings, metadata, summary and progress."""
        return {
            **self.item(),
            "path": str(self.ref.path),
            "meta": self.ref.meta,
            "config": self.config,
            "summary": self.ref.summary,
            "progress": self.progress(),
        }

    def progress(self) -> dict[str, Any] | None:
        """``progress.json`` as the runner last wrote it (done of total, cost so far)."""
        progress = layout.read_json(self.ref.path / layout.PROGRESS)
        return progress if isinstance(progress, dict) else None


def place(rel: str, path: Path) -> tuple[str, str]:
    """Where the run list shows a run: its folder's parent (relative to the scanned folder,
    ``""`` at the top) and its folder's name. Runs of a sweep share names (``seed_0`` in
    every cell), so the list groups them under the parent that tells them apart."""
    if rel in ("", "."):
        return "", path.name
    parent, _, name = rel.rpartition("/")
    return parent, name


def brief(benchmark: str, config: dict[str, Any], meta: dict[str, Any]) -> str:
    """A few words telling runs apart in the list (seed and policies, or framing and actor)."""
    return reader_for(benchmark).brief(config, meta)


def _stamp(run_dir: Path) -> tuple[tuple[int, int] | None, ...]:
    """Changes when the files behind a ``RunRef`` change."""
    out = []
    for name in (layout.META, layout.SUMMARY):
        try:
            st = (run_dir / name).stat()
            out.append((st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


class Catalog:
    """The runs under one folder, rescanned on demand (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.root = check_root(root)
        self._lock = threading.Lock()
        self._entries: dict[str, RunEntry] = {}
        self._stamps: dict[str, tuple[tuple[int, int] | None, ...]] = {}

    def scan(self) -> list[RunEntry]:
        """Every run now under the folder, in path order."""
        found = []
        with self._lock:
            for run_dir in layout.iter_run_dirs(self.root):
                rel = run_dir.relative_to(self.root).as_posix()
                entry = self._load(run_id(rel), rel, run_dir)
                if entry is not None:
                    found.append(entry)
            gone = set(self._entries) - {e.run_id for e in found}
            for key in gone:
                del self._entries[key]
                self._stamps.pop(key, None)
        return found

    def get(self, key: str) -> RunEntry | None:
        """The run with id ``key`` (status refreshed), or ``None``; never a path lookup."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry = self._load(key, entry.rel, entry.ref.path)
        if entry is None:
            entry = next((e for e in self.scan() if e.run_id == key), None)
        return entry

    def _load(self, key: str, rel: str, run_dir: Path) -> RunEntry | None:
        stamp = _stamp(run_dir)
        entry = self._entries.get(key)
        if entry is not None and self._stamps.get(key) == stamp:
            return entry
        try:
            ref = layout.load_ref(run_dir)
        except FileNotFoundError:
            self._entries.pop(key, None)
            return None
        if entry is None or entry.ref.benchmark != ref.benchmark:
            config = layout.read_json(run_dir / layout.CONFIG)
            data = reader_for(ref.benchmark).viewer_data(run_dir)
            entry = RunEntry(key, rel, ref, config if isinstance(config, dict) else {}, data)
        else:
            entry.ref = ref
            if not entry.config:
                config = layout.read_json(run_dir / layout.CONFIG)
                entry.config = config if isinstance(config, dict) else {}
        self._entries[key] = entry
        self._stamps[key] = stamp
        return entry
