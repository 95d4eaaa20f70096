"""The Ray backend of ``econbench sweep``: each entry a Ray task, on a local or remote cluster.

``econbench sweep EXPERIMENT.toml --backend ray`` starts a private local Ray instance with
``--workers`` CPUs; ``--ray-address ADDR`` (``auto``, ``ray://host:10001``, ``host:6379``)
joins an existing cluster instead. Each task runs :func:`econbench.runs.worker.execute` —
the very routine of the local backend's worker processes — inside the Ray worker process, so
the two backends write identical run directories.

Requirements on a multi-node cluster:

- the sweep directory (``--out``) must be on storage every node sees **at the same path**
  (NFS, a shared volume): tasks read ``sweep.json`` and write their run directories there;
- every node needs econbench (same version) with the ``ray`` extra:
  ``pip install 'econbench[ray]'``;
- API keys must be in each node's environment (or a ``.env`` file in the worker's working
  directory); they are never sent with the task.

Stopping a task (the cost limit, Ctrl-C) kills its worker process with
``ray.cancel(force=True)``; the run keeps its checkpoint and resumes next time.
"""

from __future__ import annotations

import logging
import signal
from contextlib import redirect_stderr, redirect_stdout, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from econbench.runs.worker import (
    EXIT_FAILED,
    EXIT_USAGE,
    OUTCOME_TAG,
    Outcome,
    execute,
    log_path,
)


class RayUnavailableError(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(
            "the Ray backend needs Ray, which is not installed: pip install 'econbench[ray]'"
        ) from None
    return ray


def run_entry_task(sweep_dir: str, entry_id: str, cache: str | None, attempt: int) -> dict:
    """The body of one Ray task: start or resume the entry, its output into the entry's log
    (the same file the local backend writes), and return the outcome."""
    import json

    log = log_path(Path(sweep_dir), entry_id)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as fh, redirect_stdout(fh), redirect_stderr(fh):
        print(f"=== attempt {attempt} at {datetime.now(UTC).isoformat(timespec='seconds')} (ray)")
        try:
            outcome = execute(Path(sweep_dir), entry_id, Path(cache) if cache else None)
        except LookupError as exc:
            outcome = Outcome(EXIT_USAGE, "failed", str(exc))
        if outcome.error:
            print(f"error: {outcome.error}")
        print(f"{OUTCOME_TAG} {json.dumps(outcome.to_dict())}", flush=True)
    return outcome.to_dict()


def _restore_sigterm(handler: Any) -> None:
    """``ray.init`` installs a native SIGTERM handler that kills the driver at once; put
    back the sweep's own (stop the tasks, write the summary, then exit)."""
    if callable(handler):
        with suppress(ValueError):  # not the main thread: nothing to restore there
            signal.signal(signal.SIGTERM, handler)


class RayBackend:
    """Entries as Ray tasks; ``wait`` polls them, ``stop`` force-cancels one."""

    def __init__(
        self,
        sweep_dir: Path,
        *,
        workers: int,
        address: str | None = None,
        cache: Path | None = None,
    ) -> None:
        ray = import_ray()
        self._ray = ray
        self.sweep_dir = str(Path(sweep_dir).resolve())
        self.cache = str(cache.resolve()) if cache is not None else None
        self._owns = False
        sigterm = signal.getsignal(signal.SIGTERM)
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.ERROR,
            }
            try:
                if address:
                    ray.init(address=address, **options)
                else:
                    ray.init(num_cpus=workers, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray instance"
                raise RayUnavailableError(f"cannot start or reach {where}: {exc}") from None
            self._owns = True
            _restore_sigterm(sigterm)
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_entry_task)
        self._refs: dict[str, Any] = {}

    def start(self, entry_id: str, attempt: int) -> None:
        self._refs[entry_id] = self._task.remote(self.sweep_dir, entry_id, self.cache, attempt)

    def wait(self, timeout: float) -> list[tuple[str, Outcome]]:
        if not self._refs:
            return []
        ray = self._ray
        refs = list(self._refs.values())
        ready, _ = ray.wait(refs, num_returns=1, timeout=timeout)
        if not ready:
            return []
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        by_ref = {ref: entry_id for entry_id, ref in self._refs.items()}
        done = []
        for ref in ready:
            entry_id = by_ref[ref]
            del self._refs[entry_id]
            try:
                outcome = Outcome.from_dict(ray.get(ref))
            except Exception as exc:  # the worker process died, or Ray failed the task
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                outcome = Outcome(
                    EXIT_FAILED, "failed", f"the Ray task failed: {type(exc).__name__}: {first}"
                )
            done.append((entry_id, outcome))
        return done

    def stop(self, entry_id: str) -> None:
        ref = self._refs.pop(entry_id, None)
        if ref is not None:
            self._ray.cancel(ref, force=True)

    def close(self) -> None:
        for entry_id in list(self._refs):
            self.stop(entry_id)
        if self._owns:
            self._ray.shutdown()
