"""The R0 reply parser, shared by both protocols' urn texts.

It follows the paper's rule (``scripts/ladder/urn_session.py`` ``parse_decision``), in priority
order:

1. ``tag``: the **last** ``DECISION: KEEP|PASS`` anywhere in the reply (case ignored; as in the
   paper no word boundary follows, so "DECISION: KEEPING" reads KEEP and "DECISION: KEEP or PASS"
   reads KEEP). Before matching, markdown emphasis/code marks (``* _ ` # >``) are removed and
   full-width colons normalised, so "**DECISION:** PASS" is a tag too — the only place this parser
   is more lenient than the paper's (the paper would reach the same word through step 3 unless an
   earlier bare KEEP/PASS appears).
2. ``lead``: a KEEP/PASS token leading the reply (after any non-word characters).
3. ``scan``: the first standalone KEEP/PASS token anywhere.

A reply with none of these — no KEEP/PASS token at all, a refusal, an empty reply — counts as
PASS and is flagged unresolved (the paper's ``default``), with the reason recorded. As in the
paper's urn, an unparseable reply is never re-asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from econbench.allo.framings.base import TurnOutcome


@dataclass(frozen=True)
class ParsedDecision:
    """A reply read as a decision: ``keep`` (False = PASS), resolved, why not, and how it was read.

    ``how`` is the paper's label: ``tag``, ``lead``, ``scan`` or ``default`` (unresolved).
    """

    keep: bool
    resolved: bool
    reason: str | None = None
    how: str = "default"

    @property
    def word(self) -> str:
        return "KEEP" if self.keep else "PASS"


_MARKUP = re.compile(r"[*_`#>~]")
_TAG = re.compile(r"DECISION:\s*(KEEP|PASS)", re.I)
_LEAD = re.compile(r"[\W]*(KEEP|PASS)\b", re.I)
_SCAN = re.compile(r"\b(KEEP|PASS)\b", re.I)


def parse_decision(text: str | None) -> ParsedDecision:
    """Read a free-text R0 reply as the paper does; unparseable replies are an unresolved PASS."""
    t = (text or "").strip()
    if not t:
        return ParsedDecision(False, False, "empty reply")
    hits = _TAG.findall(_MARKUP.sub("", t).replace("：", ":"))
    if hits:
        return ParsedDecision(hits[-1].lower() == "keep", True, None, "tag")
    lead = _LEAD.match(t)
    if lead:
        return ParsedDecision(lead.group(1).lower() == "keep", True, None, "lead")
    scan = _SCAN.search(t)
    if scan:
        return ParsedDecision(scan.group(1).lower() == "keep", True, None, "scan")
    return ParsedDecision(False, False, "no KEEP/PASS token")


def outcome_of_reply(text: str) -> TurnOutcome:
    """The turn outcome of an R0 reply, with the parsed word and how it was read for the log."""
    parsed = parse_decision(text)
    return TurnOutcome(
        commit=parsed.keep,
        resolved=parsed.resolved,
        reason=parsed.reason,
        record={"parsed": parsed.word, "how": parsed.how},
    )
