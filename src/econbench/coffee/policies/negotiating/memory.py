"""A negotiating firm's memory across days: plain JSON data, changed only by its routines.

It holds the firm's counterparty record (invoices paid to it, deals closed with it, promises
broken), who is in default, the promises it made and was given, negotiation rounds per
counterparty and item, today's message budget, and each firm's own price levels (``levels``,
written by the role modules). Everything here is a dict of str keys, lists, ints and floats
so that a checkpoint saves it as JSON and a routine's replay re-applies the same changes.
"""

from __future__ import annotations

import re
from typing import Any

READS_PER_DAY = 4
READS_PER_SENDER = 2
REPLIES_PER_SENDER = 2
STRIKES_TO_BLOCK = 2
DEFAULT_DAYS = 7
PROMISE_DAYS = 3
KEEP_IDS = 200

_PAID = re.compile(r"^invoice (\S+) paid by (\S+)$")

Memory = dict[str, Any]


def fresh() -> Memory:
    return {
        "day": -1,
        "record": {},
        "defaulters": [],
        "reads": {"total": 0, "by": {}},
        "replies": {},
        "seen_messages": [],
        "promises_made": [],
        "promises_got": [],
        "rounds": {},
        "countered": [],
        "levels": {},
    }


def _row(memory: Memory, firm: str) -> dict[str, int]:
    return memory["record"].setdefault(firm, {"paid": 0, "deals": 0, "strikes": 0})


def begin(memory: Memory, observation: dict[str, Any]) -> None:
    """Take in what an observation tells: a new day, invoices paid, deals closed."""
    day = int(observation["day"])
    if day != memory["day"]:
        memory["day"] = day
        memory["reads"] = {"total": 0, "by": {}}
        memory["replies"] = {}
        memory["promises_made"] = [p for p in memory["promises_made"] if p["through"] >= day]
    for reason in observation.get("wake_reasons", []):
        match = _PAID.match(str(reason))
        if match:
            _row(memory, match.group(2))["paid"] += 1
    for deal in observation.get("new_deals", []):
        _row(memory, deal["counterparty"])["deals"] += 1


def score(memory: Memory, firm: str) -> int:
    """Higher is a better counterparty: paid invoices and deals, less broken promises."""
    row = memory["record"].get(firm, {})
    return row.get("paid", 0) + row.get("deals", 0) - 5 * row.get("strikes", 0)


def blocked(memory: Memory, firm: str) -> bool:
    """A firm in default (an invoice to us more than 7 days overdue) or that broke promises."""
    if firm in memory["defaulters"]:
        return True
    return memory["record"].get(firm, {}).get("strikes", 0) >= STRIKES_TO_BLOCK


def strike(memory: Memory, firm: str) -> None:
    _row(memory, firm)["strikes"] += 1


def set_defaulters(memory: Memory, invoices: list[dict[str, Any]]) -> None:
    memory["defaulters"] = sorted(
        {i["counterparty"] for i in invoices if i.get("days_overdue", 0) > DEFAULT_DAYS}
    )


# ------------------------------------------------------------------ message budget
def may_read(memory: Memory, sender: str) -> bool:
    reads = memory["reads"]
    return reads["total"] < READS_PER_DAY and reads["by"].get(sender, 0) < READS_PER_SENDER


def note_read(memory: Memory, sender: str, message_id: str) -> None:
    reads = memory["reads"]
    reads["total"] += 1
    reads["by"][sender] = reads["by"].get(sender, 0) + 1
    remember(memory, "seen_messages", message_id)


def may_reply(memory: Memory, firm: str) -> bool:
    return memory["replies"].get(firm, 0) < REPLIES_PER_SENDER


def note_reply(memory: Memory, firm: str) -> None:
    memory["replies"][firm] = memory["replies"].get(firm, 0) + 1


def remember(memory: Memory, key: str, value: str) -> None:
    ids = memory[key]
    if value not in ids:
        ids.append(value)
        del ids[:-KEEP_IDS]


# ------------------------------------------------------------------ promises
def promise_made(
    memory: Memory, firm: str, item: str, qty: int, price: float, through: int
) -> None:
    """We promised ``firm``: as a seller, to accept its bid at ≥ price for ≤ qty; as a
    buyer, to bid the price for the qty on its listing."""
    memory["promises_made"] = [
        p for p in memory["promises_made"] if not (p["firm"] == firm and p["item"] == item)
    ]
    memory["promises_made"].append(
        {"firm": firm, "item": item, "qty": qty, "price": price, "through": through}
    )


def promise_for(memory: Memory, firm: str, item: str, day: int) -> dict[str, Any] | None:
    for p in memory["promises_made"]:
        if p["firm"] == firm and p["item"] == item and p["through"] >= day:
            return p
    return None


def drop_promise(memory: Memory, firm: str, item: str) -> None:
    memory["promises_made"] = [
        p for p in memory["promises_made"] if not (p["firm"] == firm and p["item"] == item)
    ]


def promise_got(
    memory: Memory, firm: str, item: str, qty: int, price: float, through: int, offer_id: str
) -> None:
    """``firm`` promised to accept our bid at ``price``; ``offer_id`` is the bid we made."""
    memory["promises_got"] = [
        p for p in memory["promises_got"] if not (p["firm"] == firm and p["item"] == item)
    ]
    memory["promises_got"].append(
        {
            "firm": firm,
            "item": item,
            "qty": qty,
            "price": price,
            "through": through,
            "offer_id": offer_id,
        }
    )


def check_promises_got(memory: Memory, day: int, pending_offer_ids: set[str]) -> None:
    """A seller's promise is broken if our bid on it is still pending after it expired."""
    keep = []
    for p in memory["promises_got"]:
        if p["through"] >= day:
            keep.append(p)
        elif p["offer_id"] in pending_offer_ids:
            strike(memory, p["firm"])
    memory["promises_got"] = keep


def rounds(memory: Memory, firm: str, item: str) -> int:
    return memory["rounds"].get(f"{firm}|{item}", 0)


def next_round(memory: Memory, firm: str, item: str) -> None:
    key = f"{firm}|{item}"
    memory["rounds"][key] = memory["rounds"].get(key, 0) + 1
