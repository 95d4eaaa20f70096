"""The R0 reply parser: strict about where the decision is, lenient about how it is typed."""

from __future__ import annotations

import pytest

from econbench.allo.framings.urn import parse_decision

KEEP, PASS = True, False


@pytest.mark.parametrize(
    ("reply", "keep"),
    [
        ("Red looks common.\nDECISION: KEEP", KEEP),
        ("Too early to tell.\nDECISION: PASS", PASS),
        ("decision: keep", KEEP),
        ("Decision: Pass", PASS),
        ("**DECISION: KEEP**", KEEP),
        ("**DECISION:** PASS", PASS),
        ("DECISION: **KEEP**", KEEP),
        ("DECISION: `PASS`", PASS),
        ("## DECISION: KEEP", KEEP),
        ("DECISION: KEEP.", KEEP),
        ("DECISION: PASS!  \n\n  ", PASS),
        ("DECISION:KEEP", KEEP),
        ("DECISION - PASS", PASS),
        ("DECISION — KEEP", KEEP),
        ("DECISION = KEEP", KEEP),
        ("DECISION: [KEEP]", KEEP),
        ('DECISION: "PASS"', PASS),
        ("DECISION：KEEP", KEEP),  # full-width colon
        ("Final DECISION: PASS", PASS),
        ("I'd KEEP this if it were common, but one sighting is weak.\nDECISION: PASS", PASS),
        ("Should I pass? No.\nDECISION: KEEP", KEEP),
        ("My first decision: KEEP. On reflection, no.\nDECISION: PASS", PASS),
        ("DECISION: KEEP\nDECISION: PASS", PASS),  # the reply ends with PASS
        ("DECISION: PASS\n```", PASS),  # a closing fence has no letters
        ("DECISION: KEEP\n---", KEEP),
    ],
)
def test_resolved_replies(reply: str, keep: bool) -> None:
    parsed = parse_decision(reply)
    assert parsed.resolved, parsed.reason
    assert parsed.keep is keep
    assert parsed.reason is None


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (None, "empty"),
        ("I will KEEP this ball.", "no DECISION"),
        ("KEEP", "no DECISION"),
        ("I can't help with gambling games.", "no DECISION"),
        ("I'm sorry, but I won't make this decision for you.", "not KEEP or PASS"),
        ("DECISION: KEEP or PASS", "ambiguous"),
        ("DECISION: KEEP/PASS", "ambiguous"),
        ("DECISION: KEEP (red is probably common)", "ambiguous"),
        ("DECISION: MAYBE", "not KEEP or PASS"),
        ("DECISION:", "not KEEP or PASS"),
        ("DECISION: KEEPING", "not KEEP or PASS"),
        ("DECISION: KEEP\nThat is my answer.", "after the DECISION"),
        ("DECISION: PASS\n\nLet me know if you want more detail.", "after the DECISION"),
    ],
)
def test_unresolved_replies_count_as_pass(reply: str | None, reason_part: str) -> None:
    parsed = parse_decision(reply)
    assert not parsed.resolved
    assert parsed.keep is False
    assert parsed.word == "PASS"
    assert parsed.reason is not None and reason_part in parsed.reason


def test_word_property() -> None:
    assert parse_decision("DECISION: KEEP").word == "KEEP"
    assert parse_decision("DECISION: PASS").word == "PASS"
