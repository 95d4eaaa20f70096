"""Reading the CoffeeBench ``paper`` conformance fixture (tests/coffee/data/paper_reference/).

It was captured by ``scripts/capture_coffee_reference.py`` from the reference CoffeeBench run
offline against ``ScriptedServer``: ``scenario.json`` (the scripted decisions per firm and the
run parameters), ``requests.jsonl`` (every request body exactly as the reference sent it, per
firm in order) and ``economy.json`` (the reference's final result, daily stats, truth ledgers,
books and marketplace state).

    scenario = load_scenario()
    with ScriptedServer(scenario) as server:
        ...  # run econbench's paper condition with each firm's client at server.base_url(firm)
        for firm in scenario.firms:
            assert server.bodies(firm) == [r.body for r in requests_of(firm)]
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.coffee.paper_reference.server import Scenario

DATA = Path(__file__).resolve().parents[1] / "data" / "paper_reference"


@dataclass(frozen=True)
class FixtureRequest:
    """One request the reference sent. ``body`` is the text as sent (its UTF-8 encoding is the
    raw bytes); ``kind`` is "turn" or "summary" (a compaction); ``reply_index`` indexes the
    firm's scripted replies (turn) or summaries (summary), None past the script."""

    firm: str
    index: int
    path: str
    kind: str
    reply_index: int | None
    body: str

    @property
    def raw(self) -> bytes:
        return self.body.encode("utf-8")

    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@functools.lru_cache(maxsize=1)
def scenario_dict() -> dict[str, Any]:
    return json.loads((DATA / "scenario.json").read_text(encoding="utf-8"))


def load_scenario() -> Scenario:
    """The scenario, ready for ``ScriptedServer``."""
    return Scenario.from_dict(scenario_dict())


def params() -> dict[str, Any]:
    """The run parameters: seed, max_days, main_agent, models per firm, reference commit."""
    return dict(scenario_dict()["params"])


@functools.lru_cache(maxsize=1)
def _requests() -> tuple[FixtureRequest, ...]:
    out = []
    with (DATA / "requests.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                out.append(
                    FixtureRequest(
                        firm=d["firm"],
                        index=int(d["index"]),
                        path=d["path"],
                        kind=d["kind"],
                        reply_index=d["reply_index"],
                        body=d["body"],
                    )
                )
    return tuple(out)


def requests() -> dict[str, list[FixtureRequest]]:
    """Every request per firm, in the order the firm sent them."""
    out: dict[str, list[FixtureRequest]] = {}
    for r in _requests():
        out.setdefault(r.firm, []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: r.index)
    return out


def requests_of(firm: str) -> list[FixtureRequest]:
    return requests().get(firm, [])


@functools.lru_cache(maxsize=1)
def _economy() -> str:
    return (DATA / "economy.json").read_text(encoding="utf-8")


def economy() -> dict[str, Any]:
    """The reference's economy at the end (a fresh copy): ``result`` (what ``env.run()``
    returned: per-agent equity, net income, audit, usage), ``daily_stats``, ``truth_ledger``
    (per firm, every entry with id, day, type, amount, counterparty, item, quantity, memo,
    reference), ``agent_books`` (cash, inventory, inventory_total_cost, AR, AP,
    initial_equity), ``marketplace`` (items, listings, offers, deals, messages),
    ``consumer_sales_log``, ``demand_paths``, ``retailer_loyalty``, bankruptcies,
    ``final_available_at`` and ``compactions`` (per model firm)."""
    return json.loads(_economy())
