"""econbench's tool calls as Inspect tool events, so the ``.eval`` log shows every one.

econbench executes tools itself (the environment's toolkit, in its own thread), so Inspect
never sees them run. The bridge records each call once its result is known: when the result
goes back to the model in the next request (the text the model reads, as Inspect's own tool
events hold), or, for the last calls of a run, from the run's own log at the end
(:mod:`econbench.inspect_tasks.coffee`, :mod:`econbench.inspect_tasks.allo`). Each event sits in
a ``tool`` span named after the tool, as Inspect's own tool calls do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inspect_ai.event import ToolEvent
from inspect_ai.log import transcript
from inspect_ai.util import span


@dataclass(frozen=True)
class ToolRecord:
    """One executed call: its id, tool, arguments and the result text the model read."""

    call_id: str
    function: str
    arguments: dict[str, Any] | str
    result: str


async def record_tool_calls(records: Iterable[ToolRecord]) -> None:
    """Add one completed tool event per record to the sample's transcript (on Inspect's
    loop, in the sample's context)."""
    for record in records:
        arguments = (
            record.arguments if isinstance(record.arguments, dict) else {"raw": record.arguments}
        )
        event = ToolEvent(id=record.call_id, function=record.function, arguments=arguments)
        event._set_result(
            result=record.result,
            truncated=None,
            error=None,
            working_time=0.0,
            agent=None,
            failed=None,
            message_id=None,
        )
        async with span(name=record.function, type="tool"):
            transcript()._event(event)
