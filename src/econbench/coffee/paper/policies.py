"""The paper's two scripted baselines, as econbench actors for the paper world.

``PassiveReference`` is the reference's ``models/passive_model.PassiveModel`` and
``HeuristicRoasterReference`` its ``models/heuristic_roaster_model.HeuristicRoasterModel``
(CoffeeBench commit 71442fb). The reference's models are queried with the agent's whole message
history; the heuristic reads only the LAST message of it (a morning/wake observation, or the
JSON result of its previous call). So this actor keeps the same history — user observations,
its own assistant turns, and tool results as the JSON text the reference's agent stores
(``json.dumps(result, default=str)``) — and decides from its last message exactly as the
reference does: a tool result that is followed by a wake observation in the same batch of
inputs is recorded but never read, as in the reference.

The driver hands an actor its previous call's result as ``ToolResult`` and, when it is woken,
the observation text as ``UserText`` (the day-0 ``INITIAL_OBSERVATION`` first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from econbench.agents.policy import Input, Observation, Reply, ToolResult, UserText
from econbench.agents.tools import ToolCall, ToolSpec

PASSIVE_TEXT = "(passive baseline: sleeping until next event)"
HEURISTIC_TEXT = "(heuristic baseline)"

MARKUP_LIST = 1.5
"""List roasted coffee at this multiple of its cost basis."""
MARKUP_FLOOR = 1.2
"""Accept an offer on one of its listings at this multiple of cost basis or more."""

# The heuristic's fixed cost bases (the reference hardcodes the seeded values rather than read
# per-item average costs, which its trial balance does not show).
_DEFAULT_COST_BASIS: dict[str, float] = {
    "green_coffee_kg": 2.00,
    "green_specialty_kg": 10.00,
    "roasted_coffee_kg": 5.88,
    "roasted_specialty_kg": 18.30,
}
_DAILY_VIEWS: tuple[str, ...] = (
    "view_trial_balance",
    "view_listings",
    "view_offers",
    "view_payables",
)
_ROAST_CAP_KG = 50
_OFFER_CAP_KG = 30
_DAY_PATTERN = re.compile(r"\bDay\s+(\d+)\b")


def _extract_day(text: str) -> int | None:
    """The first ``Day N`` in an observation, if any (the reference's ``_extract_day``)."""
    match = _DAY_PATTERN.search(text) if text else None
    return int(match.group(1)) if match else None


def _stringify_tool_result(result: Any) -> str:
    """A tool result as the reference's agent stores it in history
    (``agent._stringify_tool_result``): strings as they are, anything else as JSON."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, default=str)
    except (TypeError, ValueError):
        return str(result)


class _HistoryActor:
    """What both baselines share: the actor protocol's bookkeeping and a message history in
    the reference's shape (``{"role", "content", ...}`` dicts, JSON-able)."""

    name = "reference"

    def __init__(self) -> None:
        self.actor_id = ""
        self.role = ""
        self.messages: list[dict[str, Any]] = []
        self.n_calls = 0

    def start(
        self,
        actor_id: str,
        role: str,
        tools: list[ToolSpec],
        *,
        system_prompt: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Scripted baselines never read the system prompt or their tool schemas (as in the
        reference's ``Agent.init``, which skips prompt routing for them)."""
        self.actor_id, self.role = actor_id, role

    def _append_inputs(self, inputs: Sequence[Input], last_call: dict[str, Any] | None) -> None:
        """Append ``inputs`` to the history as the reference's agent and environment would."""
        for item in inputs:
            if isinstance(item, ToolResult):
                call = last_call or {}
                self.messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": item.call_id or call.get("id"),
                        "name": item.name or call.get("name", ""),
                        "content": _stringify_tool_result(item.result),
                    }
                )
            elif isinstance(item, UserText):
                self.messages.append({"role": "user", "content": item.text})
            elif isinstance(item, Observation):
                raise TypeError("the paper world hands observations as UserText, not Observation")
            else:  # pragma: no cover - guarded by the Input union
                raise TypeError(f"unknown input {item!r}")

    def _append_reply(self, text: str, calls: list[ToolCall]) -> None:
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "thinking": "",
                "tool_calls": [
                    {"id": c.call_id, "name": c.name, "input": dict(c.arguments)} for c in calls
                ],
            }
        )


class PassiveReference(_HistoryActor):
    """Never acts: every turn it answers with no tool call (the caller then parks it until
    the next event, as the reference's agent turns an empty reply into ``wait_for_next_day``).

    As the reference's ``PassiveModel.query``.
    """

    name = "passive"

    def respond(self, inputs: Sequence[Input]) -> Reply:
        """No call. A result a caller sends for the ``wait_for_next_day`` it ran in its place is
        not recorded: the reference's agent stores no tool message after an empty reply."""
        self._append_inputs([i for i in inputs if not isinstance(i, ToolResult)], None)
        self.n_calls += 1
        self._append_reply(PASSIVE_TEXT, [])
        return Reply(text=PASSIVE_TEXT)

    def state_dict(self) -> dict[str, Any]:
        """Its history and call count, as JSON-able values."""
        return {"n_calls": self.n_calls, "messages": json.loads(json.dumps(self.messages))}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        self.n_calls = int(state.get("n_calls", 0))
        self.messages = json.loads(json.dumps(state.get("messages", [])))


class HeuristicRoasterReference(_HistoryActor):
    """The paper's scripted roaster: one tool call per turn through a fixed daily routine.

    Each new ``Day N`` observation restarts the day: four views (trial balance, listings,
    offers, payables); accept each incoming offer priced at least ``MARKUP_FLOOR`` x cost on a
    listing of its own; pay every invoice with a balance; roast all specialty green, then
    commodity green up to 50 kg; list all roasted specialty and then roasted commodity at
    ``MARKUP_LIST`` x cost; one offer at the asking price on the cheapest commodity-green
    listing for up to 30 kg if cash covers it; then ``wait_for_next_day``. As the reference's
    ``HeuristicRoasterModel``: the same attribute names, the same state, the same decisions.
    """

    name = "heuristic_roaster"

    def __init__(self) -> None:
        super().__init__()
        # Long-lived state, refreshed by view_trial_balance.
        self.cost_basis: dict[str, float] = {}
        self.inventory: dict[str, int] = {}
        self.cash: float = 0.0
        # listing_id -> item_id of the listings it posted (offers carry only the listing id).
        self.my_listings: dict[str, str] = {}
        self._reset_day_state(day=-1)
        self._call_seq = 0
        # The last call it made, paired with the next tool result (e.g. post_listing's item).
        self._last_call: dict[str, Any] | None = None

    def _reset_day_state(self, day: int) -> None:
        """Start a day's routine afresh (the reference's ``_reset_day_state``)."""
        self.day = day
        self.views_pending: list[str] = list(_DAILY_VIEWS)
        self.accepts_pending: list[str] = []
        self.pays_pending: list[str] = []
        self.green_listings: list[dict[str, Any]] = []
        self.roast_specialty_done = False
        self.roast_commodity_done = False
        self.post_specialty_done = False
        self.post_commodity_done = False
        self.make_offer_done = False

    # ----- protocol -----------------------------------------------------------------------

    def respond(self, inputs: Sequence[Input]) -> Reply:
        """Record ``inputs``, read the last message, and make the routine's next call
        (the reference's ``query``)."""
        self._append_inputs(inputs, self._last_call)
        self.n_calls += 1
        self._ingest(self.messages)
        call = self._next_action()
        self._append_reply(HEURISTIC_TEXT, [call])
        return Reply(text=HEURISTIC_TEXT, tool_calls=[call])

    # ----- ingestion (the reference's ``_ingest`` / ``_handle_tool_result``) -----------------

    def _ingest(self, messages: list[dict[str, Any]]) -> None:
        """Read only the latest message: a new ``Day N`` restarts the routine; a tool result
        refreshes state."""
        if not messages:
            return
        last = messages[-1]
        role = last.get("role")
        if role == "user":
            new_day = _extract_day(last.get("content") or "")
            if new_day is not None and new_day != self.day:
                self._reset_day_state(day=new_day)
            return
        if role == "tool":
            try:
                data = json.loads(last.get("content") or "{}")
            except (TypeError, ValueError):
                return
            if isinstance(data, dict):
                self._handle_tool_result(last.get("name") or "", data)

    def _handle_tool_result(self, name: str, data: dict[str, Any]) -> None:
        last_args = (self._last_call or {}).get("args", {}) if self._last_call else {}
        if name == "post_listing" and data.get("status") == "success":
            listing_id = data.get("listing_id")
            item = last_args.get("item_id")
            if listing_id and item:
                self.my_listings[str(listing_id)] = str(item)

        if name == "view_trial_balance":
            cash_account = (data.get("accounts") or {}).get("cash") or {}
            self.cash = float(cash_account.get("balance") or 0.0)
            self.inventory = {k: int(v) for k, v in (data.get("inventory_by_item") or {}).items()}
            self.cost_basis = dict(_DEFAULT_COST_BASIS)
        elif name == "view_listings":
            green = [
                row
                for row in (data.get("listings") or [])
                if row.get("item_id") == "green_coffee_kg" and row.get("qty", 0) > 0
            ]
            self.green_listings = sorted(
                green, key=lambda row: float(row.get("asking_price") or 1e9)
            )
        elif name == "view_offers":
            self.accepts_pending = [
                str(offer["id"])
                for offer in (data.get("offers") or [])
                if offer.get("status") in (None, "open", "pending")
                and self._offer_above_floor(offer)
            ]
        elif name == "view_payables":
            self.pays_pending = [
                str(row["id"])
                for row in (data.get("rows") or [])
                if float(row.get("outstanding") or 0.0) > 0.0
            ]

    def _offer_above_floor(self, offer: dict[str, Any]) -> bool:
        """Whether an offer on one of its own listings pays at least ``MARKUP_FLOOR`` x cost
        (an offer on a listing it did not post is never accepted)."""
        item_id = self.my_listings.get(str(offer.get("listing_id") or ""))
        if item_id is None:
            return False
        price = float(offer.get("offered_price") or 0.0)
        cost = float(self.cost_basis.get(item_id, 0.0))
        if cost <= 0.0:
            return price > 0.0
        return price >= cost * MARKUP_FLOOR

    # ----- action selection (the reference's ``_next_action``) ------------------------------

    def _next_action(self) -> ToolCall:
        if self.views_pending:
            return self._mk(self.views_pending.pop(0), {})
        if self.accepts_pending:
            return self._mk("accept_offer", {"offer_id": self.accepts_pending.pop(0)})
        if self.pays_pending:
            return self._mk("pay_invoice", {"invoice_id": self.pays_pending.pop(0)})

        if not self.roast_specialty_done:
            self.roast_specialty_done = True
            qty = int(self.inventory.get("green_specialty_kg", 0) or 0)
            if qty > 0:
                return self._mk("roast", {"green_item_id": "green_specialty_kg", "qty_kg": qty})
        if not self.roast_commodity_done:
            self.roast_commodity_done = True
            # Capped at the whole roast cap even after a specialty roast: the env then rejects
            # it and the phase is lost for the day (the reference's documented simplification).
            qty = min(int(self.inventory.get("green_coffee_kg", 0) or 0), _ROAST_CAP_KG)
            if qty > 0:
                return self._mk("roast", {"green_item_id": "green_coffee_kg", "qty_kg": qty})

        for item_id, flag in (
            ("roasted_specialty_kg", "post_specialty_done"),
            ("roasted_coffee_kg", "post_commodity_done"),
        ):
            if getattr(self, flag):
                continue
            setattr(self, flag, True)
            qty = int(self.inventory.get(item_id, 0) or 0)
            cost = float(self.cost_basis.get(item_id, 0.0))
            if qty > 0 and cost > 0:
                ask = round(cost * MARKUP_LIST, 2)
                return self._mk(
                    "post_listing", {"item_id": item_id, "qty": qty, "asking_price": ask}
                )

        if not self.make_offer_done and self.green_listings:
            self.make_offer_done = True
            top = self.green_listings[0]
            qty = min(int(top.get("qty", 0) or 0), _OFFER_CAP_KG)
            ask = float(top.get("asking_price") or 0.0)
            if qty > 0 and ask > 0 and self.cash >= qty * ask:
                return self._mk(
                    "make_offer",
                    {"listing_id": str(top.get("id") or ""), "offered_price": ask, "qty": qty},
                )
        return self._mk("wait_for_next_day", {})

    def _mk(self, tool_name: str, args: dict[str, Any]) -> ToolCall:
        """A call with the reference's id (``heur_0001``, ...), remembered for its result."""
        self._call_seq += 1
        call_id = f"heur_{self._call_seq:04d}"
        self._last_call = {"name": tool_name, "args": dict(args), "id": call_id}
        return ToolCall(tool_name, dict(args), call_id)

    # ----- checkpointing --------------------------------------------------------------------

    _STATE_FIELDS: tuple[str, ...] = (
        "n_calls",
        "cost_basis",
        "inventory",
        "cash",
        "my_listings",
        "day",
        "views_pending",
        "accepts_pending",
        "pays_pending",
        "green_listings",
        "roast_specialty_done",
        "roast_commodity_done",
        "post_specialty_done",
        "post_commodity_done",
        "make_offer_done",
        "_call_seq",
        "_last_call",
        "messages",
    )

    def state_dict(self) -> dict[str, Any]:
        """Everything it decides from, and its history, as JSON-able values (deep copies)."""
        return json.loads(json.dumps({k: getattr(self, k) for k in self._STATE_FIELDS}))

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        fresh = HeuristicRoasterReference()
        for key in self._STATE_FIELDS:
            value = state.get(key, getattr(fresh, key))
            setattr(self, key, json.loads(json.dumps(value)))
