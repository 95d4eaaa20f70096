"""The world's state as plain data: pydantic models that round-trip through JSON.

Money is held in integer cents so that the ledger adds up exactly (net income equals the
change in equity to the cent); tools and logs speak dollars. Quantities are whole kg.
Ids are deterministic counters (``L1``, ``O1``, ``D1``, ``INV1``, ``M1``, ``B1``).
"""

from __future__ import annotations

import itertools
import operator
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field
from pydantic_core import to_json

Cents = int


def _assign(model: BaseModel, name: str, value: Any) -> None:
    """``StateModel.__setattr__``, a plain function so that ``Record`` calls it directly
    (a ``super()`` call per assignment would cost a third of it)."""
    fields = model.__dict__
    if name in fields:
        fields[name] = value
        model.__pydantic_fields_set__.add(name)
    else:
        BaseModel.__setattr__(model, name, value)


class StateModel(BaseModel):
    """A model of the state, assigned to tens of thousands of times a run (clocks, counters,
    stock). An assignment to a field does what pydantic's own ``__setattr__`` does for it
    (these models validate no assignment and have no private attributes, frozen fields or
    properties with setters): store the value, mark the field set. Pydantic's goes through
    a memoised handler per name and costs twice as much. A field is recognised as a key of
    the instance's ``__dict__``, which holds exactly the fields (a lookup there is cheaper
    than reading the class's ``__pydantic_fields__`` through the instance); anything else
    (not a field, or a field deleted) takes pydantic's path.

    Reading a field is slow too: ``BaseModel`` defines ``__getattr__``, so Python cannot
    specialise attribute reads on these models and each takes several dictionary lookups.
    Hot code reads a model's field once into a local, and a view that shows many fields of
    a record reads them from ``vars(record)`` (its ``__dict__``: the fields, by name)."""

    __setattr__ = _assign


class Record(StateModel):
    """A flat record of the state (scalars only). Every assignment is reported to the
    ``StateJson``s whose kept text holds the record, so a checkpoint re-serialises only
    the records that changed since the last one."""

    def __setattr__(self, name: str, value: Any) -> None:
        if _watches:
            _seen(id(self))
        _assign(self, name, value)

    def __delattr__(self, name: str) -> None:
        if _watches:
            _seen(id(self))
        BaseModel.__delattr__(self, name)


def _seen(record_id: int) -> None:
    for watch in _watches:
        if record_id in watch.watched:
            watch.dirty.add(record_id)


def to_cents(dollars: float) -> Cents:
    return round(dollars * 100)


def dollars(cents: Cents) -> float:
    return cents / 100


class Stock(StateModel):
    """On-hand stock of one item at weighted-average cost; spoilage fractions carry over."""

    qty: int = 0
    value: Cents = 0
    spoil_carry: float = 0.0
    traded: bool = False
    """Goods of this stock changed hands by deal (its spoilage fraction counts at the close)."""
    lots: dict[str, float] = Field(default_factory=dict)
    """Per delivered purchase still returnable (deal id), the kg of it still in this pool.

    Stock is pooled at average cost, so every outflow takes the same share of every lot
    (``rules/lots.py``); a return may take back only the kg its own deal still has here.
    """

    def unit_cost(self) -> float:
        return self.value / self.qty if self.qty else 0.0

    def take_value(self, qty: int) -> Cents:
        """The cost of ``qty`` kg at average cost (the whole value when taking everything)."""
        if qty >= self.qty:
            return self.value
        return round(self.value * qty / self.qty)


class Books(Record):
    """Cumulative income-statement buckets in cents, from day 0."""

    revenue: Cents = 0
    returns: Cents = 0
    cogs: Cents = 0
    opex_fixed: Cents = 0
    spoilage: Cents = 0
    shipment_writeoffs: Cents = 0
    production_writeoffs: Cents = 0
    bad_debt: Cents = 0
    writedowns: Cents = 0
    interest_expense: Cents = 0
    interest_income: Cents = 0
    closing_writedown: Cents = 0
    """At the run's close: stock still held, written down to the economy's cost of making it."""
    closing_opex: Cents = 0
    """At the run's close: fixed opex of the horizon days the firm did not pay (bankrupt, or
    the run ended early), so leaving the market never saves fixed costs."""

    @property
    def opex(self) -> Cents:
        return (
            self.opex_fixed
            + self.spoilage
            + self.shipment_writeoffs
            + self.production_writeoffs
            + self.bad_debt
            + self.writedowns
        )

    @property
    def net_revenue(self) -> Cents:
        return self.revenue - self.returns

    @property
    def closing(self) -> Cents:
        return self.closing_writedown + self.closing_opex

    @property
    def net_income_before_closing(self) -> Cents:
        return (
            self.net_revenue - self.cogs - self.opex - self.interest_expense + self.interest_income
        )

    @property
    def net_income(self) -> Cents:
        """The score: the one income-statement formula, closing lines included."""
        return self.net_income_before_closing - self.closing

    def minus(self, start: Books | None) -> Books:
        """The period's sums: these books less the books at the period's start."""
        if start is None:
            return self.model_copy()
        return Books(**{k: getattr(self, k) - getattr(start, k) for k in type(self).model_fields})


class Clock(StateModel):
    """An agent's own clock for the current day, and what woke it."""

    minute: int = 0
    parked: bool = True
    needs_observation: bool = False
    reasons: list[str] = Field(default_factory=list)
    actions_today: int = 0
    acted_today: bool = False


class Firm(StateModel):
    id: str
    role: Literal["farmer", "roaster", "retailer"]
    cash: Cents
    stock: dict[str, Stock]
    inventory_cap: int
    opex_per_day: Cents
    retail_prices: dict[str, Cents] = Field(default_factory=dict)
    books: Books = Field(default_factory=Books)
    books_by_day: list[Books] = Field(default_factory=list)
    """The books as they stood at the start of each day (for period reports)."""
    produced_today: dict[str, int] = Field(default_factory=dict)
    roasted_today_kg: int = 0
    bankrupt: bool = False
    bankrupt_day: int | None = None
    clock: Clock = Field(default_factory=Clock)
    seen_deal_seq: int = 0
    """Deals with a sequence number above this are news for the next observation."""
    notices: list[str] = Field(default_factory=list)
    """Facts for the next observation: losses, cancellations, bankruptcies of others."""
    tool_calls: dict[str, int] = Field(default_factory=dict)
    idle_days: int = 0
    messages_read: int = 0
    spoiled_kg: dict[str, int] = Field(default_factory=dict)
    roasted_green_kg: int = 0
    roasted_green_by_item: dict[str, int] = Field(default_factory=dict)
    """Cumulative green kg roasted per green item: output rounds on the running total, so
    splitting a roast into small lots never beats the yield (``rules/roasting.py``)."""
    unknown_tool_calls: int = 0
    """Calls of tool names the firm does not have (counted apart from ``tool_calls``)."""


class Listing(Record):
    id: str
    seller: str
    item: str
    qty: int
    price: Cents
    terms: int
    day: int
    minute: int
    status: Literal["open", "sold_out", "closed"] = "open"


class Offer(Record):
    id: str
    listing_id: str
    buyer: str
    seller: str
    item: str
    qty: int
    price: Cents
    terms: int
    message: str = ""
    day: int
    minute: int
    status: Literal["pending", "accepted", "rejected", "withdrawn"] = "pending"
    resolved_day: int | None = None


class Deal(Record):
    id: str
    seq: int
    offer_id: str
    listing_id: str
    seller: str
    buyer: str
    item: str
    qty: int
    price: Cents
    terms: int
    day: int
    minute: int
    reserved_value: Cents
    """The seller's cost of the goods (never shown to the buyer)."""
    ship_day: int
    status: Literal["pending", "delayed", "delivered", "lost", "cancelled"] = "pending"
    delivered_day: int | None = None
    invoice_id: str | None = None
    returned_qty: int = 0
    returned_value: Cents = 0
    spoiled_qty: int = 0
    """kg that spoiled in transit (goods in transit spoil like goods on hand)."""
    spoil_carry: float = 0.0
    """The fraction of a kg of spoilage these goods carry (taken from the seller's stock,
    handed to the buyer's on delivery)."""
    booked_unit: Cents = 0
    """What the buyer booked per kg on delivery: the price, or the ceiling if lower."""
    buyer_writedown: Cents = 0
    """The write-down the buyer booked on delivery (price above the ceiling); a return
    reverses the returned kg's share of it and never more."""

    @property
    def shipped_qty(self) -> int:
        """kg still on their way (or delivered): the deal's kg less what spoiled in transit."""
        return self.qty - self.spoiled_qty


class Invoice(Record):
    id: str
    kind: Literal["sale", "refund"] = "sale"
    deal_id: str | None = None
    issuer: str
    """The creditor: the seller for a sale, the buyer for a refund of a paid return."""
    payer: str
    item: str | None = None
    qty: int = 0
    price: Cents = 0
    principal: Cents
    credits: Cents = 0
    fees: Cents = 0
    issue_day: int
    due_day: int
    status: Literal["open", "paid", "closed", "bad_debt"] = "open"
    settled_day: int | None = None

    @property
    def outstanding_principal(self) -> Cents:
        return self.principal - self.credits

    @property
    def outstanding(self) -> Cents:
        return self.principal + self.fees - self.credits


def total_outstanding(invoices: Iterable[Invoice]) -> Cents:
    """The sum of ``Invoice.outstanding`` over ``invoices``, its formula applied inline: a
    property call per invoice was a third of a balance sheet's cost."""
    return sum([i.principal + i.fees - i.credits for i in invoices])


class Message(Record):
    id: str
    sender: str
    recipient: str
    title: str
    body: str
    day: int
    minute: int
    read: bool = False
    ref_listing_id: str | None = None
    ref_offer_id: str | None = None


class Batch(Record):
    """Pending production or roast output: paid for, not yet in stock."""

    id: str
    firm: str
    kind: Literal["production", "roast"]
    item: str
    qty: int
    value: Cents
    ready_day: int


class ConsumerSale(Record):
    day: int
    firm: str
    item: str
    qty: int
    price: Cents


class Counters(StateModel):
    listing: int = 0
    offer: int = 0
    deal: int = 0
    invoice: int = 0
    message: int = 0
    batch: int = 0
    event: int = 0


class Hidden(StateModel):
    """Draws made once per run that no tool may reveal."""

    loyalty: dict[str, float]
    demand_noise: dict[str, list[float]]


class WorldState(StateModel):
    seed: int
    day: int = 0
    phase: Literal["morning", "business", "evening", "closed"] = "morning"
    firms: dict[str, Firm]
    listings: dict[str, Listing] = Field(default_factory=dict)
    offers: dict[str, Offer] = Field(default_factory=dict)
    deals: dict[str, Deal] = Field(default_factory=dict)
    invoices: dict[str, Invoice] = Field(default_factory=dict)
    messages: dict[str, Message] = Field(default_factory=dict)
    batches: dict[str, Batch] = Field(default_factory=dict)
    consumer_sales: list[ConsumerSale] = Field(default_factory=list)
    counters: Counters = Field(default_factory=Counters)
    hidden: Hidden
    ended: bool = False
    closed: bool = False
    """The closing valuation has been booked (at the end of the run's last evening)."""


class StateJson:
    """``model_dump_json()`` of a state, byte for byte, at a fraction of the cost.

    A checkpoint serialises the whole world at every day's end, and most of it (past deals,
    invoices, offers, the books of every past day) has not changed since the last one. So a
    ``Record`` in a collection is serialised once, by pydantic, and its text kept until an
    assignment to it (``Record.__setattr__`` tells every ``StateJson`` that watches it);
    the texts of ``CHUNK`` consecutive records are kept joined too, so that an unchanged
    stretch of a collection costs one comparison. Everything else is serialised by
    pydantic as before.
    Anything unexpected (a value of another type than declared, a key that is not a string)
    falls back to ``model_dump_json`` itself.
    """

    CHUNK = 32

    def __init__(self) -> None:
        self._watch = _Watch()
        self._chunks: dict[tuple[int, str, int], _Chunk] = {}
        self._texts: dict[int, tuple[Any, Any, str]] = {}
        """Each record's text by ``id``: (the record, held alive; its key; its text)."""
        _watches.append(self._watch)

    def __del__(self) -> None:
        if self._watch in _watches:
            _watches.remove(self._watch)

    def __call__(self, state: BaseModel) -> str:
        plan = _plan_of(type(state))
        if plan is None:
            return state.model_dump_json()
        used: _Used = {}
        out: list[str] = []
        watch, texts = self._watch, self._texts
        for record_id in watch.dirty:
            texts.pop(record_id, None)
        try:
            self._render(state, plan, used, out)
        except _Unexpected:
            self._reset()
            return state.model_dump_json()
        except BaseException:
            self._reset()
            raise
        self._chunks = used
        watch.dirty.clear()
        held = sum(len(chunk.ids) for chunk in used.values())
        if len(watch.watched) > 2 * held + 1024 or len(texts) > 2 * held + 1024:
            live = set().union(*(chunk.ids for chunk in used.values()))
            watch.watched = live  # forget the records long gone
            self._texts = {i: e for i, e in texts.items() if i in live}
        return "".join(out)

    def _reset(self) -> None:
        self._chunks = {}
        self._texts = {}
        self._watch.watched = set()
        self._watch.dirty.clear()

    def _render(self, obj: BaseModel, plan: _Plan, used: _Used, out: list[str]) -> None:
        """Append ``obj``'s text to ``out`` in pieces (joined once, at the end)."""
        out.append("{")
        for i, step in enumerate(plan):
            if i:
                out.append(",")
            if isinstance(step, _Plain):
                out.append(obj.model_dump_json(include=step.names)[1:-1])
                continue
            value = getattr(obj, step.name)
            if type(value) is not (dict if step.keyed else list):
                raise _Unexpected
            out.append(f'"{step.name}":' + ("{" if step.keyed else "["))
            if step.plan is None:
                self._records(obj, step, value, used, out)
            else:
                self._nested(step, value, used, out)
            out.append("}" if step.keyed else "]")
        out.append("}")

    def _nested(self, step: _Records, value: Any, used: _Used, out: list[str]) -> None:
        plan = step.plan
        assert plan is not None
        pairs = value.items() if step.keyed else zip(itertools.repeat(None), value)
        for i, (key, element) in enumerate(pairs):
            if type(element) is not step.model:
                raise _Unexpected
            if i:
                out.append(",")
            if key is not None:
                out.append(_key_json(key) + ":")
            self._render(element, plan, used, out)

    def _records(
        self,
        owner: BaseModel,
        step: _Records,
        value: dict[str, Any] | list[Any],
        used: _Used,
        out: list[str],
    ) -> None:
        """Append the collection's records, chunk by chunk, to ``out`` (no brackets).

        A kept chunk whose records (by identity) and keys are the same and unchanged is
        reused as it is; one that only gained records at its end (the last chunk of a
        collection that grows) keeps its text and appends theirs."""
        if isinstance(value, dict):
            records: list[Any] = list(value.values())
            keys: list[Any] | None = list(value)
        else:
            records, keys = value, None
        dirty, size, kept = self._watch.dirty, self.CHUNK, self._chunks
        owner_id, name = id(owner), step.name
        for start in range(0, len(records), size):
            end = start + size
            where = (owner_id, name, start)
            part = records[start:end]
            names = None if keys is None else tuple(keys[start:end])
            chunk = kept.get(where)
            if chunk is None or (dirty and not dirty.isdisjoint(chunk.ids)):
                chunk = self._make_chunk(step, part, names)
            elif not _same(chunk.records, part) or chunk.keys != names:
                held = len(chunk.records)
                if (
                    held < len(part)
                    and _same(chunk.records, part[:held])
                    and (names is None or names[:held] == chunk.keys)
                ):
                    chunk = self._extend_chunk(step, chunk, part, names)
                else:
                    chunk = self._make_chunk(step, part, names)
            used[where] = chunk
            if start:
                out.append(",")
            out.append(chunk.text)

    def _make_chunk(self, step: _Records, part: list[Any], names: tuple[Any, ...] | None) -> _Chunk:
        """A chunk's text from its records' texts, serialising only the new or changed."""
        text = ",".join(self._pieces(step, part, names))
        return _Chunk(tuple(part), names, tuple(map(id, part)), text)

    def _extend_chunk(
        self,
        step: _Records,
        chunk: _Chunk,
        part: list[Any],
        names: tuple[Any, ...] | None,
    ) -> _Chunk:
        """``chunk`` (still valid) followed by the records appended after it."""
        held = len(chunk.records)
        new = self._pieces(step, part[held:], None if names is None else names[held:])
        ids = chunk.ids + tuple(map(id, part[held:]))
        return _Chunk(tuple(part), names, ids, ",".join([chunk.text, *new]))

    def _pieces(self, step: _Records, part: list[Any], names: tuple[Any, ...] | None) -> list[str]:
        """Each record's text (``"key":`` first when keyed), serialising only those whose
        kept text is missing or stale. A record serialised here is watched from now on; one
        with a kept text already is (the kept texts are always of watched records)."""
        if set(map(type, part)) != {step.model}:
            raise _Unexpected
        if names is not None and set(map(type, names)) != {str}:
            raise _Unexpected
        texts, watched = self._texts, self._watch.watched
        serialise = step.model.__pydantic_serializer__.to_json
        pieces: list[str] = []
        for key, record in zip([None] * len(part) if names is None else names, part, strict=True):
            entry = texts.get(id(record))
            if entry is None or entry[1] != key:
                text = serialise(record).decode()
                entry = (record, key, text if key is None else _key_json(key) + ":" + text)
                texts[id(record)] = entry
                watched.add(id(record))  # from now on, an assignment to it is seen
            pieces.append(entry[2])
        return pieces


def _same(kept: tuple[Any, ...], part: list[Any]) -> bool:
    """The same objects (identity, not equality: an equal copy is not watched)."""
    return len(kept) == len(part) and not any(map(operator.is_not, kept, part))


_Used = dict[tuple[int, str, int], "_Chunk"]
"""The chunks a call used, by (owner's id, field, first index)."""


@dataclass(eq=False)
class _Watch:
    """What one ``StateJson`` watches (ids of records in its kept chunks, held alive by
    them, so an id cannot be reused) and which of those were assigned to since."""

    watched: set[int] = field(default_factory=set)
    dirty: set[int] = field(default_factory=set)


_watches: list[_Watch] = []


@dataclass(frozen=True)
class _Chunk:
    """Up to ``CHUNK`` records of a collection, held alive, and their text."""

    records: tuple[Any, ...]
    keys: tuple[Any, ...] | None
    ids: tuple[int, ...]
    text: str


class _Unexpected(Exception):
    """The state holds something the fast path does not reproduce exactly."""


@dataclass(frozen=True)
class _Plain:
    """Fields serialised by pydantic in one call."""

    names: frozenset[str]


@dataclass(frozen=True)
class _Records:
    """A ``dict[str, M]`` or ``list[M]`` field: flat ``Record``s (``plan is None``), or
    models that hold such collections themselves."""

    name: str
    model: type[BaseModel]
    keyed: bool
    plan: tuple[_Plain | _Records, ...] | None


_Plan = tuple[_Plain | _Records, ...]
_SCALARS = (int, float, str, bool, type(None))
_plans: dict[type, _Plan | None] = {}


def _plan_of(model: type[BaseModel]) -> _Plan | None:
    """How to serialise ``model``: groups of plain fields and collections of records
    (``None``: serialise it whole, it has no collection of records)."""
    if model not in _plans:
        _plans[model] = None  # a model that holds itself is serialised whole
        _plans[model] = _build_plan(model)
    return _plans[model]


def _build_plan(model: type[BaseModel]) -> _Plan | None:
    if not _is_simple(model):
        return None
    steps: list[_Plain | _Records] = []
    plain: list[str] = []
    for name, info in model.model_fields.items():
        records = _record_model(info.annotation)
        nested = None if records is None else _plan_of(records[0])
        if records is None or (nested is None and not _is_flat_record(records[0])):
            plain.append(name)
            continue
        if plain:
            steps.append(_Plain(frozenset(plain)))
            plain = []
        steps.append(_Records(name, records[0], records[1], nested))
    if plain:
        steps.append(_Plain(frozenset(plain)))
    if not any(isinstance(s, _Records) for s in steps):
        return None
    return tuple(steps)


def _is_simple(model: type[BaseModel]) -> bool:
    """Serialised field by field under the field's own name, nothing custom."""
    decorators = model.__pydantic_decorators__
    return (
        not model.model_computed_fields
        and not decorators.field_serializers
        and not decorators.model_serializers
        and all(
            f.alias is None and f.serialization_alias is None for f in model.model_fields.values()
        )
    )


def _is_flat_record(model: type[BaseModel]) -> bool:
    """A ``Record`` (assignments are seen) whose fields all hold immutable scalars."""
    return (
        issubclass(model, Record)
        and _is_simple(model)
        and all(_is_scalar(f.annotation) for f in model.model_fields.values())
    )


def _is_scalar(annotation: Any) -> bool:
    if annotation in _SCALARS:
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return all(isinstance(a, _SCALARS) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return all(_is_scalar(a) for a in get_args(annotation))
    return False


def _record_model(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """``(M, keyed)`` for ``dict[str, M]`` (keyed) or ``list[M]``, M a model; else None."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict and len(args) == 2 and args[0] is str:
        element, keyed = args[1], True
    elif origin is list and len(args) == 1:
        element, keyed = args[0], False
    else:
        return None
    if isinstance(element, type) and issubclass(element, BaseModel):
        return element, keyed
    return None


def _key_json(key: Any) -> str:
    """``key`` as pydantic writes a dict key; a key of printable ASCII without a quote or a
    backslash (every id) needs no escape, so it is only quoted."""
    if type(key) is not str:
        raise _Unexpected
    if key.isascii() and key.isprintable() and '"' not in key and "\\" not in key:
        return f'"{key}"'
    return to_json(key).decode()
