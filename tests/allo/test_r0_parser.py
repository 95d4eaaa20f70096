"""The R0 reply parser, as lenient as the paper's (``scripts/ladder/urn_session.py``).

Priority: the last ``DECISION: KEEP|PASS`` tag anywhere (``tag``), else a leading KEEP/PASS token
(``lead``), else the first standalone KEEP/PASS token (``scan``); none of them is an unresolved PASS
(``default``). Cases that the earlier, stricter parser left unresolved ("DECISION: KEEP or PASS",
text after the decision line, a bare "KEEP") now resolve as the paper's parser reads them.
"""

from __future__ import annotations

import pytest

from econbench.allo.framings.urn import parse_decision

KEEP, PASS = True, False


@pytest.mark.parametrize(
    ("reply", "keep", "how"),
    [
        ("Red looks common.\nDECISION: KEEP", KEEP, "tag"),
        ("Too early to tell.\nDECISION: PASS", PASS, "tag"),
        ("decision: keep", KEEP, "tag"),
        ("Decision: Pass", PASS, "tag"),
        ("**DECISION: KEEP**", KEEP, "tag"),
        ("**DECISION:** PASS", PASS, "tag"),  # markdown removed before the tag match
        ("DECISION: **KEEP**", KEEP, "tag"),
        ("DECISION: `PASS`", PASS, "tag"),
        ("## DECISION: KEEP", KEEP, "tag"),
        ("DECISION: KEEP.", KEEP, "tag"),
        ("DECISION: PASS!  \n\n  ", PASS, "tag"),
        ("DECISION:KEEP", KEEP, "tag"),
        ("DECISION：KEEP", KEEP, "tag"),  # full-width colon
        ("Final DECISION: PASS", PASS, "tag"),
        ("I'd KEEP this if it were common, but one sighting is weak.\nDECISION: PASS", PASS, "tag"),
        ("Should I pass? No.\nDECISION: KEEP", KEEP, "tag"),
        ("My first decision: KEEP. On reflection, no.\nDECISION: PASS", PASS, "tag"),
        ("DECISION: KEEP\nDECISION: PASS", PASS, "tag"),  # the last tag wins
        ("DECISION: PASS\nDECISION: KEEP\nThat is my answer.", KEEP, "tag"),
        ("DECISION: PASS\n```", PASS, "tag"),
        ("DECISION: KEEP\n---", KEEP, "tag"),
        # The paper's tag has no word boundary and ignores what follows (previously unresolved):
        ("DECISION: KEEP or PASS", KEEP, "tag"),
        ("DECISION: KEEP/PASS", KEEP, "tag"),
        ("DECISION: KEEP (red is probably common)", KEEP, "tag"),
        ("DECISION: KEEPING", KEEP, "tag"),
        ("DECISION: KEEP\nThat is my answer.", KEEP, "tag"),  # text after the tag is fine
        ("DECISION: PASS\n\nLet me know if you want more detail.", PASS, "tag"),
        # No tag: a leading KEEP/PASS token, even if the other word appears later (the paper's
        # motivating case: a bare word plus rambling such as "...nothing to pass").
        ("KEEP", KEEP, "lead"),
        ("pass", PASS, "lead"),
        ("**KEEP** - there is nothing to pass up here.", KEEP, "lead"),
        ("PASS. I would keep a commoner colour.", PASS, "lead"),
        ("DECISION - PASS", PASS, "scan"),  # no colon: not a tag, the first bare token
        ("DECISION = KEEP", KEEP, "scan"),
        ("DECISION: [KEEP]", KEEP, "scan"),
        ('DECISION: "PASS"', PASS, "scan"),
        # No tag, no leading token: the first standalone KEEP/PASS anywhere.
        ("I will KEEP this ball.", KEEP, "scan"),
        ("I'd rather pass now and keep later.", PASS, "scan"),
        ("Hmm, keeping it would be early; KEEP anyway? No: PASS", KEEP, "scan"),
    ],
)
def test_resolved_replies(reply: str, keep: bool, how: str) -> None:
    parsed = parse_decision(reply)
    assert parsed.resolved, parsed.reason
    assert parsed.keep is keep
    assert parsed.how == how
    assert parsed.reason is None


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (None, "empty"),
        ("I can't help with gambling games.", "no KEEP/PASS"),
        ("I'm sorry, but I won't make this decision for you.", "no KEEP/PASS"),
        ("DECISION: MAYBE", "no KEEP/PASS"),
        ("DECISION:", "no KEEP/PASS"),
        ("Keeping it is tempting; passing is safer.", "no KEEP/PASS"),  # no standalone token
        ("keep_going", "no KEEP/PASS"),
    ],
)
def test_unresolved_replies_count_as_pass(reply: str | None, reason_part: str) -> None:
    parsed = parse_decision(reply)
    assert not parsed.resolved
    assert parsed.keep is False
    assert parsed.word == "PASS"
    assert parsed.reason is not None and reason_part in parsed.reason
    assert parsed.how == "default"


def test_word_property() -> None:
    assert parse_decision("DECISION: KEEP").word == "KEEP"
    assert parse_decision("DECISION: PASS").word == "PASS"
