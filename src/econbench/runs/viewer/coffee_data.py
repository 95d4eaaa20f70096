"""What the viewer shows of a CoffeeBench run, read incrementally from its logs.

A 90-day run with models writes megabytes of events, so the page never receives the whole
log: this module keeps, per day, where that day's lines lie in ``events.jsonl`` and serves
one day (or one firm's part of one day) at a time. Deals and invoices are folded into small
tables as their events go by, and ``daily.jsonl`` rows are kept for the charts. Every call
first reads whatever the run appended since the last call, so a live run keeps growing.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

from econbench.coffee import events as catalogue
from econbench.coffee.config import FIRMS
from econbench.coffee.paper.clock import AGENT_STEP
from econbench.runs import layout
from econbench.runs.viewer.coffee_calendar import festivals
from econbench.runs.viewer.query import (
    ApiError,
    Ask,
    Query,
    Route,
    found,
    path_int,
    query_int,
    with_status,
)
from econbench.runs.viewer.search import MAX_HITS, search_lines
from econbench.runs.viewer.tail import JsonlTail, Line, is_line_start, read_from, read_span

MODEL_TYPES = frozenset(
    {catalogue.ModelCall.TYPE, catalogue.ModelRetry.TYPE, catalogue.Compaction.TYPE}
)
ACTION_TYPES = MODEL_TYPES | {catalogue.ToolCallApplied.TYPE, AGENT_STEP}
CALL_TYPES = frozenset({catalogue.ModelCall.TYPE, catalogue.Compaction.TYPE})
"""Events that each stand for one recorded model call (``record.sqlite``)."""
END_TYPES = frozenset({catalogue.RunEnd.TYPE, catalogue.RunHalted.TYPE})
PARTY_KEYS = ("firm", "seller", "buyer", "sender", "recipient", "issuer", "payer")
MAX_EVENTS_BYTES = 1 << 20


def actors(event: dict[str, Any]) -> list[str]:
    """The firms whose transcript holds this event: the actor of a tool or model event, the
    sender and the recipient of a message."""
    kind = event.get("type")
    if kind in ACTION_TYPES:
        firm = event.get("firm")
        return [firm] if isinstance(firm, str) else []
    if kind == catalogue.MessageSent.TYPE:
        return [p for p in (event.get("sender"), event.get("recipient")) if isinstance(p, str)]
    return []


@dataclass
class DayIndex:
    """Where one day's events lie in the log, and what they are."""

    day: int
    spans: list[list[int]] = field(default_factory=list)
    count: int = 0
    complete: bool = False
    types: Counter[str] = field(default_factory=Counter)
    firms: Counter[str] = field(default_factory=Counter)  # transcript entries per firm

    def add(self, line: Line) -> None:
        if self.spans and self.spans[-1][1] == line.start:
            self.spans[-1][1] = line.end
        else:
            self.spans.append([line.start, line.end])
        self.count += 1
        kind = str(line.row.get("type"))
        self.types[kind] += 1
        self.firms.update(actors(line.row))
        if kind == catalogue.DayEnd.TYPE or kind in END_TYPES:
            self.complete = True

    def summary(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "count": self.count,
            "complete": self.complete,
            "types": dict(self.types),
            "firms": dict(self.firms),
        }


class Ledger:
    """Deals and invoices with their current status, folded from the event stream."""

    def __init__(self) -> None:
        self.deals: dict[str, dict[str, Any]] = {}
        self.invoices: dict[str, dict[str, Any]] = {}
        self.version = 0
        self._delivery: dict[str, Any] | None = None  # the event just before, if a delivery

    def apply(self, ev: dict[str, Any]) -> None:
        kind = ev.get("type")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(ev)
            self.version += 1
        self._delivery = ev if kind == catalogue.Delivery.TYPE else None

    def _on_deal(self, ev: dict[str, Any]) -> None:
        qty, price = ev.get("qty") or 0, ev.get("price") or 0
        self.deals[str(ev.get("deal_id"))] = {
            "deal_id": ev.get("deal_id"),
            "day": ev.get("day"),
            "time": ev.get("time"),
            "seller": ev.get("seller"),
            "buyer": ev.get("buyer"),
            "item": ev.get("item"),
            "qty": qty,
            "price": price,
            "value": round(qty * price, 2),
            "terms": ev.get("terms"),
            "status": "in_transit",
            "delivered_day": None,
            "returned_kg": 0,
            "invoice_id": None,
            "note": None,
        }

    def _deal(self, ev: dict[str, Any]) -> dict[str, Any] | None:
        return self.deals.get(str(ev.get("deal_id")))

    def _set_status(self, ev: dict[str, Any], status: str, note: str | None = None) -> None:
        deal = self._deal(ev)
        if deal is not None:
            deal["status"] = status
            if note:
                deal["note"] = note

    def _on_delivery(self, ev: dict[str, Any]) -> None:
        self._set_status(ev, "delivered")
        deal = self._deal(ev)
        if deal is not None:
            deal["delivered_day"] = ev.get("day")

    def _on_shipment_delayed(self, ev: dict[str, Any]) -> None:
        self._set_status(ev, "delayed")

    def _on_shipment_lost(self, ev: dict[str, Any]) -> None:
        self._set_status(ev, "lost")

    def _on_deal_cancelled(self, ev: dict[str, Any]) -> None:
        self._set_status(ev, "cancelled", ev.get("reason"))

    def _on_invoice(self, ev: dict[str, Any]) -> None:
        deal_id = None
        before = self._delivery
        if before and (before.get("seller"), before.get("buyer")) == (
            ev.get("issuer"),
            ev.get("payer"),
        ):
            deal_id = before.get("deal_id")  # the world invoices right after delivering
            deal = self.deals.get(str(deal_id))
            if deal is not None:
                deal["invoice_id"] = ev.get("invoice_id")
        self._new_invoice(
            ev, ev.get("invoice_id"), ev.get("issuer"), ev.get("payer"), ev.get("amount"), deal_id
        )
        self.invoices[str(ev.get("invoice_id"))]["due_day"] = ev.get("due_day")

    def _new_invoice(
        self,
        ev: dict[str, Any],
        invoice_id: Any,
        issuer: Any,
        payer: Any,
        amount: Any,
        deal_id: Any,
        kind: str = "sale",
    ) -> None:
        self.invoices[str(invoice_id)] = {
            "invoice_id": invoice_id,
            "kind": kind,
            "deal_id": deal_id,
            "day": ev.get("day"),
            "issuer": issuer,
            "payer": payer,
            "amount": amount or 0,
            "due_day": ev.get("day"),
            "fees": 0.0,
            "credits": 0.0,
            "paid": 0.0,
            "status": "open",
            "settled_day": None,
        }

    def _invoice(self, ev: dict[str, Any]) -> dict[str, Any] | None:
        return self.invoices.get(str(ev.get("invoice_id")))

    def _settle(self, inv: dict[str, Any], status: str, day: Any) -> None:
        inv["status"], inv["settled_day"] = status, day

    def _on_payment(self, ev: dict[str, Any]) -> None:
        inv = self._invoice(ev)
        if inv is not None:
            inv["paid"] = round(inv["paid"] + (ev.get("amount") or 0), 2)
            self._settle(inv, "paid", ev.get("day"))

    def _on_late_fee(self, ev: dict[str, Any]) -> None:
        inv = self._invoice(ev)
        if inv is not None:
            inv["fees"] = round(inv["fees"] + (ev.get("amount") or 0), 2)

    def _on_bad_debt(self, ev: dict[str, Any]) -> None:
        inv = self._invoice(ev)
        if inv is not None:
            self._settle(inv, "bad_debt", ev.get("day"))

    def _on_return(self, ev: dict[str, Any]) -> None:
        deal = self._deal(ev)
        if deal is not None:
            deal["returned_kg"] += ev.get("qty") or 0
        inv = self._invoice(ev)
        credit = ev.get("credit") or 0
        refund_id = ev.get("refund_invoice_id")
        if refund_id:  # the invoice was already paid: the seller owes the buyer a refund
            self._new_invoice(
                ev,
                refund_id,
                ev.get("buyer"),
                ev.get("seller"),
                credit,
                ev.get("deal_id"),
                "refund",
            )
        elif inv is not None:
            inv["credits"] = round(inv["credits"] + credit, 2)
            if inv["status"] == "open" and inv["credits"] >= inv["amount"]:
                self._settle(inv, "closed", ev.get("day"))

    def tables(self, today: int | None) -> dict[str, Any]:
        """Deals and invoices as rows; an open invoice past its due day is ``overdue``."""
        invoices = []
        for inv in self.invoices.values():
            row = dict(inv)
            due = row.get("due_day")
            if (
                row["status"] == "open"
                and today is not None
                and isinstance(due, int)
                and today > due
            ):
                row["status"] = "overdue"
            invoices.append(row)
        return {"deals": list(self.deals.values()), "invoices": invoices, "as_of_day": today}


class CoffeeData:
    """The viewer's incremental reader of one CoffeeBench run directory (thread-safe)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._events = JsonlTail(run_dir / layout.EVENTS)
        self._daily = JsonlTail(run_dir / layout.DAILY)
        self._lock = threading.Lock()
        self._clear_events()
        self._daily_rows: list[dict[str, Any]] = []
        self._festivals: list[dict[str, Any]] | None = None

    def festivals(self) -> list[dict[str, Any]]:
        """The run's festival windows (read from ``config.json`` once it is there)."""
        if self._festivals is None:
            config = layout.read_json(self.run_dir / layout.CONFIG)
            if not isinstance(config, dict):
                return []
            self._festivals = festivals(config)
        return self._festivals

    def _clear_events(self) -> None:
        self._days: dict[int, DayIndex] = {}
        self._ledger = Ledger()
        self._count = 0
        self._model_firms: set[str] = set()
        self._usage: dict[str, Counter[str]] = {}
        self._end: dict[str, Any] | None = None
        self._calls: Counter[str] = Counter()  # model requests per firm so far
        self._call_of: dict[int, int] = {}  # event seq -> the firm's call index in the record

    def _refresh(self) -> None:
        reset, lines = self._events.poll()
        if reset:
            self._clear_events()
        for line in lines:
            self._take(line)
        reset, lines = self._daily.poll()
        if reset:
            self._daily_rows = []
        self._daily_rows.extend(line.row for line in lines)

    def _take(self, line: Line) -> None:
        ev = line.row
        day = ev.get("day")
        if not isinstance(day, int):
            return
        if ev.get("type") in END_TYPES and day not in self._days and day - 1 in self._days:
            day -= 1  # the clock moved past the last day before the run ended: keep it there
        index = self._days.get(day)
        if index is None:
            index = self._days[day] = DayIndex(day)
        index.add(line)
        self._count += 1
        self._ledger.apply(ev)
        kind = ev.get("type")
        if (
            kind in CALL_TYPES
            and isinstance(ev.get("firm"), str)
            and isinstance(ev.get("seq"), int)
        ):
            # A reply is one recorded call and a compaction one or more (``calls``), made in
            # the order their events are logged; an event shows its last call.
            made = ev.get("calls", 1) if isinstance(ev.get("calls"), int) else 1
            self._calls[ev["firm"]] += made
            self._call_of[ev["seq"]] = self._calls[ev["firm"]] - 1
        if kind == catalogue.ModelCall.TYPE and isinstance(ev.get("firm"), str):
            firm = ev["firm"]
            self._model_firms.add(firm)
            usage = self._usage.setdefault(firm, Counter())
            usage["calls"] += 1
            for key, value in (ev.get("usage") or {}).items():
                if isinstance(value, int | float):
                    usage[key] += value
            if isinstance(ev.get("cost_usd"), int | float):
                usage["cost_usd"] += ev["cost_usd"]
            else:  # a model with no price: shown as "unpriced", never as a cost of 0
                usage["unpriced_calls"] += 1
        elif kind in END_TYPES:
            self._end = {k: v for k, v in ev.items() if k != "seq"}

    def _firms(self) -> list[str]:
        seen = {r["firm"] for r in self._daily_rows if isinstance(r.get("firm"), str)}
        for index in self._days.values():
            seen.update(index.firms)
        return [f for f in FIRMS if f in seen or not seen] + sorted(seen - set(FIRMS))

    def index(self) -> dict[str, Any]:
        """What the page needs to lay out the run and to notice that it grew."""
        with self._lock:
            self._refresh()
            days = [self._days[d].summary() for d in sorted(self._days)]
            return {
                "events": self._count,
                "offset": self._events.offset,
                "days": days,
                "last_day": days[-1]["day"] if days else None,
                "firms": self._firms(),
                "model_firms": sorted(self._model_firms),
                "usage": {f: dict(u) for f, u in sorted(self._usage.items())},
                "daily_rows": len(self._daily_rows),
                "ledger_version": self._ledger.version,
                "end": self._end,
                "record": (self.run_dir / layout.RECORD).is_file(),
                "festivals": self.festivals(),
            }

    def day(self, day: int, firm: str | None = None) -> list[dict[str, Any]] | None:
        """The events of one day (only those naming ``firm``, if given); ``None`` for a day
        the log does not hold."""
        with self._lock:
            self._refresh()
            index = self._days.get(day)
            spans = [list(s) for s in index.spans] if index else None
        if spans is None:
            return None
        events = [ev for start, end in spans for ev in read_span(self._events.path, start, end)]
        if firm is not None:
            events = [ev for ev in events if firm in _parties(ev)]
        return events

    def transcript(self, firm: str, day: int) -> dict[str, Any] | None:
        """One firm's reasoning, tool calls, results and messages on one day, with the
        neighbouring days on which it has entries (for paging)."""
        events = self.day(day)
        if events is None:
            return None
        with self._lock:
            active = [d for d, idx in sorted(self._days.items()) if idx.firms.get(firm)]
            entries = [ev for ev in events if firm in actors(ev)]
            for ev in entries:
                call = self._call_of.get(ev.get("seq")) if ev.get("type") in CALL_TYPES else None
                if call is not None:
                    ev["record_call"] = call
        return {
            "firm": firm,
            "day": day,
            "entries": entries,
            "prev_day": max((d for d in active if d < day), default=None),
            "next_day": min((d for d in active if d > day), default=None),
        }

    def ledger(self) -> dict[str, Any]:
        with self._lock:
            self._refresh()
            today = max(self._days) if self._days else None
            return self._ledger.tables(today)

    def daily(self, start: int = 0) -> dict[str, Any]:
        """Daily snapshot rows from row ``start`` on (the page asks only for new ones)."""
        with self._lock:
            self._refresh()
            rows = self._daily_rows[max(start, 0) :]
            return {"rows": rows, "next": max(start, 0) + len(rows)}

    def search(self, query: str) -> dict[str, Any]:
        """The transcript entries (a firm's calls, replies and messages) holding ``query``,
        in log order, at most ``MAX_HITS``."""
        with self._lock:
            self._refresh()
            end = self._events.offset
        hits = []
        truncated = False
        for _, ev, where, text in search_lines(self._events.path, end, query):
            who = actors(ev)
            if not who:
                continue
            if len(hits) == MAX_HITS:
                truncated = True
                break
            hits.append(
                {
                    "day": ev.get("day"),
                    "time": ev.get("time"),
                    "seq": ev.get("seq"),
                    "type": ev.get("type"),
                    "firms": who,
                    "field": where,
                    "excerpt": text,
                }
            )
        return {"query": query, "hits": hits, "truncated": truncated}

    def events_from(self, offset: int, max_bytes: int = MAX_EVENTS_BYTES) -> dict[str, Any] | None:
        """Raw events from byte ``offset`` (a line start) on, complete lines only, about
        ``max_bytes`` at a time; ``None`` when ``offset`` is not where a line starts."""
        path = self._events.path
        if not path.exists():
            return {"events": [], "next": 0, "size": 0} if offset == 0 else None
        try:
            if not is_line_start(path, offset):
                return None
            lines, next_offset, size = read_from(path, offset, max(1, max_bytes))
        except OSError:
            return None
        return {"events": [line.row for line in lines], "next": next_offset, "size": size}

    # ------------------------------------------------------------------ what the viewer serves

    @staticmethod
    def headline(config: dict[str, Any], summary: dict[str, Any] | None) -> dict[str, Any]:
        """The figures the runs table sorts by: net income and policy per firm (empty until
        the run has a summary)."""
        firms = (summary or {}).get("firms")
        firms = firms if isinstance(firms, dict) else {}
        agents = config.get("agents") if isinstance(config.get("agents"), dict) else {}
        policies = {f: v.get("policy") for f, v in firms.items() if isinstance(v, dict)}
        if not policies:
            policies = {f: p for f, p in agents.items() if f != "default"}
        return {
            "net_income": {f: v.get("net_income") for f, v in firms.items() if isinstance(v, dict)},
            "policies": policies,
            "default_policy": agents.get("default", "scripted"),
        }

    @staticmethod
    def facets(config: dict[str, Any]) -> dict[str, Any]:
        """What the run list groups and filters by: the condition and every policy or
        model a firm plays (``scripted`` background included)."""
        from econbench.runs.coffee.config import condition_of

        agents = config.get("agents") if isinstance(config.get("agents"), dict) else {}
        actors = sorted({str(v) for v in agents.values() if isinstance(v, str) and v})
        return {"condition": condition_of(config), "actors": actors}

    def routes(self) -> dict[tuple[str, int], Route]:
        """The API's CoffeeBench endpoints, by name and path length (see the server)."""
        return {
            ("index", 1): lambda e, r, q: with_status(e, self.index()),
            ("day", 2): self._day_answer,
            ("transcript", 1): self._transcript_answer,
            ("ledger", 1): lambda e, r, q: self.ledger(),
            ("daily", 1): lambda e, r, q: with_status(e, self.daily(query_int(q, "from", 0))),
            ("events", 1): self._events_answer,
        }

    def bundle(self, ask: Ask, safe: re.Pattern[str]) -> None:
        """Ask every answer a static bundle holds of the run (``safe``: the names a file
        name may take)."""
        index = ask(["index"], None)
        ask(["ledger"], None)
        ask(["daily"], {"from": 0})
        firms = [f for f in index["firms"] if safe.match(f)]
        for info in index["days"]:
            day = info["day"]
            ask(["day", str(day)], None)
            for firm in firms:
                ask(["transcript"], {"firm": firm, "day": day})

    def _day_answer(self, entry: Any, rest: list[str], query: Query) -> Any:
        day = path_int(rest[1], "day")
        firm = (query.get("firm") or [None])[0]
        events = found(self.day(day, firm), "day")
        return {"day": day, "firm": firm, "events": events}

    def _transcript_answer(self, entry: Any, rest: list[str], query: Query) -> Any:
        firm = (query.get("firm") or [""])[0]
        if not firm:
            raise ApiError(HTTPStatus.BAD_REQUEST, "missing query parameter 'firm'")
        return found(self.transcript(firm, query_int(query, "day")), "day")

    def _events_answer(self, entry: Any, rest: list[str], query: Query) -> Any:
        offset = query_int(query, "from", 0)
        # A page is at most MAX_EVENTS_BYTES whatever is asked: ask again from "next".
        max_bytes = min(query_int(query, "max_bytes", MAX_EVENTS_BYTES), MAX_EVENTS_BYTES)
        out = self.events_from(offset, max_bytes)
        if out is None:
            raise ApiError(HTTPStatus.BAD_REQUEST, f"byte {offset} is not where a line starts")
        return with_status(entry, out)


def _parties(ev: dict[str, Any]) -> set[str]:
    return {v for k in PARTY_KEYS if isinstance(v := ev.get(k), str)}
