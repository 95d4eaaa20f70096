"""Where a sample's econbench run directory lives, and whether the sample starts, continues
or re-uses it.

Runs go beside the Inspect log (or under ``-T out=DIR``)::

    <log dir>/econbench/<task>/<settings>/<eval>/<sample id>-epoch<N>/

``<settings>`` is a digest of what makes two samples the same experiment (the task's
arguments, the model and the model roles) and ``<eval>`` the Inspect eval set, or the eval
when there is no set. So ``econbench report`` and ``econbench view`` on an ``<eval>``
directory see exactly that eval's runs, and:

- Inspect retrying a sample (``--retry-on-error``, ``eval-set`` re-running a failed task)
  finds the run the failed attempt left and continues it from its checkpoint;
- ``inspect eval-retry`` (a new eval id) and a plain re-run of an interrupted eval find the
  unfinished run of the same settings, sample and epoch under an earlier eval and continue
  that one, rather than starting from day 0 (finished runs of earlier evals are never
  touched or re-used).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai.log._samples import sample_active  # the sample's eval, epoch and log file

from econbench.runs.resume import run_status

ROOT = "econbench"
"""The folder of the log directory (or of ``out``) holding the runs."""
Plan = Literal["start", "continue", "reuse"]
_UNFINISHED = ("stopped", "interrupted")


class RunDirError(RuntimeError):
    """The sample's run directory cannot be used (the message says why and what to do)."""


@dataclass(frozen=True)
class SamplePlace:
    """A sample's run directory and what to do there: ``start`` a run, ``continue`` an
    unfinished one, or ``reuse`` one this eval already finished (a retried scorer)."""

    run_dir: Path
    plan: Plan


def settings_digest(settings: Mapping[str, Any]) -> str:
    """A short digest of the settings that make samples comparable."""
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def place_sample(
    task: str, settings: Mapping[str, Any], sample_id: int | str, out: str | None
) -> SamplePlace:
    """The active sample's run directory and plan (see the module docstring)."""
    active = sample_active()
    if active is None:
        raise RunDirError("econbench's Inspect tasks place their runs from inside a sample")
    root = _root(out, active.log_location)
    eval_key = active.eval_set_id or active.eval_id
    settings_dir = root / ROOT / task / settings_digest(settings)
    name = _safe(f"{sample_id}-epoch{active.epoch}")
    own = settings_dir / _safe(eval_key) / name
    status = run_status(own)
    if status == "running":
        raise RunDirError(f"{own} is being played by another process; wait for it to finish")
    if status == "completed":
        return SamplePlace(own, "reuse")
    if status in _UNFINISHED:
        return SamplePlace(own, "continue")
    for other in sorted(settings_dir.glob(f"*/{name}")):
        if other != own and run_status(other) in _UNFINISHED:
            return SamplePlace(other, "continue")
    return SamplePlace(own, "start")


def _root(out: str | None, log_location: str) -> Path:
    """``out``, else the Inspect log's directory (which must be on this machine)."""
    if out:
        return Path(out).expanduser()
    if "://" in log_location and not log_location.startswith("file://"):
        raise RunDirError(
            f"the Inspect log goes to {log_location}, which is not a local directory; give "
            "the runs one with -T out=DIR"
        )
    return Path(log_location.removeprefix("file://")).expanduser().resolve().parent


def _safe(text: str) -> str:
    """A path component from an id (Inspect ids are letters, digits, ``-`` and ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)
