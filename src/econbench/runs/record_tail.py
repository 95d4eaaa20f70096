"""Resume by replay: the model calls a run recorded after its last checkpoint, served again.

A run a model plays is checkpointed every few days (``MODEL_DAYS_PER_CHECKPOINT``), not
after every model call: the calls in
between are already in ``record.sqlite`` (committed one at a time), so writing the whole
world and conversation after each of them would repeat what the record holds — a 90-day run
wrote hundreds of megabytes of checkpoints for a record of tens.

A resumed run therefore restarts from its last checkpoint and plays forward; each model
agent's requests are answered from the record's *tail* — the calls (and failed attempts)
recorded after the checkpoint's seal — for as long as each request is the one the record
holds at that point (same request key), then by the model. The world, the scripted firms
and the agents are deterministic given those answers, so the replayed stretch writes the
same events as the first time, and calls already paid for are not paid again.

The tail is read into memory before the resume cuts the record back to the seal, and the
recording provider writes each served call again at its index, so the record ends up as
if the run had never stopped. An AlloBench cell does the same for the episode that was in
flight: it is played again from its start, its recorded calls served first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from econbench.agents.models.base import (
    ChatMessage,
    GenerateConfig,
    ModelError,
    ModelOutput,
    ModelProvider,
    ProviderWrap,
    WrappedProvider,
)
from econbench.agents.tools import ToolSpec


@dataclass(frozen=True)
class TailStep:
    """One recorded answer to a request: a reply, or a failed attempt to raise again."""

    request_key: str
    output: dict[str, Any] | None = None
    failure: Any = None
    """A ``RecordedFailure`` (its ``exception()`` is raised afresh each time)."""


def read_tail(path: Path, seal: Any) -> dict[str, list[TailStep]]:
    """Per agent, what ``record.sqlite`` at ``path`` holds after the checkpoint's ``seal``
    (``CallRecord.seal``; ``None`` or no agents: everything), in the order it happened:
    each call's failed attempts, then the call."""
    from econbench.agents.models.record import CallRecord

    if not path.exists():
        return {}
    sealed: Mapping[str, Any] = (seal or {}).get("agents") or {}
    tails: dict[str, list[TailStep]] = {}
    with CallRecord(path, readonly=True) as record:
        for agent in record.agents():
            start = int(sealed.get(agent, {}).get("calls", 0))
            steps: list[TailStep] = []
            for call in record.calls(agent):
                if call.idx < start:
                    continue
                seq = 0
                while (failure := record.failure_at(agent, call.idx, seq)) is not None:
                    steps.append(TailStep(failure.request_key, failure=failure))
                    seq += 1
                steps.append(TailStep(call.request_key, output=call.output))
            if steps:
                tails[agent] = steps
    return tails


class TailFirst(WrappedProvider):
    """Answers from a recorded tail while each request is the recorded one, then asks
    ``inner`` (the model) from the first request that is not; the rest of the tail is then
    dropped, since the run has left the recorded path."""

    def __init__(self, inner: ModelProvider, steps: list[TailStep]) -> None:
        super().__init__(inner)
        self.steps = deque(steps)
        self.served = 0

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolSpec], config: GenerateConfig
    ) -> ModelOutput:
        if self.steps:
            from econbench.agents.models.record import output_from_dict, request_key

            step = self.steps[0]
            if step.request_key == request_key(self.name, messages, tools, config):
                self.steps.popleft()
                self.served += 1
                if step.failure is not None:
                    exc: ModelError = step.failure.exception()
                    raise exc
                return output_from_dict(step.output or {})
            self.steps.clear()
        return await self.inner.generate(messages, tools, config)


class TailFirstWrap:
    """A run's recording wrap whose agents first replay their recorded tails: ``tails`` may
    be filled after the wrap is handed out (an AlloBench cell builds its actor factory before
    its resume has read the record), and each agent's tail is served once. The wrap's own
    attributes (its record, its ``close``) are the wrapped one's."""

    def __init__(self, wrap: ProviderWrap, tails: dict[str, list[TailStep]] | None = None):
        self.wrap = wrap
        self.tails: dict[str, list[TailStep]] = dict(tails or {})

    def __call__(self, provider: ModelProvider, agent: str) -> ModelProvider:
        from econbench.agents.models.record import RecordingProvider

        recording = self.wrap(provider, agent)
        steps = self.tails.pop(agent, None)
        if steps and isinstance(recording, RecordingProvider):
            recording.inner = TailFirst(recording.inner, steps)
        return recording

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrap, name)
