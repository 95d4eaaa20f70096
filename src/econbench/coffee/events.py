"""The event log and its catalogue: one typed definition per event type.

The log is append-only, one JSON object per line, numbered, never rewritten. Each line is a
header — ``seq``, ``day``, ``time``, ``type``, always in that order — then the event's
payload fields in the order its definition lists them. Events carry the simulated day and
time, never wall-clock time, so that the same seed and the same decisions give a
byte-identical log.

Every event type is defined here once, as a dataclass registered in ``EVENT_TYPES``:
its payload fields with their types, and a docstring saying when it is emitted. Emitters
build the definition (``World.log(events.Opex(firm=…, amount=…))``), so an unknown type or a
misspelt, missing or extra field fails at the call. A payload field may not take a header
name: the catalogue refuses such a definition at import, so a payload can never overwrite
the header. A field that some lines of a type carry and others do not defaults to
``ABSENT`` and is left out of the line (not written as ``null``). ``check_record`` checks a
logged line against its definition, value types included; tests run it over whole runs,
the hot path never does.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Protocol, TextIO, TypeVar

from econbench.jsonio import json_line

EVENT_SCHEMA_VERSION = 1
"""The version of the log's layout and of this catalogue; the run layer records it in
``meta.json``. Bump it when a type or a field is added, renamed, retyped or removed."""

HEADER = ("seq", "day", "time", "type")
"""The keys every line starts with, in order; no payload field may use one."""


class Absent:
    """The value of an optional field a line leaves out (``None`` is written as ``null``)."""

    _instance: ClassVar[Absent | None] = None

    def __new__(cls) -> Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT = Absent()


class Event:
    """One event's payload. ``TYPE`` is its name in the log, ``FIELDS`` its payload keys in
    log order, ``OPTIONAL`` those a line may leave out (their value is ``ABSENT``)."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()  # every field is keyword-only
    TYPE: ClassVar[str]
    FIELDS: ClassVar[tuple[str, ...]]
    OPTIONAL: ClassVar[frozenset[str]]

    def payload(self) -> dict[str, Any]:
        """The payload as the log writes it: every field in order, absent ones left out."""
        line = {}
        for name in self.FIELDS:
            value = getattr(self, name)
            if value is not ABSENT:
                line[name] = value
        return line


EVENT_TYPES: dict[str, type[Event]] = {}
"""Every event type the log may hold, by its ``type`` name, in catalogue order."""

E = TypeVar("E", bound=Event)


def event(name: str) -> Callable[[type[E]], type[E]]:
    """Register a payload class as the definition of event type ``name``.

    Refuses, at import, a payload field named like a header key, a type defined twice, and
    a definition without a docstring (the catalogue says when each event is emitted).
    """

    def register(cls: type[E]) -> type[E]:
        if not (cls.__dict__.get("__doc__") or "").strip():
            raise TypeError(f"event {name!r}: the definition needs a docstring saying when")
        if name in EVENT_TYPES:
            raise ValueError(f"event type {name!r} is defined twice")
        # Not frozen: a frozen dataclass sets each field through object.__setattr__, which
        # costs more than the rest of logging an event; nothing keeps an event after logging.
        defined = dataclass(slots=True, kw_only=True, match_args=False)(cls)
        names = tuple(f.name for f in fields(defined))
        clash = [n for n in names if n in HEADER]
        if clash:
            raise ValueError(
                f"event {name!r}: payload field(s) {clash} would overwrite the header {HEADER}"
            )
        defined.TYPE = name
        defined.FIELDS = names
        defined.OPTIONAL = frozenset(f.name for f in fields(defined) if f.default is ABSENT)
        loose = [
            f.name for f in fields(defined) if f.default is not MISSING and f.default is not ABSENT
        ]
        if loose:
            raise ValueError(f"event {name!r}: only ABSENT may be a default, not for {loose}")
        EVENT_TYPES[name] = defined
        return defined

    return register


def event_from_payload(type_: str, data: dict[str, Any]) -> Event:
    """The definition of a payload built outside the environment (the agents' events)."""
    cls = EVENT_TYPES.get(type_)
    if cls is None:
        raise KeyError(f"event type {type_!r} is not in the catalogue (coffee/events.py)")
    return cls(**data)


# ------------------------------------------------------------------ the agents
@event("tool_call")
class ToolCallApplied(Event):
    """An agent's decision was applied: a tool call with its result (``tool`` is null when
    the reply had no tool call, which counts as waiting)."""

    firm: str
    tool: str | None
    arguments: dict[str, Any]
    result: dict[str, Any]


@event("model_call")
class ModelCall(Event):
    """A model replied to an LLM agent: its text, calls, usage and cost (``cache_hit`` only
    when the reply came from a response cache, ``truncated`` only when the reply was larger
    than the harness keeps: its ``original_bytes``, ``kept_bytes`` and the ``parts`` cut)."""

    firm: str
    model: str
    text: str
    reasoning: str | None
    tool_calls: list[dict[str, Any]]
    ignored_calls: int
    stop_reason: str | None
    usage: dict[str, Any]
    cost_usd: float | None
    cache_hit: bool | Absent = ABSENT
    truncated: dict[str, Any] | Absent = ABSENT


@event("model_retry")
class ModelRetry(Event):
    """A model call failed with a retryable error and is about to be retried."""

    firm: str
    model: str
    attempt: int
    delay_s: float
    reason: str
    error_type: str


@event("compaction")
class Compaction(Event):
    """An LLM agent's conversation was summarised to fit its context window (``forced``:
    after an overflow rather than ahead of the threshold). ``usage`` and ``cost_usd`` cover
    every model call the compaction made; ``calls`` is their number when it is more than one
    (a summary asked for at the end of the conversation came back without text, and was asked
    for again over a transcript)."""

    firm: str
    model: str
    forced: bool
    messages_before: int
    messages_after: int
    summarised_messages: int
    summary: str
    usage: dict[str, Any]
    cost_usd: float | None
    cache_hit: bool | Absent = ABSENT
    truncated: dict[str, Any] | Absent = ABSENT
    calls: int | Absent = ABSENT


# ------------------------------------------------------------------ the market
@event("listing")
class ListingPosted(Event):
    """A firm posted a listing, or updated its open listing of the item (``updated``)."""

    firm: str
    listing_id: str
    item: str
    qty: int
    price: float
    terms: int
    updated: bool


@event("offer")
class OfferMade(Event):
    """A buyer made an offer on a listing."""

    offer_id: str
    listing_id: str
    buyer: str
    seller: str
    item: str
    qty: int
    price: float
    terms: int


@event("offer_rejected")
class OfferRejected(Event):
    """A pending offer was rejected because its listing sold out."""

    offer_id: str
    buyer: str
    seller: str
    reason: str


@event("offer_withdrawn")
class OfferWithdrawn(Event):
    """A buyer withdrew its pending offer."""

    offer_id: str
    buyer: str


@event("message")
class MessageSent(Event):
    """A firm sent a message to another."""

    message_id: str
    sender: str
    recipient: str
    title: str
    body: str


@event("retail_price")
class RetailPrice(Event):
    """A retailer set its storefront price of an item (0 delists it)."""

    firm: str
    item: str
    price: float
    previous: float


# ------------------------------------------------------------ deals and money
@event("deal")
class DealStruck(Event):
    """A seller accepted an offer: a binding deal, the goods taken from its stock."""

    deal_id: str
    offer_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    price: float
    terms: int
    seller_cost: float


@event("shipment_lost")
class ShipmentLost(Event):
    """A morning's shipping roll lost a deal's goods in transit; the seller writes them off."""

    deal_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    writeoff: float


@event("shipment_delayed")
class ShipmentDelayed(Event):
    """A morning's shipping roll delayed a deal's delivery by a day."""

    deal_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    new_delivery_day: int


@event("invoice")
class InvoiceIssued(Event):
    """A delivery invoiced the buyer (logged just before the delivery itself)."""

    invoice_id: str
    issuer: str
    payer: str
    amount: float
    due_day: int


@event("delivery")
class Delivery(Event):
    """A deal's goods reached the buyer's stock."""

    deal_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    price: float


@event("deal_cancelled")
class DealCancelled(Event):
    """A deal was called off before delivery (a party went bankrupt); the goods went back
    to the seller."""

    deal_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    reason: str


@event("payment")
class Payment(Event):
    """A payer settled an invoice: all that was outstanding on it."""

    invoice_id: str
    payer: str
    issuer: str
    amount: float


@event("return")
class Return(Event):
    """A buyer returned kg of a delivery and was credited (``refund_invoice_id``: the refund
    invoice issued when the purchase invoice was already settled, else null)."""

    invoice_id: str
    deal_id: str
    buyer: str
    seller: str
    item: str
    qty: int
    credit: float
    reason: str
    refund_invoice_id: str | None


@event("late_fee")
class LateFee(Event):
    """An evening charged a late fee on an overdue invoice."""

    invoice_id: str
    issuer: str
    payer: str
    amount: float


@event("bad_debt")
class BadDebt(Event):
    """A bankrupt firm's unpaid invoice was booked as bad debt by its creditor."""

    invoice_id: str
    creditor: str
    debtor: str
    amount: float


# -------------------------------------------------------- the books and stock
@event("opex")
class Opex(Event):
    """09:00: a live firm paid its fixed opex of the day."""

    firm: str
    amount: float


@event("writedown")
class Writedown(Event):
    """A receipt of stock (a purchase, a return, a batch) was written down to its item's
    ceiling."""

    firm: str
    item: str
    qty: int
    amount: float
    cause: str
    ceiling_per_kg: float


@event("production")
class ProductionStarted(Event):
    """A farm started a production batch."""

    firm: str
    batch_id: str
    item: str
    qty: int
    cost: float
    ready_day: int


@event("roast")
class RoastStarted(Event):
    """A roaster started a roast batch from green coffee."""

    firm: str
    batch_id: str
    green_item: str
    green_qty: int
    item: str
    qty: int
    labour: float
    ready_day: int


@event("production_landed")
class ProductionLanded(Event):
    """09:00: a farm's production batch landed in its stock."""

    firm: str
    batch_id: str
    item: str
    qty: int


@event("roast_landed")
class RoastLanded(Event):
    """09:00: a roaster's roast batch landed in its stock."""

    firm: str
    batch_id: str
    item: str
    qty: int


@event("consumer_sale")
class ConsumerSaleMade(Event):
    """19:00: a retailer sold an item to consumers."""

    firm: str
    item: str
    qty: int
    price: float
    revenue: float


@event("spoilage")
class Spoilage(Event):
    """19:00: stock spoiled, on hand or (with ``deal_id``) in transit at the seller's cost."""

    firm: str
    item: str
    qty: int
    value: float
    deal_id: str | Absent = ABSENT


@event("bankruptcy")
class Bankruptcy(Event):
    """09:00: a firm with negative cash after opex failed and left the market
    (``bad_debt``: what it left unpaid, by creditor)."""

    firm: str
    cash: float
    bad_debt: dict[str, float]


@event("batch_written_off")
class BatchWrittenOff(Event):
    """A bankrupt firm's pending production or roast batch was written off."""

    firm: str
    batch_id: str
    kind: str
    item: str
    qty: int
    value: float


@event("closing_writedown")
class ClosingWritedown(Event):
    """At the close: a firm's remaining stock was valued at the economy's cost of making it."""

    firm: str
    amount: float
    by_item: dict[str, float]
    evenings_missed: int


@event("closing_opex")
class ClosingOpex(Event):
    """At the close: a firm was charged the fixed opex of horizon days it did not pay."""

    firm: str
    days: int
    amount: float


# -------------------------------------------------------------------- the run
@event("day_end")
class DayEnd(Event):
    """19:00, after the evening's rules: the day is over (the log is flushed here)."""

    focal_net_income: float


@event("run_end")
class RunEnd(Event):
    """The run finished: the horizon was reached or the evaluated firm failed."""

    days: int
    ended_early: bool


@event("run_stopped")
class RunHalted(Event):
    """The run stopped on a non-transient model error; it can be resumed."""

    error_type: str
    error: str


LANDED: dict[str, type[Event]] = {"production": ProductionLanded, "roast": RoastLanded}
"""The landing event of each batch kind."""


# ------------------------------------------------------------ checking a line
def check_record(record: dict[str, Any]) -> list[str]:
    """What is wrong with one logged line against its definition (empty when it conforms):
    the header, an unknown type, missing, extra or misordered keys, values of the wrong
    type. For tests and audits, not the hot path."""
    keys = tuple(record)
    if keys[: len(HEADER)] != HEADER:
        return [f"the line does not start with the header {HEADER}: {keys[: len(HEADER)]}"]
    cls = EVENT_TYPES.get(record["type"])
    if cls is None:
        return [f"event type {record['type']!r} is not in the catalogue"]
    problems: list[str] = []
    payload = keys[len(HEADER) :]
    expected = tuple(n for n in cls.FIELDS if n in payload or n not in cls.OPTIONAL)
    if payload != expected:
        problems.append(f"{cls.TYPE}: keys {payload}, the catalogue says {expected}")
    hints = typing.get_type_hints(cls)
    for name in payload:
        if name in hints and not _conforms(record[name], hints[name]):
            problems.append(f"{cls.TYPE}.{name}: {record[name]!r} is not {hints[name]}")
    return problems


def _conforms(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is dict:
        key_hint, value_hint = typing.get_args(hint)
        return isinstance(value, dict) and all(
            _conforms(k, key_hint) and _conforms(v, value_hint) for k, v in value.items()
        )
    if origin is list:
        (item_hint,) = typing.get_args(hint)
        return isinstance(value, list) and all(_conforms(v, item_hint) for v in value)
    return isinstance(value, hint)


def catalogue_table() -> str:
    """The catalogue as the Markdown table of docs/coffeebench.md §13 (a test keeps the two
    the same)."""
    rows = ["| type | emitted when | payload fields |", "| --- | --- | --- |"]
    for name, cls in EVENT_TYPES.items():
        when = " ".join((cls.__doc__ or "").split()).replace("``", "`")
        hints = typing.get_type_hints(cls)
        shown = ", ".join(
            f"`{n}` {_type_doc(hints[n])}" + (" (may be absent)" if n in cls.OPTIONAL else "")
            for n in cls.FIELDS
        )
        rows.append(f"| `{name}` | {when} | {shown} |")
    return "\n".join(rows)


def _type_doc(hint: Any) -> str:
    """A field's type in words a table cell can hold (no ``|``)."""
    if hint is Any:
        return "any"
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_type_doc(h) for h in typing.get_args(hint) if h is not Absent)
    if hint is type(None):
        return "null"
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.Any", "any")


# ------------------------------------------------------------------- the sinks
def dumps(obj: Any) -> str:
    return json_line(obj)


class EventSink(Protocol):
    def write(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NullSink:
    """Discards events (tests and benchmarks that only look at state)."""

    def write(self, event: dict[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


class MemorySink:
    """Keeps events in a list."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def write(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def close(self) -> None:
        return None


class JsonlSink:
    """Appends events to a JSONL file, flushing at every day end so a crash loses little."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: TextIO = path.open("a", encoding="utf-8")

    def write(self, event: dict[str, Any]) -> None:
        self._fh.write(dumps(event) + "\n")
        if event.get("type") == DayEnd.TYPE:
            self._fh.flush()

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()
