"""The event catalogue (coffee/events.py): every logged line is a header and a payload that
its definition describes exactly, and the definitions refuse what would corrupt the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from econbench.agents.tools import ToolCall
from econbench.coffee import events
from econbench.coffee.events import ABSENT, EVENT_TYPES, HEADER, MemorySink, check_record

DOCS = Path(__file__).resolve().parents[2] / "docs" / "coffeebench.md"


def run_cli(out: Path, *args: str) -> list[dict[str, Any]]:
    """A CoffeeBench run through the command line; its event log as written."""
    from econbench.cli import app

    result = CliRunner().invoke(
        app, ["coffee", "run", *args, "--out", str(out), "--quiet"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    lines = (out / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def nonconforming(lines: list[dict[str, Any]]) -> list[str]:
    return [f"seq {line.get('seq')}: {p}" for line in lines for p in check_record(line)]


# ------------------------------------------------------------ the definitions
@pytest.mark.parametrize("header_key", HEADER)
def test_a_payload_field_named_like_a_header_key_is_refused(header_key: str) -> None:
    before = dict(EVENT_TYPES)
    clash = type(
        "Clash",
        (events.Event,),
        {"__doc__": "A test definition.", "__annotations__": {"firm": "str", header_key: "int"}},
    )
    with pytest.raises(ValueError, match="overwrite the header"):
        events.event("clash_for_test")(clash)
    assert before == EVENT_TYPES


def test_a_type_defined_twice_or_undocumented_or_with_a_default_is_refused() -> None:
    before = dict(EVENT_TYPES)

    class Again(events.Event):
        """Another opex."""

        firm: str

    with pytest.raises(ValueError, match="defined twice"):
        events.event("opex")(Again)

    class Undocumented(events.Event):
        firm: str

    with pytest.raises(TypeError, match="docstring"):
        events.event("undocumented_for_test")(Undocumented)

    class Defaulted(events.Event):
        """A field with a default other than ABSENT would hide a missing value."""

        firm: str = "roaster_A"

    with pytest.raises(ValueError, match="only ABSENT"):
        events.event("defaulted_for_test")(Defaulted)
    assert before == EVENT_TYPES


def test_an_unknown_type_or_a_misspelt_missing_or_extra_field_fails_at_the_call(world) -> None:
    with pytest.raises(TypeError):
        events.Opex(firm="roaster_A", amout=12.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        events.Opex(firm="roaster_A")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        events.Opex("roaster_A", 12.0)  # type: ignore[misc]
    with pytest.raises(TypeError):  # an agent's payload may not overwrite the header
        events.event_from_payload(
            "model_retry",
            {
                "firm": "roaster_A",
                "model": "m",
                "attempt": 1,
                "delay_s": 0.5,
                "reason": "429",
                "error_type": "RateLimit",
                "day": 3,
            },
        )
    with pytest.raises(KeyError, match="not in the catalogue"):
        events.event_from_payload("model_cal", {})
    with pytest.raises(KeyError, match="not in the catalogue"):
        world.emit("tool_cal", firm="roaster_A")


def test_every_definition_has_a_docstring_and_its_fields_in_order() -> None:
    assert len(EVENT_TYPES) >= 30
    for name, cls in EVENT_TYPES.items():
        assert name == cls.TYPE
        assert (cls.__doc__ or "").strip()
        assert not set(cls.FIELDS) & set(HEADER)
        assert set(cls.FIELDS) >= cls.OPTIONAL
    assert events.EVENT_SCHEMA_VERSION >= 1


def test_no_event_class_shares_its_name_with_a_state_or_call_class() -> None:
    """An event is named for what happened (``DealStruck``), never like the state it changes
    (``Deal``), the actor's ``ToolCall`` or the run layer's ``RunStopped``."""
    import econbench.agents.tools as tools
    import econbench.coffee.exploits.plans as plans
    import econbench.coffee.paper.records as records
    import econbench.coffee.state as state
    import econbench.runs.coffee.run as run

    taken = {
        name
        for module in (state, tools, records, plans, run)
        for name, obj in vars(module).items()
        if isinstance(obj, type) and obj.__module__ == module.__name__
    }
    assert {cls.__name__ for cls in EVENT_TYPES.values()} & taken == set()


# --------------------------------------------------------------- the lines
def test_a_line_is_the_header_then_the_payload_in_catalogue_order(world) -> None:
    sink = MemorySink()
    world.sink = sink
    world.log(
        events.Writedown(
            cause="purchase",
            qty=5,
            firm="roaster_A",
            item="green_coffee_kg",
            amount=1.5,
            ceiling_per_kg=6.0,
        )
    )
    (line,) = sink.events
    assert tuple(line) == HEADER + events.Writedown.FIELDS
    assert line["type"] == "writedown"
    assert line["cause"] == "purchase"
    assert check_record(line) == []


def test_an_absent_optional_field_is_left_out_and_a_null_one_is_written(world) -> None:
    sink = MemorySink()
    world.sink = sink
    world.log(events.Spoilage(firm="retailer_A", item="roasted_coffee_kg", qty=2, value=9.0))
    world.log(
        events.Spoilage(firm="roaster_A", item="roasted_coffee_kg", qty=1, value=4.5, deal_id="D7")
    )
    world.log(
        events.Return(
            invoice_id="INV1",
            deal_id="D1",
            buyer="retailer_A",
            seller="roaster_A",
            item="roasted_coffee_kg",
            qty=3,
            credit=30.0,
            reason="too much",
            refund_invoice_id=None,
        )
    )
    on_hand, in_transit, returned = sink.events
    assert "deal_id" not in on_hand
    assert in_transit["deal_id"] == "D7"
    assert returned["refund_invoice_id"] is None
    assert all(check_record(line) == [] for line in sink.events)
    assert {"deal_id"} == events.Spoilage.OPTIONAL
    assert repr(ABSENT) == "ABSENT"


def test_check_record_names_what_is_wrong() -> None:
    good = {"seq": 1, "day": 0, "time": "09:00", "type": "opex", "firm": "farm_A", "amount": 5.0}
    assert check_record(good) == []
    assert check_record({**good, "type": "opexx"}) == ["event type 'opexx' is not in the catalogue"]
    headless = {k: v for k, v in good.items() if k != "time"}
    assert "header" in check_record(headless)[0]
    swapped = {**{k: good[k] for k in HEADER}, "amount": 5.0, "firm": "farm_A"}
    assert "the catalogue says ('firm', 'amount')" in check_record(swapped)[0]
    missing = {k: v for k, v in good.items() if k != "amount"}
    assert check_record(missing)
    assert check_record({**good, "extra": 1})
    assert check_record({**good, "amount": "5"}) == ["opex.amount: '5' is not <class 'float'>"]
    assert check_record({**good, "amount": True})  # a bool is not an amount
    assert check_record({**good, "amount": 5}) == []  # JSON may write a whole float as an int


def test_the_agents_events_are_checked_too(world) -> None:
    sink = MemorySink()
    world.sink = sink
    usage = {"input_tokens": 10, "output_tokens": 2}
    common = {"firm": "roaster_A", "model": "scripted/x"}
    world.log(
        events.event_from_payload(
            "compaction",
            common
            | {
                "forced": True,
                "messages_before": 40,
                "messages_after": 12,
                "summarised_messages": 28,
                "summary": "so far",
                "usage": usage,
                "cost_usd": None,
                "cache_hit": True,
            },
        )
    )
    retry = {"attempt": 1, "delay_s": 0.25, "reason": "429", "error_type": "RateLimitError"}
    world.log(events.event_from_payload("model_retry", common | retry))
    world.log(events.RunHalted(error_type="FatalModelError", error="bad key"))
    compaction, model_retry, stopped = sink.events
    assert compaction["cache_hit"] is True and tuple(compaction)[-1] == "cache_hit"
    assert model_retry["delay_s"] == 0.25
    assert stopped["type"] == "run_stopped"
    assert all(check_record(line) == [] for line in sink.events)


# ---------------------------------------------------------------- whole runs
def test_every_line_of_a_scripted_90_day_run_is_in_the_catalogue(tmp_path: Path) -> None:
    lines = run_cli(tmp_path / "run", "--seed", "0")
    assert nonconforming(lines) == []
    seen = {line["type"] for line in lines}
    assert {"tool_call", "deal", "delivery", "invoice", "payment", "day_end", "run_end"} <= seen
    assert len(seen) >= 20
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    meta = json.loads((tmp_path / "run" / "meta.json").read_text(encoding="utf-8"))
    assert meta["event_schema_version"] == events.EVENT_SCHEMA_VERSION


def silent_roaster(messages: list[Any], tools: list[Any]) -> Any:
    """Looks at the market and its books, replies once without a tool call, waits."""
    turns = sum(1 for m in messages if m.role == "assistant")
    step = turns % 4
    if step == 0:
        return ToolCall("view_listings", {}, call_id=f"c{turns}")
    if step == 1:
        return ToolCall("view_trial_balance", {}, call_id=f"c{turns}")
    if step == 2:
        return "Thinking."  # no tool call: logged as a tool_call with a null tool
    return ToolCall("wait_for_next_day", {}, call_id=f"c{turns}")


def test_every_line_of_a_model_driven_run_is_in_the_catalogue(tmp_path: Path) -> None:
    from econbench.agents.models.registry import register_scripted, unregister_scripted

    name = register_scripted("event-catalogue-roaster", silent_roaster)
    try:
        agent = f"roaster_A={name}"
        lines = run_cli(tmp_path / "run", "--seed", "1", "--days", "4", "--agent", agent)
    finally:
        unregister_scripted(name)
    assert nonconforming(lines) == []
    model_calls = [line for line in lines if line["type"] == "model_call"]
    assert model_calls and all(line["firm"] == "roaster_A" for line in model_calls)
    assert all("cache_hit" not in line for line in model_calls)
    assert any(line["type"] == "tool_call" and line["tool"] is None for line in lines)


def test_the_docs_list_every_event_type_as_the_catalogue_defines_it() -> None:
    table = events.catalogue_table()
    assert table in DOCS.read_text(encoding="utf-8"), (
        "docs/coffeebench.md §13 must hold events.catalogue_table() verbatim:\n" + table
    )
    for name in EVENT_TYPES:
        assert f"| `{name}` |" in table


def test_the_viewer_ledger_handles_only_catalogue_types() -> None:
    """The viewer dispatches its ledger handlers by type name (``_on_<type>``), so a renamed
    event type would silently stop one: every handler must name a catalogue type."""
    from econbench.runs.viewer.coffee_data import Ledger

    handled = {name[len("_on_") :] for name in vars(Ledger) if name.startswith("_on_")}
    assert handled, "the viewer's ledger has no handlers to check"
    assert handled - set(EVENT_TYPES) == set()
