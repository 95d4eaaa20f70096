"""A scripted six-firm run of the paper economy, shared by test_economy and test_observation.

The same policy was run against the reference CoffeeBench `Environment` (its real `Agent`
class with a stub model returning these tool calls, `uuid.uuid4` patched to the same
`IdSource`, `env.rng.seed(seed)`), and the literal values in the tests are what the
reference produced. The policy reads only each firm's own observation and last tool
result (never shared state), so the reference's parallel query phase cannot reorder it.

What it exercises: listings, offers (offer_received wakes that move a parked seller's
clock back to now), accepts (deal_accepted wakes), deliveries (delivery rolls of the run
rng), production and roasting (production_ready), a DM left unread then read, a return
(return_received) and a payment (invoice_paid), an unpaid invoice accruing late fees, two
firms forced bankrupt on day 3 (AR write-off on the seller, pending production written
down), consumer sales with loyalty shares and spoilage, the trial balance, and a deal
accepted on the last day delivered by `finish()`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from econbench.coffee.paper.economy import PaperEconomy, build_economy
from econbench.coffee.paper.tools import result_text

Decision = tuple[str | None, dict | None, str, str | None]  # name, args, text, hack


def _wait(text: str = "") -> Decision:
    return (None, None, text, None)


def _call(name: str, **args: Any) -> Decision:
    return (name, args, f"calling {name}", None)


def _accept_incoming(st: dict, obs: str | None, last: dict | None) -> Decision | None:
    if st.get("expect") == "offers" and last is not None:
        st["expect"] = None
        for o in last.get("offers", []):
            if o["status"] == "pending" and o.get("seller_id") == st["me"]:
                return _call("accept_offer", offer_id=o["id"])
        return None
    if obs is not None and "pending offers: in 0," not in obs:
        st["expect"] = "offers"
        return _call("view_offers", direction="incoming")
    return None


def _farmer_a(st: dict, day: int, k: int, obs: str | None, last: Any, obs_now: str) -> Decision:
    st["me"] = "farmer_A"
    if day == 0 and k == 0:
        return _call(
            "post_listing",
            item_id="green_coffee_kg",
            qty=40,
            asking_price=4.5,
            payment_terms_days=1,
        )
    if day == 0 and k == 1:
        return _call("produce_item", item_id="green_coffee_kg", quantity=20)
    r = _accept_incoming(st, obs, last)
    if r:
        return r
    if day == 2 and not st.get("tb"):
        st["tb"] = 1
        return _call("view_trial_balance", period="FY")
    return _wait("nothing to do today")


def _roaster_a(st: dict, day: int, k: int, obs: str | None, last: Any, obs_now: str) -> Decision:
    st["me"] = "roaster_A"
    if day == 0 and k == 0:
        st["expect"] = "listings"
        return _call("view_listings", item_id="green_coffee_kg")
    if st.get("expect") == "listings":
        st["expect"] = None
        lst = [r for r in last["listings"] if r["seller_id"] == "farmer_A"]
        return _call(
            "make_offer",
            listing_id=lst[0]["id"],
            offered_price=4.0,
            qty=30,
            payment_terms_days=1,
            message="bulk buy",
        )
    if day == 0 and k == 2:
        return _call(
            "post_listing",
            item_id="roasted_coffee_kg",
            qty=20,
            asking_price=12.0,
            payment_terms_days=2,
        )
    if day == 0 and k == 3:
        return _call(
            "send_message", recipient="retailer_A", title="Roasted available", body="20 kg at $12"
        )
    r = _accept_incoming(st, obs, last)
    if r:
        return r
    if "green_coffee_kg=" in obs_now and not st.get("roasted"):
        st["roasted"] = 1
        return _call("roast", green_item_id="green_coffee_kg", qty_kg=20)
    if day == 3 and not st.get("tb"):
        st["tb"] = 1
        return _call("view_trial_balance", period="YTD")
    if day == 4 and not st.get("pay"):
        st["pay"] = 1
        return _call("view_payables")
    return _wait()


def _retailer(me: str, price: float, qty: int, terms: int) -> Any:
    def policy(st: dict, day: int, k: int, obs: str | None, last: Any, obs_now: str) -> Decision:
        st["me"] = me
        if day == 0 and k == 0 and me == "retailer_A":
            return _call("set_retail_price", item_id="roasted_coffee_kg", price_per_unit=20.0)
        if day in (1, 5) and not st.get(f"bought{day}"):
            if st.get("expect") == "listings":
                st["expect"] = None
                st[f"bought{day}"] = 1
                lst = [r for r in last["listings"] if r["seller_id"] == "roaster_A"]
                if lst:
                    return _call(
                        "make_offer",
                        listing_id=lst[0]["id"],
                        offered_price=price,
                        qty=min(qty, lst[0]["qty"]),
                        payment_terms_days=terms,
                    )
                return _wait("no listing")
            st["expect"] = "listings"
            return _call("view_listings", item_id="roasted_coffee_kg")
        if me == "retailer_A" and day == 3 and not st.get("read"):
            if st.get("expect") == "msgs":
                st["expect"] = None
                st["read"] = 1
                return _call("read_message", message_id=last["inbox"][0]["id"])
            st["expect"] = "msgs"
            return _call("view_messages")
        if me == "retailer_A" and day == 2 and not st.get("paid"):
            if st.get("expect") == "payables":
                st["expect"] = None
                rows = [r for r in last.get("rows", []) if r["outstanding"] > 0]
                if not rows:
                    st["paid"] = 1
                    return _wait("nothing payable")
                st["inv"] = rows[0]["id"]
                st["expect"] = "returned"
                return _call(
                    "return_shipment", invoice_id=st["inv"], quantity_kg=2, reason="quality"
                )
            if st.get("expect") == "returned":
                st["expect"] = None
                st["paid"] = 1
                return _call("pay_invoice", invoice_id=st["inv"])
            st["expect"] = "payables"
            return _call("view_payables")
        if me == "retailer_B" and day == 3 and not st.get("d3"):
            st["d3"] = 1
            return _call("view_deals")
        if me == "retailer_A" and day == 2 and not st.get("cs"):
            st["cs"] = 1
            return _call("view_consumer_sales")
        return _wait("   ")

    return policy


def _farmer_b(st: dict, day: int, k: int, obs: str | None, last: Any, obs_now: str) -> Decision:
    if day == 3 and k == 0:
        return _call("produce_item", item_id="green_specialty_kg", quantity=10)
    if day == 3 and not st.get("hack"):
        st["hack"] = 1
        return (None, None, "", "bust")
    return _wait("")


def _passive(st: dict, day: int, k: int, obs: str | None, last: Any, obs_now: str) -> Decision:
    return _wait("(passive baseline: sleeping until next event)")


PLANS = {
    "farmer_A": _farmer_a,
    "farmer_B": _farmer_b,
    "roaster_A": _roaster_a,
    "retailer_A": _retailer("retailer_A", 11.0, 10, 3),
    "retailer_B": _retailer("retailer_B", 11.5, 5, 2),
}


def decide(st: dict, firm: str, obs: str | None, last: dict | None) -> Decision:
    if obs is not None:
        m = re.match(r"Observation: Day (\d+), (\d\d):(\d\d)", obs)
        assert m is not None
        st["day"] = int(m.group(1))
        st["k"] = 0
        st["obs"] = obs
    k = st["k"]
    st["k"] = k + 1
    return PLANS.get(firm, _passive)(st, st["day"], k, obs, last, st["obs"])


@dataclass
class ScriptedRun:
    econ: PaperEconomy
    result: dict
    transcripts: dict[str, list[dict]]
    events: list[tuple[str, dict]] = field(default_factory=list)
    buckets: list[tuple[int, list[str]]] = field(default_factory=list)


def scripted_run(seed: int = 0, days: int = 8, main: str = "roaster_A") -> ScriptedRun:
    """Drive the economy as the reference's `run()` does: every model of a bucket is
    queried on the same state, then the answers are applied in bucket order. The "bust"
    hack (cash of retailer_B and farmer_B set to -1 during day 3's first query phase) was
    done at the same point in the reference run."""
    events: list[tuple[str, dict]] = []
    econ = build_economy(seed, days, main, on_event=lambda et, d: events.append((et, d)))
    transcripts: dict[str, list[dict]] = {aid: [] for aid in econ.business_apps}
    states: dict[str, dict] = {}
    last: dict[str, str] = {}
    buckets: list[tuple[int, list[str]]] = []
    econ.start()
    while wakes := econ.next_wakes():
        buckets.append((econ.time_manager.get_virtual_min(), [w.firm for w in wakes]))
        decisions = []
        for w in wakes:
            if w.observation is not None:
                transcripts[w.firm].append({"role": "user", "content": w.observation})
                obs, prev = w.observation, None
            else:
                obs, prev = None, json.loads(last[w.firm])
            name, args, text, hack = decide(states.setdefault(w.firm, {}), w.firm, obs, prev)
            if hack == "bust":
                econ.business_apps["retailer_B"].cash = -1.0
                econ.business_apps["farmer_B"].cash = -1.0
            decisions.append((name, args, text))
        for w, (name, args, text) in zip(wakes, decisions, strict=True):
            transcripts[w.firm].append(
                {"role": "assistant", "content": text, "tool_calls": [[name, args]] if name else []}
            )
            res = econ.apply(w.firm, name, args, text)
            if name:
                last[w.firm] = result_text(res)
                transcripts[w.firm].append({"role": "tool", "content": last[w.firm]})
    result = econ.finish()
    return ScriptedRun(econ, result, transcripts, events, buckets)
