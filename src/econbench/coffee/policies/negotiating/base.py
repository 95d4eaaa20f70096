"""The negotiating firm's frame: valuations, memory that survives checkpoints, the inbox.

A routine runs each wake: it takes in the observation (:func:`memory.begin`), does the
firm's own operations first (pay, produce or roast, accept, list, bid), and only then reads
and answers messages, within a daily budget (4 reads a day, 2 per sender, 2 replies per
sender), so a flood of messages cannot starve it. Messages older than yesterday are ignored.

Checkpoints: ``state_dict`` saves the memory as it was when the running routine started,
with the routine's observation and results; ``load_state`` restores that memory and re-drives
a fresh routine through them, which re-applies the routine's changes to memory exactly.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from econbench.agents.policy import Feedback, Routine, ScriptedPolicy
from econbench.agents.tools import ToolCall, ToolSpec
from econbench.coffee.policies.common import call, is_morning, ok
from econbench.coffee.policies.negotiating import memory as mem
from econbench.coffee.policies.negotiating.valuations import firm_rng
from econbench.coffee.policies.proposals import (
    Kind,
    Proposal,
    Side,
    format_proposal,
    parse_proposal,
)

if TYPE_CHECKING:
    import numpy as np

Inbox = Generator[ToolCall, dict[str, Any], list[tuple[str, Proposal]]]
TITLES = {"accept": "Accepted", "counter": "Counter-proposal", "reject": "Declined"}


_SCALARS = frozenset({str, int, float, bool, type(None)})


class _NotPlain(Exception):
    """Raised by ``_plain_copy`` on a value a JSON round trip would change."""


def _copy(data: Any) -> Any:
    """A deep copy of a firm's memory, exactly as a JSON round trip gives it. Plain data
    (dicts with string keys, lists, scalars: what a memory holds) is copied directly, at
    half the cost; anything else (a tuple, a non-string key) takes the round trip. A firm
    copies its memory at every wake."""
    try:
        return _plain_copy(data)
    except _NotPlain:
        return json.loads(json.dumps(data))


def _plain_copy(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = item if type(item) in _SCALARS else _plain_copy(item)
        return out
    if kind is list:
        return [item if type(item) in _SCALARS else _plain_copy(item) for item in value]
    raise _NotPlain


def role_of(firm_id: str) -> str:
    return firm_id.split("_", 1)[0]


class NegotiatingFirm(ScriptedPolicy):
    """Base of the negotiating farmer, roaster and retailer."""

    name = "negotiating"

    def __init__(self, *, seed: int = 0, firm_id: str = "") -> None:
        super().__init__()
        self.seed, self.firm_key = int(seed), firm_id
        self.values: dict[str, Any] = {}
        self.memory: mem.Memory = mem.fresh()
        self._memory_at_start: mem.Memory = _copy(self.memory)
        if firm_id:
            self._setup(firm_id)

    # ------------------------------------------------------------ lifecycle
    def _setup(self, firm_id: str) -> None:
        self.values = self.draw_values(firm_rng(self.seed, firm_id))
        self.memory = mem.fresh()
        self.init_levels()
        self._memory_at_start = _copy(self.memory)

    def start(self, actor_id: str, role: str, tools: list[ToolSpec], **briefing: Any) -> None:
        super().start(actor_id, role, tools, **briefing)
        if actor_id != self.firm_key:
            self.firm_key = actor_id
            self._setup(actor_id)

    def draw_values(self, rng: np.random.Generator) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def init_levels(self) -> None:
        """Set the firm's starting price levels in ``self.memory['levels']``."""

    def decide(self, feedback: Feedback) -> ToolCall | None:
        if feedback.observation is not None:
            if not self.values:  # driven without start(): the observation names the firm
                self.firm_key = str(feedback.observation.get("firm", ""))
                self._setup(self.firm_key)
            self._memory_at_start = _copy(self.memory)
        return super().decide(feedback)

    def state_dict(self) -> dict[str, Any]:
        memory = self._memory_at_start if self._observation is not None else self.memory
        return super().state_dict() | {"memory": _copy(memory)}

    def load_state(self, state: dict[str, Any]) -> None:
        if "memory" in state:
            self.memory = _copy(state["memory"])
        super().load_state(state)

    # ------------------------------------------------------------ the routine
    def routine(self, observation: dict[str, Any]) -> Routine:
        mem.begin(self.memory, observation)
        if is_morning(observation):
            yield from self.morning(observation)
        else:
            yield from self.midday(observation)
        yield call("wait_for_next_day")

    def morning(self, observation: dict[str, Any]) -> Routine:  # pragma: no cover
        raise NotImplementedError
        yield

    def midday(self, observation: dict[str, Any]) -> Routine:  # pragma: no cover
        raise NotImplementedError
        yield

    # ------------------------------------------------------------ shared steps
    def pay_due(self, observation: dict[str, Any], cash: float, within: int = 2) -> Routine:
        """Pay every invoice due within ``within`` days (or overdue) that cash covers."""
        if observation["payables"]["open"] <= 0:
            return
        day = observation["day"]
        payables = yield call("view_payables", limit=50)
        for invoice in payables.get("invoices", []):
            if invoice["due_day"] <= day + within and invoice["outstanding"] <= cash:
                result = yield call("pay_invoice", invoice_id=invoice["invoice_id"])
                if ok(result):
                    cash = result["cash"]

    def check_defaulters(self, observation: dict[str, Any]) -> Routine:
        """Who owes us an invoice more than 7 days overdue (one call, only if any is overdue)."""
        if observation["receivables"]["overdue"] <= 0:
            self.memory["defaulters"] = []
            return
        result = yield call("view_receivables", only_overdue=True, limit=50)
        mem.set_defaulters(self.memory, result.get("invoices", []))

    def inbox(self, observation: dict[str, Any]) -> Inbox:
        """Read new messages within today's budget; the proposals they hold, oldest first."""
        memory = self.memory
        unread = observation.get("unread_messages", {}) or {}
        seen_counts = memory.setdefault("unread_seen", {})
        fresh = [
            s
            for s in sorted(unread)
            if unread[s] > seen_counts.get(s, 0) and mem.may_read(memory, s)
        ]
        for s in list(seen_counts):
            if s not in unread:
                del seen_counts[s]
        if not fresh:
            return []
        day = observation["day"]
        listing = yield call("view_messages", since_day=max(0, day - 1), limit=20)
        rows = [
            m
            for m in listing.get("messages", [])
            if m.get("direction") == "received"
            and not m.get("read")
            and m.get("from") in fresh
            and m.get("message_id") not in memory["seen_messages"]
        ]
        found: list[tuple[str, Proposal]] = []
        read_by: dict[str, int] = {}
        for row in rows:
            sender = row["from"]
            if not mem.may_read(memory, sender):
                continue
            message = yield call("read_message", message_id=row["message_id"])
            mem.note_read(memory, sender, row["message_id"])
            read_by[sender] = read_by.get(sender, 0) + 1
            if not ok(message):
                continue
            text = f"{message.get('title', '')}\n{message.get('body', '')}"
            proposal = parse_proposal(text, role_of(sender), self.role)
            if proposal is not None:
                found.append((sender, proposal))
        for s in fresh:
            seen_counts[s] = max(0, unread[s] - read_by.get(s, 0))
        found.reverse()  # newest first on the board: answer the oldest first
        # Keep only each sender's latest proposal per item: earlier ones are superseded.
        latest: dict[tuple[str, str], tuple[str, Proposal]] = {}
        for sender, proposal in found:
            latest[(sender, proposal.item)] = (sender, proposal)
        return list(latest.values())

    def reply(
        self,
        recipient: str,
        kind: Kind,
        side: Side,
        item: str,
        qty: int,
        price: float,
        sentence: str,
        *,
        through: int | None = None,
        terms: int = 30,
    ) -> Routine:
        """Send one structured reply line plus one plain sentence; counts against the
        per-sender reply budget."""
        if not mem.may_reply(self.memory, recipient):
            return
        mem.note_reply(self.memory, recipient)
        line = format_proposal(
            side, item, qty, price, kind=kind, terms=terms, valid_through=through
        )
        yield call(
            "send_message",
            recipient=recipient,
            title=f"{TITLES.get(kind, 'Proposal')}: {item}"[:80],
            body=f"{line}. {sentence}",
        )

    def prefer(self, firm: str) -> int:
        return -mem.score(self.memory, firm)
