"""A training run's files in ``OUT`` and how a rerun continues from them.

- ``train.jsonl``: one row per finished step;
- ``adapter/``: the LoRA adapter (peft ``save_pretrained``), with ``econbench-step.json``;
- ``state.pt``: the optimizer, the value net and its optimizer, and the step;
- ``trainer_state.json``: the step reached and the config — written last, the commit point.

The slow writes (the adapter, the tensors) go to temporary names first; only renames and
the small state file follow, and the previous adapter is deleted after the commit. A rerun
reads ``trainer_state.json``, cuts ``train.jsonl`` back to its step, and checks that the
adapter and the tensors carry the same step (an interrupted save is reported, not guessed).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from econbench import __version__
from econbench.jsonio import json_line
from econbench.runs.allo.posttrain.config import RESUMABLE, TrainConfig
from econbench.runs.diff import config_diff
from econbench.runs.layout import read_json, read_jsonl
from econbench.runs.store import write_json

STATE = "trainer_state.json"
TENSORS = "state.pt"
LOG = "train.jsonl"
ADAPTER = "adapter"
STEP_MARKER = "econbench-step.json"
SCHEMA = 1


class TrainResumeError(RuntimeError):
    """``OUT`` holds a run that cannot be continued with this config (the message says why)."""


def saved_state(out: Path) -> dict[str, Any] | None:
    """``trainer_state.json`` of ``out``, or None when no step was saved."""
    path = out / STATE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise TrainResumeError(f"{path} is not valid JSON; remove {out} to start over") from None
    if not isinstance(data, dict) or "step" not in data or "config" not in data:
        raise TrainResumeError(f"{path} is not a trainer state; remove {out} to start over")
    return data


def check_resume(out: Path, config: TrainConfig, force: bool) -> int:
    """The number of steps already saved in ``out`` (0 for a new run); refuses a changed
    config unless ``force``."""
    state = saved_state(out)
    if state is None:
        if (out / LOG).exists() or (out / ADAPTER).exists():
            raise TrainResumeError(
                f"{out} holds training files but no {STATE}; choose another --out"
            )
        return 0
    old = {k: v for k, v in state["config"].items() if k not in RESUMABLE}
    changes = config_diff(old, config.comparable())
    if changes and not force:
        raise TrainResumeError(
            f"{out} was trained with other settings:\n  "
            + "\n  ".join(changes[:20])
            + "\nRerun with the same settings to continue, pass --force to continue anyway, "
            "or choose another --out."
        )
    return int(state["step"])


def load_tensors(out: Path, step: int, device: Any) -> dict[str, Any]:
    """The saved optimizer and value-net states, after checking that the adapter and the
    tensors both belong to ``step``."""
    marker = read_json(out / ADAPTER / STEP_MARKER)
    adapter_step = marker.get("step") if isinstance(marker, dict) else None
    try:
        tensors = torch.load(out / TENSORS, map_location=device, weights_only=True)
    except (OSError, RuntimeError) as exc:
        raise TrainResumeError(f"{out / TENSORS} cannot be read: {exc}") from None
    if adapter_step != step or tensors.get("step") != step:
        raise TrainResumeError(
            f"{out}: the checkpoint of step {step} is incomplete (adapter from step "
            f"{adapter_step}, optimizer state from step {tensors.get('step')}): a save was "
            "interrupted; start over in another --out"
        )
    return tensors


def save_checkpoint(
    out: Path,
    model: Any,
    tensors: dict[str, Any],
    config: TrainConfig,
    step: int,
) -> None:
    """Save the adapter and ``tensors`` for ``step``, then commit with ``trainer_state.json``."""
    staging = out / f"{ADAPTER}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    write_json(staging / STEP_MARKER, {"step": step})
    tmp = out / f"{TENSORS}.tmp"
    torch.save({**tensors, "step": step}, tmp)
    old = out / f"{ADAPTER}.old"
    shutil.rmtree(old, ignore_errors=True)
    if (out / ADAPTER).exists():
        os.replace(out / ADAPTER, old)
    os.replace(staging, out / ADAPTER)
    os.replace(tmp, out / TENSORS)
    write_json(
        out / STATE,
        {
            "schema": SCHEMA,
            "version": __version__,
            "step": step,
            "config": config.model_dump(),
            "random_state": "derived from (seed, step, stream seed, rollout): nothing to save",
        },
    )
    shutil.rmtree(old, ignore_errors=True)


def cut_log(out: Path, rows: int) -> None:
    """Keep the first ``rows`` rows of ``train.jsonl`` (drop rows of unsaved steps)."""
    path = out / LOG
    if not path.exists():
        return
    kept = read_jsonl(path)[:rows]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json_line(r) + "\n" for r in kept), encoding="utf-8")
    os.replace(tmp, path)


def append_row(out: Path, row: dict[str, Any]) -> None:
    """Add one step's row to ``train.jsonl``."""
    with (out / LOG).open("a", encoding="utf-8") as fh:
        fh.write(json_line(row) + "\n")
