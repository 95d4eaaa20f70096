"""The event scheduler of the reference economy (the reference's `event_loop.py`).

A min-heap of `(virtual_min, counter, Event)` tuples. The insertion counter breaks ties so
events at the same minute pop in the order they were scheduled; `pop_bucket` hands the
driver every event of the earliest minute at once, and that order is the order agents'
tool calls are applied in, so it decides who wins a race for the same listing.

The constants (`MINUTES_PER_DAY`, `EVENT_*`, `WAKE_*`, tool costs, `format_min`) live in
`paper.clock` and are re-exported here so the scheduler and its vocabulary read together.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from econbench.coffee.paper.clock import (
    EVENT_AGENT_WAKE,
    EVENT_EOD_MECHANICS,
    EVENT_MORNING_OPEN,
    MINUTES_PER_DAY,
    WAKE_DEAL_ACCEPTED,
    WAKE_DELIVERY_ARRIVED,
    WAKE_MORNING,
    WAKE_PRODUCTION_READY,
    format_min,
    tool_cost_minutes,
)

__all__ = [
    "EVENT_AGENT_WAKE",
    "EVENT_EOD_MECHANICS",
    "EVENT_MORNING_OPEN",
    "MINUTES_PER_DAY",
    "WAKE_DEAL_ACCEPTED",
    "WAKE_DELIVERY_ARRIVED",
    "WAKE_MORNING",
    "WAKE_PRODUCTION_READY",
    "Event",
    "EventLoop",
    "format_min",
    "tool_cost_minutes",
]


@dataclass
class Event:
    """A scheduled simulation event (as the reference's `Event`).

    Ordering is by `(virtual_min, counter)` held in the heap tuple, never by these fields;
    `payload` carries `day` for MORNING_OPEN / EOD_MECHANICS and `reason` for AGENT_WAKE.
    """

    virtual_min: int
    kind: str
    target_agent: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


class EventLoop:
    """Min-heap scheduler with an insertion counter (as the reference's `EventLoop`)."""

    def __init__(self, start_min: int = 0) -> None:
        self._heap: list[tuple[int, int, Event]] = []
        self._counter: int = 0
        self.current_min: int = int(start_min)

    def schedule(self, event: Event) -> None:
        """Push `event`, clamping a past time up to `current_min` (as the reference's
        `EventLoop.schedule`): an event scheduled "before now" fires on the next tick
        instead of out of causal order. The clamp rewrites `event.virtual_min` itself,
        which the driver's stale check compares against `_available_at`."""
        if event.virtual_min < self.current_min:
            event.virtual_min = self.current_min
        heapq.heappush(self._heap, (event.virtual_min, self._counter, event))
        self._counter += 1

    def schedule_at(
        self,
        virtual_min: int,
        kind: str,
        *,
        target_agent: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> Event:
        """Build and push an event (as the reference's `EventLoop.schedule_at`)."""
        ev = Event(
            virtual_min=int(virtual_min),
            kind=kind,
            target_agent=target_agent,
            payload=dict(payload or {}),
        )
        self.schedule(ev)
        return ev

    def pop(self) -> Event | None:
        """Pop the next event, advancing `current_min` (as the reference's `EventLoop.pop`)."""
        if not self._heap:
            return None
        m, _, ev = heapq.heappop(self._heap)
        if m > self.current_min:
            self.current_min = m
        return ev

    def pop_bucket(self) -> list[Event]:
        """Pop every event at the earliest minute, in insertion order (as the reference's
        `EventLoop.pop_bucket`); advances `current_min` to that minute. [] when empty."""
        if not self._heap:
            return []
        first_min = self._heap[0][0]
        if first_min > self.current_min:
            self.current_min = first_min
        bucket: list[tuple[int, Event]] = []
        while self._heap and self._heap[0][0] == first_min:
            _, counter, ev = heapq.heappop(self._heap)
            bucket.append((counter, ev))
        bucket.sort(key=lambda x: x[0])
        return [ev for _, ev in bucket]

    def peek_time(self) -> int | None:
        """The earliest scheduled minute, or None (as the reference's `peek_time`)."""
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def advance_minutes(self, minutes: int) -> int:
        """Move `current_min` forward without firing events (as the reference's
        `EventLoop.advance_minutes`)."""
        if minutes < 0:
            raise ValueError(f"minutes must be non-negative, got {minutes}")
        self.current_min += int(minutes)
        return self.current_min

    def get_current_day(self) -> int:
        """Integer sim day of `current_min` (as the reference's `get_current_day`)."""
        return self.current_min // MINUTES_PER_DAY
