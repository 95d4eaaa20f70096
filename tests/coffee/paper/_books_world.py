"""The paper economy driven one tool call at a time, shared by test_books and test_market."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest

from econbench.coffee.paper import economy
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.records import Invoice
from econbench.coffee.paper.tools import execute, result_text


class World:
    """The paper economy of seed 7 (ids, delivery draws), driven tool call by tool call.

    ``C`` runs one call through ``paper.tools`` (as the reference agent's ``_execute_tool``)
    and checks the text the model would get against the reference's, captured by running
    the same scenario on the reference (CoffeeBench 71442fb, Python 3.12, ``uuid.uuid4``
    patched to ``IdSource(7)``, ``env.rng.seed(7)``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, seed: int = 7) -> None:
        self.env = build_economy(seed, 10)
        self.env.rng.seed(seed)
        self.apps = self.env.business_apps
        self.mk = self.env.marketplace
        self.tm = self.env.time_manager
        self.emod = _Constants(monkeypatch)
        self.Inv = Invoice

    def C(self, aid: str, name: str, args: dict[str, Any], expect: str) -> Any:
        text = result_text(execute(self.apps[aid], name, args))
        assert text == expect, f"{aid}.{name}({args})"
        return json.loads(text)

    def at(self, vmin: int) -> None:
        self.tm.virtual_min = vmin


class _Constants:
    """Sets a constant of ``paper.economy`` for one test (a run's config override)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        object.__setattr__(self, "_mp", monkeypatch)

    def __setattr__(self, name: str, value: Any) -> None:
        self._mp.setattr(economy, name, value)


def books_state(w: World) -> dict[str, Any]:
    """Each firm's books and truth ledger, in the form the expectations were captured in."""
    state = {}
    for aid, ba in w.apps.items():
        state[aid] = {
            "cash": round(ba.cash, 6),
            "inventory": dict(ba.inventory),
            "inventory_total_cost": {k: round(v, 6) for k, v in ba.inventory_total_cost.items()},
            "retail_prices": dict(ba.retail_prices),
            "ar": [asdict(i) for i in ba.accounts_receivable],
            "ap": [asdict(i) for i in ba.accounts_payable],
            "ledger": [
                [
                    e.id,
                    e.day,
                    e.entry_type,
                    round(e.amount, 6),
                    e.counterparty,
                    e.item,
                    e.quantity,
                    e.memo,
                    e.reference,
                ]
                for e in w.env.truth_ledger.get(aid, [])
            ],
        }
    return state
