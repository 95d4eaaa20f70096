"""``did_you_mean``: the suggestion appended to an ``unknown …`` error."""

from __future__ import annotations

from econbench.suggest import did_you_mean


def test_a_one_letter_typo_names_the_choice() -> None:
    assert did_you_mean("heurstic", ["passive", "heuristic"]) == " (did you mean 'heuristic'?)"
    assert did_you_mean("Roaster_a", ["roaster_A", "roaster_B"]) == " (did you mean 'roaster_A'?)"


def test_nothing_close_or_the_name_itself_suggests_nothing() -> None:
    assert did_you_mean("genius", ["passive", "heuristic", "scripted"]) == ""
    assert did_you_mean("r9", ["r0", "r1", "r2", "r3"]) == ""  # no guess among equals
    assert did_you_mean("eager", ["eager"]) == ""
    assert did_you_mean("x", []) == ""
