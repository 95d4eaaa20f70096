"""What both tasks' solvers share: the bridges of a sample, playing the run beside Inspect,
and handing Inspect what it expects back (the error that stopped the run, the messages).

A solver builds one bridge for the evaluated model (Inspect's ``--model``) and, where the task
plays more than one model, one per model role; :func:`play_sample` plays the run and
translates its end. A run econbench stopped because Inspect refused a call (a sample limit, a
provider error past Inspect's retries) ends the sample with that same error, so Inspect
records the limit and scores the sample, or retries it (``--retry-on-error``, ``eval-set``),
which continues the run from its checkpoint (:mod:`econbench.inspect_tasks.rundirs`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, get_model, get_model_info, model_roles
from inspect_ai.solver import TaskState

from econbench.inspect_tasks.bridge import InspectBridge, econbench_name
from econbench.inspect_tasks.thread import play_beside
from econbench.runs.benchmark import StoppedError

RUN_DIR_KEY = "econbench:run_dir"
"""Where a sample's store keeps its run directory (the scorer reads the run there)."""


def evaluated_bridge() -> InspectBridge:
    """The bridge of the model under evaluation (``inspect eval --model``)."""
    return _bridge(get_model(), None)


def role_bridge(role: str) -> InspectBridge | None:
    """The bridge of the model given for ``role`` (``--model-role ROLE=…``), if one was."""
    bound = model_roles().get(role)
    model = bound[0] if isinstance(bound, list) else bound
    return None if model is None else _bridge(model, role)


def _bridge(model: Model, role: str | None) -> InspectBridge:
    info = get_model_info(model)
    return InspectBridge(
        model,
        econbench_name(model, role),
        asyncio.get_running_loop(),
        context_window=info.context_length if info is not None else None,
    )


def run_dir_of(state: TaskState) -> Path:
    """The run directory the sample played into; a clear error when it has none."""
    where = state.store.get(RUN_DIR_KEY)
    if not where:
        raise RuntimeError("this sample has no econbench run (its solver did not start one)")
    return Path(where)


async def play_sample(
    state: TaskState,
    run_dir: Path,
    bridges: Sequence[InspectBridge],
    play: Callable[[], Any],
) -> None:
    """Play ``play()`` (the run into ``run_dir``) beside Inspect and end as Inspect expects:
    the evaluated model's last exchange becomes the sample's messages and output, and a run
    stopped by an error from Inspect raises that error."""
    state.store.set(RUN_DIR_KEY, str(run_dir))
    try:
        await play_beside(bridges, play)
    except StoppedError:
        _keep_last_exchange(state, bridges[0])
        failure = next((b.failure for b in bridges if b.failure is not None), None)
        if failure is not None:
            raise failure from None
        raise
    _keep_last_exchange(state, bridges[0])


def _keep_last_exchange(state: TaskState, bridge: InspectBridge) -> None:
    """The evaluated model's conversation as of its last call, and its reply, for ``inspect
    view``'s messages (the full history is in the transcript's model events)."""
    if bridge.last_input:
        state.messages = list(bridge.last_input)
    if bridge.last_output is not None:
        state.output = bridge.last_output
        state.messages.append(bridge.last_output.message)
