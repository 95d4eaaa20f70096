"""``coffee run``'s result tables fit an 80-column terminal and never cut a number (issue 28,
item 6): names wrap, numbers stay whole, and the table across seeds changes its layout
instead of truncating."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from econbench.runs.coffee.cli import seeds_table, summary_table, usage_table, yardstick_table
from econbench.runs.coffee.yardstick import Yardstick

FIRMS = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")
PLAYERS = (
    "openai-compatible/moonshotai/kimi-k2.6",
    "anthropic/claude-sonnet-4-6",
    "google/gemini-3.1-pro-preview",
    "bargaining",
    "negotiating",
    "markup:1.5",
)


def firm(player: str, income: float, bankrupt: bool) -> dict[str, Any]:
    return {
        "policy": player,
        "net_income": income,
        "revenue": abs(income) * 3 + 0.07,
        "tool_calls": 12_345,
        "idle_days": 90,
        "bankrupt": bankrupt,
        "bankrupt_day": 45 if bankrupt else None,
        "llm_calls": 4_321,
        "input_tokens": 123_456_789,
        "cached_input_tokens": 98_765_432,
        "output_tokens": 1_234_567,
        "cost_usd": 1_234.5,
        "cost_usd_priced_part": 1_234.5,
    }


def summary(seed: int, scale: float) -> dict[str, Any]:
    firms = {
        name: firm(player, -scale * (seed + 1) - i / 100, i % 2 == 0)
        for i, (name, player) in enumerate(zip(FIRMS, PLAYERS, strict=True))
    }
    return {"seed": seed, "days_run": 90, "deals": 278, "consumer_sales_kg": 1833, "firms": firms}


def render(table: Any, width: int = 80) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(table)
    return console.export_text()


def assert_whole(text: str, numbers: list[str]) -> None:
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for number in numbers:
        assert re.search(rf"(?<![\d,.]){re.escape(number)}(?![\d,.])", text), number


@pytest.mark.parametrize("scale", [2_200.46, 1_234_567.89])
def test_one_run_fits_80_columns(scale: float) -> None:
    one = summary(0, scale)
    text = render(summary_table(one))
    rows = one["firms"].values()
    assert_whole(text, [f"{r['net_income']:,.2f}" for r in rows])
    assert_whole(text, [f"{r['revenue']:,.2f}" for r in rows] + ["12,345"])
    usage = render(usage_table([one, summary(1, scale)]))
    assert_whole(usage, ["246,913,578", "197,530,864", "2,469,134", "2,469.00", "8,642"])


@pytest.mark.parametrize("seeds", [2, 3, 8, 12])
@pytest.mark.parametrize("scale", [2_200.46, 1_234_567.89])
def test_the_table_across_seeds_fits_80_columns(seeds: int, scale: float) -> None:
    summaries = [summary(s, scale) for s in range(seeds)]
    text = render(seeds_table(summaries, width=80))
    focal = [f"{s['firms']['roaster_A']['net_income']:,.2f}" for s in summaries]
    flat = " ".join(text.split())
    assert_whole(text, [])
    for number in focal:  # roaster_A's every seed, in a column or under the table
        assert number in flat
    incomes = [s["firms"]["roaster_A"]["net_income"] for s in summaries]
    assert f"{max(incomes):,.2f}" in text and f"{min(incomes):,.2f}" in text


def test_a_wide_terminal_shows_each_seed_in_its_column() -> None:
    summaries = [summary(s, 2_200.46) for s in range(3)]
    text = render(seeds_table(summaries, width=160), width=160)
    assert all(f"seed {s}" in text for s in range(3))


def test_the_yardstick_fits_80_columns() -> None:
    ruler = Yardstick("hardened", "bargaining", 90, (0, 1), {0: -2764.68}, {0: -1588.0}, 23782.5)
    text = render(yardstick_table(ruler, [summary(0, 1_234_567.89)]))
    assert_whole(text, ["-2,764.68", "-1,588.00", "23,782.50", "-1,234,567.91"])
