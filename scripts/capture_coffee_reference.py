"""Capture the CoffeeBench ``paper`` conformance fixture by running the REFERENCE offline.

Run by hand, not by CI. The reference CoffeeBench (SakanaAI/CoffeeBench, Apache-2.0) plays a
4-day economy (seed 0, main agent roaster_A) in which roaster_A is "gpt-5.5" (OpenAI
Responses API), farmer_A is "claude-sonnet-4-6" (Anthropic Messages API) and every other firm
is "passive". Both model firms talk to a loopback ``ScriptedServer``
(tests/coffee/paper_reference/server.py) that answers from the scenario below and records
every request body as it arrived. The reference's ``uuid.uuid4`` (environment and marketplace
modules only) is replaced by econbench's deterministic id source, one ``random.Random`` shared
by both modules, so every id is a function of the seed and the fixture is reproducible: it
is ``econbench.coffee.paper.ids.IdSource``, loaded from its file (this interpreter does not
import econbench), or the same construction written out below when that file is absent.

Output, under tests/coffee/data/paper_reference/:
    scenario.json   the scripted decisions (per firm, in order) and the run parameters
    requests.jsonl  one line per request: firm, index, path, kind, reply_index, body (the body
                    text exactly as sent)
    economy.json    the reference's final result (``env.run()``'s return), daily_stats, truth
                    ledgers, books, marketplace state, consumer sales, demand paths

Setup (once):
    git clone https://github.com/SakanaAI/CoffeeBench /tmp/coffeeref  # or a local mirror
    git -C /tmp/coffeeref checkout 71442fb
    python3.12 -m venv /tmp/refvenv_f
    /tmp/refvenv_f/bin/pip install anthropic==0.75.0 openai==2.14.0 python-dotenv==1.2.1 \\
        httpx==0.28.1 pydantic==2.12.5
(the versions of the reference's uv.lock; main.py imports nothing else at module level: the
provider modules are imported lazily by ``get_model``, and only the two above are used.)

Capture (from the repository root; run it twice and compare to check it reproduces):
    /tmp/refvenv_f/bin/python scripts/capture_coffee_reference.py --reference /tmp/coffeeref

``--print`` also shows each scripted call with the result the reference gave it (read from
the next request), the way the ids in the scenario were found: run, read, fill in, run again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
import types
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.coffee.paper_reference.server import (  # noqa: E402
    FirmScript,
    Reply,
    Scenario,
    ScriptedServer,
    ToolCall,
    Usage,
)

OUT = REPO / "tests" / "coffee" / "data" / "paper_reference"
REFERENCE_COMMIT = "71442fb"
SEED = 0
MAX_DAYS = 4
MAIN_AGENT = "roaster_A"
MODELS = {"roaster_A": "gpt-5.5", "farmer_A": "claude-sonnet-4-6"}
COMPACTING_USAGE = Usage(input_tokens=170_000, output_tokens=60)
"""Reported on one reply per firm: ≥ 160,000 (0.8 × 200,000) makes the reference compact the
firm's transcript before its next query."""


# Ids the reference drew in an earlier run with the same decisions (see ``--print``).
LISTING = "lst_7ee2c036"  # farmer_A's 40 kg green listing (day 0)
OFFER = "off_ecb640da"  # roaster_A's offer on it
INVOICE = "60a641bc"  # the invoice issued on delivery (day 1)
MSG_FARMER_TO_ROASTER = "msg_f1bac583"  # farmer_A's "Shipment ... confirmed"
MSG_ROASTER_TO_FARMER = "msg_3c4ec246"  # roaster_A's "Payment on delivery"


class _Script:
    """Builds one firm's reply list, numbering the tool-call ids."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.replies: list[Reply] = []

    def call(
        self,
        text: str,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        usage: Usage | None = None,
        reasoning: str | None = None,
        note: str = "",
    ) -> None:
        call_id = f"{self.prefix}{len(self.replies):03d}"
        args: dict[str, Any] | str = {} if arguments is None else arguments
        self.replies.append(
            Reply(
                text=text,
                tool_call=ToolCall(name=name, arguments=args, call_id=call_id),
                usage=usage or Usage(input_tokens=12_000 + 500 * len(self.replies)),
                reasoning=reasoning,
                note=note,
            )
        )

    def say(self, text: str, *, note: str = "") -> None:
        usage = Usage(input_tokens=12_000 + 500 * len(self.replies))
        self.replies.append(Reply(text=text, tool_call=None, usage=usage, note=note))


def build_scenario() -> Scenario:
    """The decisions. Ids (listing, offer, invoice, message) are what the reference drew with
    the patched uuid source; they were read from a previous run (``--print``)."""
    f = _Script("toolu_fA_")
    # ---- day 0 ----
    f.call(
        "I'll post 40 kg of my green coffee at $4/kg so roasters can bid.",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 40, "asking_price": 4.0},
    )
    f.call("Let me check my starting books.", "view_trial_balance", {})
    f.call(
        "roaster_A bid on my listing; I'll accept the offer.",
        "accept_offer",
        {"offer_id": OFFER},
        note="woken by roaster_A's offer (offer_received)",
    )
    f.call(
        "I'll confirm the shipment to roaster_A by message.",
        "send_message",
        {
            "recipient": "roaster_A",
            "title": "Shipment of 40 kg green confirmed",
            "body": "Accepted your offer; 40 kg green_coffee_kg ships tomorrow, NET-30.",
        },
    )
    f.call(
        "I'll list a larger lot as well.",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 500, "asking_price": 4.0},
        note="error: more than the farmer holds",
    )
    f.call(
        "I'll start 30 kg of commodity green production.",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 30},
    )
    f.say("That's all for today; waiting for events.", note="no tool call")
    f.call("A message arrived; let me look at my inbox.", "view_messages", {})
    f.call("Nothing else to do today.", "wait_for_next_day", {})
    # ---- day 1 ----
    f.call("Checking what roaster_A owes me after delivery.", "view_receivables", {})
    f.call("Let me review my deals.", "view_deals", {})
    f.call("Reading roaster_A's message.", "read_message", {"message_id": MSG_ROASTER_TO_FARMER})
    f.call("Checking receivables after the payment.", "view_receivables", {})
    f.call("Done for today.", "wait_for_next_day", {})
    # ---- day 2 ----
    f.call("Let me see the market.", "view_listings", {})
    f.call(
        "Checking my offers.",
        "view_offers",
        {"direction": "all"},
        usage=COMPACTING_USAGE,
        note="reports 170,000 input tokens: the next query is preceded by a compaction",
    )
    f.call("After the summary, reviewing the trial balance.", "view_trial_balance", {})
    f.call("Nothing more today.", "wait_for_next_day", {})
    # ---- day 3 ----
    f.call("Final day: checking payables.", "view_payables", {})
    f.call("Done.", "wait_for_next_day", {})

    r = _Script("call_rA_")
    # ---- day 0 ----
    r.call(
        "Let me look for green coffee on the market.",
        "view_listings",
        {"item_id": "green_coffee_kg"},
        reasoning="I hold no green; find a supplier first.",
    )
    r.call(
        "farmer_A lists green at $4; I'll bid $3.50 for all 40 kg.",
        "make_offer",
        {
            "listing_id": LISTING,
            "offered_price": 3.5,
            "qty": 40,
            "message": "Can you ship tomorrow?",
        },
    )
    r.call(
        "My offer was accepted; checking my outgoing offers.",
        "view_offers",
        {"direction": "outgoing"},
    )
    r.call(
        "Trying a bulk purchase tool.", "buy_everything", {"budget": 1000}, note="unknown tool name"
    )
    r.call("", "view_messages", {}, note="no text, tool call only")
    r.call("Reading farmer_A's message.", "read_message", {"message_id": MSG_FARMER_TO_ROASTER})
    r.call(
        "I'll roast 20 kg of green now.",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": 20},
        note="error: no green on hand yet",
    )
    r.call(
        "Making another offer.",
        "make_offer",
        '{"listing_id": "lst_',
        note="malformed JSON arguments: the reference calls the tool with no arguments",
    )
    r.call(
        "I'll tell farmer_A I will pay on delivery.",
        "send_message",
        {
            "recipient": "farmer_A",
            "title": "Payment on delivery",
            "body": "Thanks. I will pay the invoice as soon as the beans arrive.",
        },
    )
    r.call("Nothing more today.", "wait_for_next_day", {})
    # ---- day 1 ----
    r.call("The green arrived; let me see my payables.", "view_payables", {})
    r.call(
        "Paying farmer_A's invoice now.",
        "pay_invoice",
        {"invoice_id": INVOICE},
        reasoning="Paying early keeps the relationship good and avoids late fees.",
    )
    r.call(
        "Roasting 30 kg of green.",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": 30},
    )
    r.call(
        "Returning 5 kg of the green that I won't roast.",
        "return_shipment",
        {"invoice_id": INVOICE, "quantity_kg": 5, "reason": "over-stock"},
    )
    r.call("Checking my deal history.", "view_deals", {})
    r.call("Year-to-date books.", "view_trial_balance", {"period": "YTD"})
    r.say("I'm done for today.", note="no tool call")
    # ---- day 2 ----
    r.call("Let me see the market.", "view_listings", {})
    r.call(
        "Listing 20 kg of roasted coffee at $12/kg.",
        "post_listing",
        {"item_id": "roasted_coffee_kg", "qty": 20, "asking_price": 12.0},
        usage=COMPACTING_USAGE,
        note="reports 170,000 input tokens: the next query is preceded by a compaction",
    )
    r.call("Checking the market aggregate.", "view_market_aggregate", {"days_back": 3})
    r.call("Nothing more today.", "wait_for_next_day", {})
    # ---- day 3 ----
    r.call("Final day: trial balance.", "view_trial_balance", {})
    r.call("Done.", "wait_for_next_day", {})

    def summaries(firm: str) -> tuple[Reply, ...]:
        text = (
            "## Counterparties & deals\n"
            "roaster_A bought 40 kg green_coffee_kg from farmer_A at $3.5/kg on day 0, NET-30.\n\n"
            f"## Pending actions\nNone recorded for {firm}."
        )
        return (Reply(text=text, usage=Usage(input_tokens=9_000, output_tokens=120)),)

    firms = {
        "roaster_A": FirmScript(
            api="openai",
            model=MODELS["roaster_A"],
            replies=tuple(r.replies),
            summaries=summaries("roaster_A"),
        ),
        "farmer_A": FirmScript(
            api="anthropic",
            model=MODELS["farmer_A"],
            replies=tuple(f.replies),
            summaries=summaries("farmer_A"),
        ),
    }
    params = {
        "reference_commit": REFERENCE_COMMIT,
        "seed": SEED,
        "max_days": MAX_DAYS,
        "main_agent": MAIN_AGENT,
        "models": {**{a: "passive" for a in _ALL_AGENTS}, **MODELS},
        "capture_packages": _versions(("anthropic", "openai", "httpx", "pydantic")),
        "id_source": 'uuid.UUID(int=random.Random(f"coffee-paper-ids:{seed}").getrandbits(128), '
        "version=4), one rng shared by environment.py and marketplace.py",
    }
    return Scenario(firms=firms, params=params)


def _versions(names: tuple[str, ...]) -> dict[str, str]:
    """The SDK versions that serialised the bodies (the bytes depend on them)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


_ALL_AGENTS = ("farmer_A", "farmer_B", "roaster_A", "roaster_B", "retailer_A", "retailer_B")


class _FallbackIdSource:
    """econbench's id source, as ``econbench.coffee.paper.ids.IdSource`` defines it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"coffee-paper-ids:{seed}")

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)


def id_source(seed: int) -> Any:
    """econbench's own ``IdSource`` when its file exists (loaded by path: this interpreter
    need not import econbench), else the same construction written out here."""
    path = REPO / "src" / "econbench" / "coffee" / "paper" / "ids.py"
    if path.exists():
        spec = importlib.util.spec_from_file_location("_econbench_paper_ids", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module.IdSource(seed)
    return _FallbackIdSource(seed)


def _plain(value: Any) -> Any:
    """JSON-able copy (dataclasses, sets, defaultdicts)."""
    return json.loads(json.dumps(value, default=_default))


def _default(obj: Any) -> Any:
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    if isinstance(obj, set):
        return sorted(obj)
    raise TypeError(f"not JSON-able: {type(obj).__name__}")


def run_reference(reference: Path, scenario: Scenario, log: io.StringIO) -> dict[str, Any]:
    """Run the reference once against a fresh server; return requests and economy."""
    sys.path.insert(0, str(reference))
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-loopback")
    from anthropic import Anthropic
    from coffeebench import environment as ref_environment
    from coffeebench import main as ref_main
    from coffeebench import marketplace as ref_marketplace
    from openai import OpenAI

    ids = id_source(SEED)
    shared = types.SimpleNamespace(uuid4=ids.uuid4)
    ref_environment.uuid = shared  # type: ignore[attr-defined]
    ref_marketplace.uuid = shared  # type: ignore[attr-defined]

    with ScriptedServer(scenario) as server, tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # the reference writes trajectories/ and .events.jsonl into cwd
        try:
            args = argparse.Namespace(
                config=None,
                model="passive",
                models=",".join(f"{a}:{m}" for a, m in MODELS.items()),
                max_days=MAX_DAYS,
                seed=SEED,
                main_agent=MAIN_AGENT,
                output=str(Path(tmp) / "run.json"),
            )
            with contextlib.redirect_stdout(log):
                env, output_path, _ = ref_main.build_run(args)
                for firm, script in scenario.firms.items():
                    model = env.agents[firm].model
                    if script.api == "anthropic":
                        client: Any = Anthropic(
                            base_url=server.base_url(firm),
                            api_key="sk-ant-loopback",
                            timeout=300.0,
                            max_retries=0,
                        )
                    else:
                        client = OpenAI(
                            base_url=server.base_url(firm),
                            api_key="sk-loopback",
                            timeout=300.0,
                            max_retries=0,
                        )
                    model.client = client
                result = asyncio.run(env.run())
                env.save_trajectory(output_path)
            saved = json.loads(Path(output_path).read_text())
        finally:
            os.chdir(cwd)
        if server.errors:
            raise RuntimeError(f"the server refused requests: {server.errors}")
        requests = {firm: server.requests(firm) for firm in scenario.firms}

    economy = {
        "result": _plain(result),
        "daily_stats": saved["daily_stats"],
        "final_day": saved["final_day"],
        "truth_ledger": saved["truth_ledger"],
        "agent_books": saved["agent_books"],
        "marketplace": saved["marketplace"],
        "consumer_sales_log": saved["consumer_sales_log"],
        "bankrupt_agents": saved["bankrupt_agents"],
        "bankrupt_day": saved["bankrupt_day"],
        "bankrupt_reason": saved["bankrupt_reason"],
        "demand_paths": _plain(env._demand_path),
        "retailer_loyalty": _plain(env._retailer_loyalty),
        "final_available_at": _plain(env._available_at),
        "compactions": {
            firm: [asdict(ev) for ev in env.agents[firm].compactor.events]
            for firm in scenario.firms
        },
    }
    return {"requests": requests, "economy": economy}


def write_fixture(scenario: Scenario, captured: dict[str, Any], out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "scenario.json").write_text(
        json.dumps(scenario.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    lines = []
    for firm in scenario.firms:
        for index, rec in enumerate(captured["requests"][firm]):
            line = {
                "firm": firm,
                "index": index,
                "path": rec.path,
                "kind": rec.kind,
                "reply_index": rec.reply_index,
                "body": rec.raw.decode("utf-8"),
            }
            lines.append(json.dumps(line, ensure_ascii=False))
    (out / "requests.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "economy.json").write_text(
        json.dumps(captured["economy"], indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return {p.name: p.stat().st_size for p in sorted(out.iterdir())}


def show(scenario: Scenario, captured: dict[str, Any]) -> None:
    """Each scripted call with the tool result the reference returned for it (read from the
    firm's next turn request) and the observations it was shown."""
    for firm, script in scenario.firms.items():
        print(f"===== {firm} ({script.api})")
        recs = captured["requests"][firm]
        turns = [r for r in recs if r.kind == "turn"]
        for n, rec in enumerate(recs):
            if rec.kind == "summary":
                print(f"[{n}] compaction summary request")
                continue
            history = _history(script.api, rec.body)
            for obs in _observations(script.api, history)[-1:]:
                print(f"      obs: {obs.splitlines()[0]} ... {obs.splitlines()[-1]}")
            reply = script.replies[rec.reply_index] if rec.reply_index is not None else None
            call = reply.tool_call if reply else None
            what = f"{call.name} {call.arguments}" if call else "(no tool call)"
            print(f"[{n}] reply {rec.reply_index}: {what}")
            later = [t for t in turns if t.body is not rec.body and recs.index(t) > n]
            if call is not None and later:
                result = _result(script.api, _history(script.api, later[0].body), call.call_id)
                print(f"      -> {(result or '(not in the next request)')[:500]}")


def _history(api: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    return body["messages"] if api == "anthropic" else body["input"]


def _observations(api: str, history: list[dict[str, Any]]) -> list[str]:
    out = []
    for m in history:
        content = m.get("content")
        if m.get("role") == "user":
            if isinstance(content, list):
                content = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            if isinstance(content, str) and content.startswith("Observation: Day"):
                out.append(content)
    return out


def _result(api: str, history: list[dict[str, Any]], call_id: str) -> str | None:
    for m in history:
        if api == "openai" and m.get("type") == "function_call_output":
            if m.get("call_id") == call_id:
                return m["output"]
        elif api == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == call_id:
                    return b["content"]
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference", type=Path, default=Path("/tmp/coffeeref"))
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--print", dest="show", action="store_true")
    p.add_argument("--log", type=Path, default=None, help="where the reference's prints go")
    args = p.parse_args()
    scenario = build_scenario()
    log = io.StringIO()
    captured = run_reference(args.reference.resolve(), scenario, log)
    if args.log is not None:
        args.log.write_text(log.getvalue(), encoding="utf-8")
    if args.show:
        show(scenario, captured)
    sizes = write_fixture(scenario, captured, args.out)
    for name, size in sizes.items():
        print(f"{name}: {size} bytes")
    print(f"total: {sum(sizes.values())} bytes")


if __name__ == "__main__":
    main()
