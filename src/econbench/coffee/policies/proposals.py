"""The proposal convention: one line of a message that names a trade.

A proposal names a side, a quantity, an item and a price, optionally payment terms::

    BUY 30 kg green_coffee_kg at $2.40 terms 30      (the sender wants to buy)
    SELL 20 kg roasted_coffee_kg at $9.50 terms 14   (the sender wants to sell)

A reply carries a kind word in front (its side is the replier's own)::

    ACCEPT SELL 30 kg green_coffee_kg at $2.40 terms 30, valid through day 14.
    COUNTER SELL 30 kg green_coffee_kg at $2.90 terms 30, valid through day 14.
    REJECT BUY 30 kg green_coffee_kg at $1.00.

Parsing is tolerant (case, ``$``, ``/kg``, item aliases, missing verb inferred from the two
firms' roles) and strict about numbers: a quantity is a whole number of kg in 1–10,000, a
price is finite, positive and at most $1,000/kg, terms are 0–90 days. Anything else — and
any text that is not one clear proposal — parses to ``None``. The parser only extracts these
fields; nothing else in a message has any effect.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from econbench.coffee.config import GREEN, GREEN_SPECIALTY, ROASTED, ROASTED_SPECIALTY

Kind = Literal["propose", "accept", "counter", "reject"]
Side = Literal["buy", "sell"]

DEFAULT_TERMS = 30
MAX_QTY = 10_000
MAX_PRICE = 1_000.0
MAX_TERMS = 90
MAX_LINES = 60
MAX_LINE_CHARS = 400


@dataclass(frozen=True)
class Proposal:
    """One structured line: ``side`` is the writer's own side of the trade."""

    kind: Kind
    side: Side
    item: str
    qty: int
    price: float
    terms: int = DEFAULT_TERMS
    valid_through: int | None = None


_KIND = re.compile(
    r"^[\s\W]*(accept(?:ed|s)?|agreed?|counter(?:[\s-]*offer)?|reject(?:ed|s)?|declined?)\b"
)
_KIND_MAP: dict[str, Kind] = {"acc": "accept", "agr": "accept", "cou": "counter", "rej": "reject"}
_VERB = re.compile(
    r"\b(buy|buying|bid|bidding|purchase|purchasing|sell|selling|ask|asking|supply|supplying)\b"
)
_BUY_VERBS = ("buy", "bid", "purchas")
_NUMBER = r"(-?)\s*\$?\s*(-?)(\d{1,7}(?:\.\d{1,4})?)(?![\w.]\d|\w)"
_QTY = re.compile(r"(-?)(\d{1,7}(?:\.\d+)?)\s*(?:kg|kgs|kilos?|kilograms?)\b")
_PRICE = re.compile(r"(?:\bat\b|@|\bfor\b|\bprice\s+of\b|\bprice\b)\s*" + _NUMBER)
_DOLLAR = re.compile(r"(-?)\s*\$\s*(-?)(\d{1,7}(?:\.\d{1,4})?)(?![\w.]\d|\w)")
_TERMS = re.compile(r"\b(?:payment\s+)?(?:terms|net)\s*(?:of\s*)?(?:=|:)?\s*(-?\d{1,4})\b")
_VALID = re.compile(r"\b(?:through|thru|until|till)\s+day\s+(\d{1,5})\b")
_GREEN_SPECIALTY = re.compile(r"\bgreen\s+specialty\b|\bspecialty\s+green\b")
_ROASTED_SPECIALTY = re.compile(r"\broasted\s+specialty\b|\bspecialty\s+roasted\b")
_GREEN = re.compile(r"\bgreen\b")
_ROASTED = re.compile(r"\broasted\b")
_SPECIALTY = re.compile(r"\bspecialty\b")
_COFFEE = re.compile(r"\bcoffee\b")


def _normalise(line: str) -> str:
    text = line[:MAX_LINE_CHARS].lower().replace("_", " ")
    text = re.sub(r"\s*(?:/|per)\s*kg\b", " ", text)
    return text


def _item(text: str, sender_role: str, recipient_role: str) -> str | None:
    """The one item the line names; ``None`` when it names none or several."""
    found: set[str] = set()
    rest = text
    for pattern, item in (
        (_GREEN_SPECIALTY, GREEN_SPECIALTY),
        (_ROASTED_SPECIALTY, ROASTED_SPECIALTY),
    ):
        if pattern.search(rest):
            found.add(item)
            rest = pattern.sub(" ", rest)
    if _GREEN.search(rest):
        found.add(GREEN)
    if _ROASTED.search(rest):
        found.add(ROASTED)
    if _SPECIALTY.search(rest) or (not found and _COFFEE.search(rest)):
        specialty = bool(_SPECIALTY.search(rest))
        roles = {sender_role, recipient_role}
        if "farmer" in roles and "retailer" not in roles:
            found.add(GREEN_SPECIALTY if specialty else GREEN)
        elif "retailer" in roles and "farmer" not in roles:
            found.add(ROASTED_SPECIALTY if specialty else ROASTED)
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _infer_side(item: str, sender_role: str, recipient_role: str) -> Side | None:
    """Who buys, from the roles: farms sell green, retailers buy roasted."""
    green = item in (GREEN, GREEN_SPECIALTY)
    if green:
        if sender_role == "farmer" and recipient_role != "farmer":
            return "sell"
        if recipient_role == "farmer" and sender_role != "farmer":
            return "buy"
        return None
    if sender_role == "retailer" and recipient_role != "retailer":
        return "buy"
    if recipient_role == "retailer" and sender_role != "retailer":
        return "sell"
    return None


def _price(text: str) -> float | None:
    match = _PRICE.search(text) or _DOLLAR.search(text)
    if match is None:
        return None
    if match.group(1) or match.group(2):
        return None
    value = float(match.group(3))
    if not 0 < value <= MAX_PRICE:
        return None
    return round(value, 2) if round(value, 2) > 0 else None


def parse_line(line: str, sender_role: str, recipient_role: str) -> Proposal | None:
    """One line as a proposal, or ``None``."""
    text = _normalise(line)
    qty_match = _QTY.search(text)
    if qty_match is None or qty_match.group(1):
        return None
    qty_text = qty_match.group(2)
    if "." in qty_text and float(qty_text) != int(float(qty_text)):
        return None
    qty = int(float(qty_text))
    if not 1 <= qty <= MAX_QTY:
        return None
    price = _price(text[qty_match.end() :]) or _price(text)
    if price is None:
        return None
    item = _item(text, sender_role, recipient_role)
    if item is None:
        return None
    kind_match = _KIND.match(text)
    kind: Kind = _KIND_MAP[kind_match.group(1)[:3]] if kind_match else "propose"
    verb = _VERB.search(text)
    side: Side | None
    if verb is not None:
        side = "buy" if verb.group(1).startswith(_BUY_VERBS) else "sell"
    else:
        side = _infer_side(item, sender_role, recipient_role)
    if side is None:
        return None
    terms = DEFAULT_TERMS
    terms_match = _TERMS.search(text)
    if terms_match is not None:
        terms = int(terms_match.group(1))
        if not 0 <= terms <= MAX_TERMS:
            return None
    valid = _VALID.search(text)
    valid_through = int(valid.group(1)) if valid is not None else None
    return Proposal(kind, side, item, qty, price, terms, valid_through)


def parse_proposal(text: object, sender_role: str, recipient_role: str) -> Proposal | None:
    """The first line of ``text`` (a message's title and body) that is a proposal.

    Never raises: anything that is not a string, or holds no clear proposal, gives ``None``.
    """
    if not isinstance(text, str):
        return None
    for line in text.splitlines()[:MAX_LINES]:
        try:
            proposal = parse_line(line, sender_role, recipient_role)
        except (ValueError, OverflowError):  # pragma: no cover - the patterns bound numbers
            proposal = None
        if proposal is not None:
            return proposal
    return None


def format_proposal(
    side: Side,
    item: str,
    qty: int,
    price: float,
    *,
    kind: Kind = "propose",
    terms: int | None = DEFAULT_TERMS,
    valid_through: int | None = None,
) -> str:
    """The structured line, e.g. ``COUNTER SELL 30 kg green_coffee_kg at $2.90 terms 30,
    valid through day 14``."""
    head = "" if kind == "propose" else kind.upper() + " "
    line = f"{head}{side.upper()} {qty} kg {item} at ${price:.2f}"
    if kind != "reject" and terms is not None:
        line += f" terms {terms}"
    if valid_through is not None and kind in ("accept", "counter"):
        line += f", valid through day {valid_through}"
    return line
