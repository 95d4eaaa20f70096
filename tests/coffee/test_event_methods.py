"""Each event definition behaves as the plain ``dataclass(slots=True, kw_only=True)`` it
describes: the same repr, equality, hashing and pattern-matching arguments, and a payload
that lists its fields in order, leaving out the absent ones."""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import pytest

from econbench.coffee.events import ABSENT, EVENT_TYPES, Event


def reference_of(cls: type[Event]) -> type:
    """The definition rebuilt as a plain slotted, keyword-only dataclass."""
    namespace: dict[str, Any] = {"__annotations__": dict(cls.__annotations__)}
    namespace.update({f.name: ABSENT for f in fields(cls) if f.default is ABSENT})
    plain = type(cls.__name__, (), namespace)
    plain.__qualname__ = cls.__qualname__
    return dataclass(slots=True, kw_only=True)(plain)


def sample(cls: type, shift: int = 0) -> Any:
    values = {f.name: [index + shift, "x"] for index, f in enumerate(fields(cls))}
    return cls(**values)


@pytest.mark.parametrize("name", list(EVENT_TYPES))
def test_an_event_reads_and_compares_as_its_plain_dataclass(name: str) -> None:
    cls = EVENT_TYPES[name]
    reference = reference_of(cls)
    event, twin, other = sample(cls), sample(cls), sample(cls, shift=1)
    assert is_dataclass(cls) and cls.__slots__ == reference.__slots__
    assert repr(event) == repr(sample(reference))
    assert event == twin and (event != twin) is False
    assert event != other and (event == other) is False
    assert (event == sample(reference)) is False  # another class: never equal
    assert event.__eq__(sample(reference)) is NotImplemented
    assert cls.__hash__ is None and reference.__hash__ is None
    with pytest.raises(TypeError):
        hash(event)
    assert cls.__match_args__ == reference.__match_args__
    assert not hasattr(event, "__dict__")


def test_an_optional_field_left_out_reads_absent() -> None:
    cls = EVENT_TYPES["spoilage"]
    optional = [f.name for f in fields(cls) if f.default is ABSENT]
    required = {f.name: 1 for f in fields(cls) if f.default is not ABSENT}
    assert optional, "spoilage has an optional field"
    assert f"{optional[0]}=ABSENT" in repr(cls(**required))


@pytest.mark.parametrize("name", list(EVENT_TYPES))
def test_the_payload_is_every_field_in_order_absent_ones_left_out(name: str) -> None:
    cls = EVENT_TYPES[name]
    event = sample(cls)
    assert event.payload() == {f.name: getattr(event, f.name) for f in fields(cls)}
    assert list(event.payload()) == list(cls.FIELDS)
    required = {f.name: 1 for f in fields(cls) if f.default is not ABSENT}
    assert cls(**required).payload() == required
