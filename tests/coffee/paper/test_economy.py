"""The paper economy (`paper.economy`, `paper.schedule`, `paper.audit`) against the reference.

The literal values below were produced by the reference CoffeeBench `Environment`
(SakanaAI/CoffeeBench 71442fb, Python 3.12) driven by the scripted policy of
`_paper_script.py`; `scripted_run` drives `PaperEconomy` with the same policy, and every
number must match to the last bit: audits, daily snapshots, the truth ledger (digest of
every entry, ids included), the order and minute of every agent step, and the events.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import pytest

from econbench.coffee.paper.audit import classify_opex_entry, ref_sum
from econbench.coffee.paper.clock import BUSINESS_HOURS_END, EVENT_AGENT_WAKE
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.records import JournalEntry
from econbench.coffee.paper.schedule import EventLoop

from ._paper_script import ScriptedRun, scripted_run

# ----- reference values: seed 0, 8 days, main agent roaster_A -----

FINAL = {
    "farmer_A": {
        "true_initial_equity": 15120.0,
        "true_final_equity": 14978.48,
        "true_equity_at_run_end": None,
        "net_income": -141.52,
        "bankrupt_day": None,
        "bankrupt_reason": None,
        "completed": True,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 120.0,
            "true_returns": 0,
            "true_revenue": 120.0,
            "true_cogs": 60.0,
            "true_opex": 202.0,
            "true_opex_buckets": {
                "rent_utilities_expense": 200.0,
                "spoilage_expense": 2.0,
                "other_operating_expense": 0.0,
            },
            "true_interest_net": -0.48,
            "true_net_income": -141.52,
            "true_operating_cf": -200.0,
            "true_investing_cf": -40.0,
            "true_net_cash_change": -240.0,
        },
        "balance_sheet": {
            "true_cash": 14760.0,
            "true_inventory_value": 98.0,
            "true_accounts_receivable": 120.48,
            "true_accounts_payable": 0,
            "true_equity": 14978.48,
        },
    },
    "farmer_B": {
        "true_initial_equity": 15120.0,
        "true_final_equity": 92.0,
        "true_equity_at_run_end": 92.0,
        "net_income": -15028.0,
        "bankrupt_day": 4,
        "bankrupt_reason": "cash_below_zero",
        "completed": False,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 0,
            "true_returns": 0,
            "true_revenue": 0,
            "true_cogs": 0,
            "true_opex": 227.0,
            "true_opex_buckets": {
                "rent_utilities_expense": 125.0,
                "spoilage_expense": 2.0,
                "other_operating_expense": 100.0,
            },
            "true_interest_net": 0,
            "true_net_income": -227.0,
            "true_operating_cf": -125.0,
            "true_investing_cf": -100.0,
            "true_net_cash_change": -225.0,
        },
        "balance_sheet": {
            "true_cash": -26.0,
            "true_inventory_value": 118.0,
            "true_accounts_receivable": 0,
            "true_accounts_payable": 0,
            "true_equity": 92.0,
        },
    },
    "roaster_A": {
        "true_initial_equity": 15176.4,
        "true_final_equity": 14960.13,
        "true_equity_at_run_end": None,
        "net_income": -216.27,
        "bankrupt_day": None,
        "bankrupt_reason": None,
        "completed": True,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 222.5,
            "true_returns": 22.0,
            "true_revenue": 200.5,
            "true_cogs": 111.73,
            "true_opex": 304.56,
            "true_opex_buckets": {
                "rent_utilities_expense": 240.0,
                "spoilage_expense": 7.06,
                "other_operating_expense": 57.5,
            },
            "true_interest_net": 0.48,
            "true_net_income": -216.27,
            "true_operating_cf": -152.0,
            "true_investing_cf": -60.0,
            "true_net_cash_change": -212.0,
        },
        "balance_sheet": {
            "true_cash": 14788.0,
            "true_inventory_value": 237.61,
            "true_accounts_receivable": 55.0,
            "true_accounts_payable": 120.48,
            "true_equity": 14960.13,
        },
    },
    "roaster_B": {
        "true_initial_equity": 15176.4,
        "true_final_equity": 14930.52,
        "true_equity_at_run_end": None,
        "net_income": -245.88,
        "bankrupt_day": None,
        "bankrupt_reason": None,
        "completed": True,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 0,
            "true_returns": 0,
            "true_revenue": 0,
            "true_cogs": 0,
            "true_opex": 245.88,
            "true_opex_buckets": {
                "rent_utilities_expense": 240.0,
                "spoilage_expense": 5.88,
                "other_operating_expense": 0.0,
            },
            "true_interest_net": 0,
            "true_net_income": -245.88,
            "true_operating_cf": -240.0,
            "true_investing_cf": 0,
            "true_net_cash_change": -240.0,
        },
        "balance_sheet": {
            "true_cash": 14760.0,
            "true_inventory_value": 170.52,
            "true_accounts_receivable": 0,
            "true_accounts_payable": 0,
            "true_equity": 14930.52,
        },
    },
    "retailer_A": {
        "true_initial_equity": 15250.0,
        "true_final_equity": 15217.0,
        "true_equity_at_run_end": None,
        "net_income": -33.0,
        "bankrupt_day": None,
        "bankrupt_reason": None,
        "completed": True,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 760.0,
            "true_returns": 0,
            "true_revenue": 760.0,
            "true_cogs": 393.0,
            "true_opex": 400.0,
            "true_opex_buckets": {
                "rent_utilities_expense": 400.0,
                "spoilage_expense": 0.0,
                "other_operating_expense": 0.0,
            },
            "true_interest_net": 0,
            "true_net_income": -33.0,
            "true_operating_cf": 272.0,
            "true_investing_cf": 0,
            "true_net_cash_change": 272.0,
        },
        "balance_sheet": {
            "true_cash": 15272.0,
            "true_inventory_value": 0.0,
            "true_accounts_receivable": 0,
            "true_accounts_payable": 55.0,
            "true_equity": 15217.0,
        },
    },
    "retailer_B": {
        "true_initial_equity": 15250.0,
        "true_final_equity": -68.5,
        "true_equity_at_run_end": -11.0,
        "net_income": -15318.5,
        "bankrupt_day": 5,
        "bankrupt_reason": "cash_below_zero",
        "completed": False,
        "annual": {
            "window": [0, 7],
            "true_revenue_gross": 540.0,
            "true_returns": 0,
            "true_revenue": 540.0,
            "true_cogs": 307.5,
            "true_opex": 300.0,
            "true_opex_buckets": {
                "rent_utilities_expense": 300.0,
                "spoilage_expense": 0.0,
                "other_operating_expense": 0.0,
            },
            "true_interest_net": 0,
            "true_net_income": -67.5,
            "true_operating_cf": 240.0,
            "true_investing_cf": 0,
            "true_net_cash_change": 240.0,
        },
        "balance_sheet": {
            "true_cash": -11.0,
            "true_inventory_value": 0.0,
            "true_accounts_receivable": 0,
            "true_accounts_payable": 0.0,
            "true_equity": -11.0,
        },
    },
}

ROAST_METRICS_ROASTER_A = {
    "green_consumed_kg": 20,
    "roasted_produced_kg": 17,
    "roast_labor_paid": 60.0,
    "specialty_capacity_share": 0.0,
    "commodity": {
        "green_consumed_kg": 20,
        "roasted_produced_kg": 17,
        "actual_yield": 0.85,
        "expected_yield": 0.85,
        "roast_labor_paid": 60.0,
        "roasted_b2b_qty_sold": 20,
        "truth_cogs_per_kg_roasted": 6.1744,
    },
    "specialty": {
        "green_consumed_kg": 0,
        "roasted_produced_kg": 0,
        "actual_yield": None,
        "expected_yield": 0.82,
        "roast_labor_paid": 0,
        "roasted_b2b_qty_sold": 0,
        "truth_cogs_per_kg_roasted": None,
    },
}

MESSAGE_VOLUME = {
    "farmer_A": {
        "total_sent": 0,
        "days_observed": 0,
        "avg_per_day": 0.0,
        "max_per_day": 0,
        "inbound_total": 0,
        "unread_at_end": 0,
    },
    "farmer_B": {
        "total_sent": 0,
        "days_observed": 0,
        "avg_per_day": 0.0,
        "max_per_day": 0,
        "inbound_total": 0,
        "unread_at_end": 0,
    },
    "roaster_A": {
        "total_sent": 1,
        "days_observed": 1,
        "avg_per_day": 1.0,
        "max_per_day": 1,
        "inbound_total": 0,
        "unread_at_end": 0,
    },
    "roaster_B": {
        "total_sent": 0,
        "days_observed": 0,
        "avg_per_day": 0.0,
        "max_per_day": 0,
        "inbound_total": 0,
        "unread_at_end": 0,
    },
    "retailer_A": {
        "total_sent": 0,
        "days_observed": 0,
        "avg_per_day": 0.0,
        "max_per_day": 0,
        "inbound_total": 1,
        "unread_at_end": 0,
    },
    "retailer_B": {
        "total_sent": 0,
        "days_observed": 0,
        "avg_per_day": 0.0,
        "max_per_day": 0,
        "inbound_total": 0,
        "unread_at_end": 0,
    },
}

RUN_TAIL = {
    "marketplace_summary": {
        "total_deals": 4,
        "total_listings": 3,
        "total_offers": 4,
        "total_messages": 1,
    },
    "main_agent": "roaster_A",
    "terminated_early": None,
    "actual_final_day": 7,
}

DAILY = {
    0: {
        "farmer_A": [14935.0, 15095.0, 0, 0, 120.0],
        "farmer_B": [14975.0, 15095.0, 0, 0, 120.0],
        "roaster_A": [14970.0, 15146.4, 0, 0, 176.4],
        "roaster_B": [14970.0, 15146.4, 0, 0, 176.4],
        "retailer_A": [15310.0, 15380.0, 0, 0, 70.0],
        "retailer_B": [15346.0, 15376.0, 0, 0, 30.0],
    },
    1: {
        "farmer_A": [14910.0, 15070.0, 0, 0, 60.0],
        "farmer_B": [14950.0, 15070.0, 0, 0, 120.0],
        "roaster_A": [14940.0, 15116.4, 0, 0, 117.6],
        "roaster_B": [14940.0, 15116.4, 0, 0, 176.4],
        "retailer_A": [15400.0, 15400.0, 0, 0, 0.0],
        "retailer_B": [15350.0, 15350.0, 0, 0, 0.0],
    },
    2: {
        "farmer_A": [14885.0, 15105.0, 120.0, 0, 100.0],
        "farmer_B": [14925.0, 15045.0, 0, 0, 120.0],
        "roaster_A": [14938.0, 15127.36, 0.0, 120.0, 139.96],
        "roaster_B": [14910.0, 15086.4, 0, 0, 176.4],
        "retailer_A": [15422.0, 15422.0, 0, 0.0, 0.0],
        "retailer_B": [15300.0, 15300.0, 0, 0, 0.0],
    },
    3: {
        "farmer_A": [14860.0, 15080.0, 120.0, 0, 100.0],
        "farmer_B": [-1.0, 217.0, 0, 0, 118.0],
        "roaster_A": [14908.0, 15125.46, 57.5, 120.0, 279.96],
        "roaster_B": [14880.0, 15056.4, 0, 0, 176.4],
        "retailer_A": [15372.0, 15372.0, 0, 0.0, 0.0],
        "retailer_B": [89.0, 31.5, 0, 57.5, 0.0],
    },
    4: {
        "farmer_A": [14835.0, 15053.12, 120.12, 0, 98.0],
        "farmer_B": [-26.0, 92.0, 0, 0, 118.0],
        "roaster_A": [14878.0, 15095.34, 57.5, 120.12, 279.96],
        "roaster_B": [14850.0, 15026.4, 0, 0, 176.4],
        "retailer_A": [15322.0, 15322.0, 0, 0.0, 0.0],
        "retailer_B": [39.0, -18.5, 0, 57.5, 0.0],
    },
    5: {
        "farmer_A": [14810.0, 15028.24, 120.24, 0, 98.0],
        "farmer_B": [-26.0, 92.0, 0, 0, 118.0],
        "roaster_A": [14848.0, 15007.72, 0.0, 120.24, 244.67],
        "roaster_B": [14820.0, 14996.4, 0, 0, 176.4],
        "retailer_A": [15272.0, 15272.0, 0, 0.0, 0.0],
        "retailer_B": [-11.0, -11.0, 0, 0.0, 0.0],
    },
    6: {
        "farmer_A": [14785.0, 15003.36, 120.36, 0, 98.0],
        "farmer_B": [-26.0, 92.0, 0, 0, 118.0],
        "roaster_A": [14818.0, 14997.31, 55.0, 120.36, 244.67],
        "roaster_B": [14790.0, 14960.52, 0, 0, 170.52],
        "retailer_A": [15322.0, 15267.0, 0, 55.0, 0.0],
        "retailer_B": [-11.0, -11.0, 0, 0.0, 0.0],
    },
    7: {
        "farmer_A": [14760.0, 14978.48, 120.48, 0, 98.0],
        "farmer_B": [-26.0, 92.0, 0, 0, 118.0],
        "roaster_A": [14788.0, 14960.13, 55.0, 120.48, 237.61],
        "roaster_B": [14760.0, 14930.52, 0, 0, 170.52],
        "retailer_A": [15272.0, 15217.0, 0, 55.0, 0.0],
        "retailer_B": [-11.0, -11.0, 0, 0.0, 0.0],
    },
}

DAILY_TOTALS = [
    [0, 0.0, 210.0, 2, 756.0, 3, 0],
    [1, 0.0, 210.0, 2, 194.0, 3, 2],
    [2, 0.0, 210.0, 1, 160.0, 3, 3],
    [3, 120.0, 210.0, 1, 90.0, 3, 3],
    [4, 120.12, 210.0, 0, 0, 3, 3],
    [5, 120.24, 185.0, 0, 0, 2, 4],
    [6, 120.36, 135.0, 1, 100.0, 2, 4],
    [7, 120.48, 135.0, 0, 0, 2, 4],
]

TRUTH_DIGEST = {
    "farmer_A": "51d65ca0163a74fd5d718c6ba505af326b0b8b70121ebdca74a333c85b250943",
    "farmer_B": "e1ee07e73de553e612122ff3f2b4f20aaf0b831f1400f169ecef0fc36dd98487",
    "roaster_A": "64a011a4f784be08ed47cdd12d138df985ca20752564705800e3ec6f33744df0",
    "roaster_B": "14ab2c88f72bb1a1ca94f1b341780b7c60c5913f7c15423e6ecf453a0b729689",
    "retailer_A": "6fa30554f9314226f19292a99525e55052d01b08ae5c96e26a29a7a98c771854",
    "retailer_B": "30fe39298f0774d2269d4d5bb7ea23583cf06dd6c5c32dcf825303f646f110ea",
}

TRUTH_COUNTS = {
    "farmer_A": {
        "cash_out": 9,
        "interest_revenue": 4,
        "inventory_in": 1,
        "inventory_out": 1,
        "operating_expense": 8,
        "sale_revenue": 1,
        "spoilage_expense": 1,
    },
    "farmer_B": {"cash_out": 6, "operating_expense": 5, "spoilage_expense": 1, "writedown": 1},
    "roaster_A": {
        "bad_debt_expense": 1,
        "cash_in": 1,
        "cash_out": 9,
        "cogs_reversal": 1,
        "interest_expense": 4,
        "inventory_consumed": 1,
        "inventory_in": 3,
        "inventory_out": 3,
        "operating_expense": 8,
        "purchase_cogs": 1,
        "sale_revenue": 3,
        "sale_reversal": 1,
        "spoilage_expense": 1,
    },
    "roaster_B": {"cash_out": 8, "operating_expense": 8, "spoilage_expense": 1},
    "retailer_A": {
        "cash_in": 4,
        "cash_out": 9,
        "inventory_in": 2,
        "inventory_out": 4,
        "operating_expense": 8,
        "purchase_cogs": 2,
        "sale_revenue": 4,
    },
    "retailer_B": {
        "cash_in": 3,
        "cash_out": 6,
        "inventory_in": 1,
        "inventory_out": 3,
        "operating_expense": 6,
        "purchase_cogs": 1,
        "sale_revenue": 3,
    },
}

EVENT_COUNTS = {
    "agent_bankrupt": 2,
    "agent_step": 84,
    "consumer_sale": 7,
    "day_end": 8,
    "deal_accepted": 4,
    "deal_delivered": 4,
    "deliveries_processed": 3,
    "production_materialized": 1,
    "roast_materialized": 1,
    "run_end": 1,
    "run_start": 1,
}

DEALS = [
    ["dl_60a641bc", "farmer_A", "roaster_A", 30, 4.0, 2, "b6776180"],
    ["dl_6a172276", "roaster_A", "retailer_A", 10, 11.0, 2, "325c2cc0"],
    ["dl_6e0c196a", "roaster_A", "retailer_B", 5, 11.5, 3, "88cc7ae5"],
    ["dl_317b194f", "roaster_A", "retailer_A", 5, 11.0, 6, "3735b6a5"],
]

STEPS = [
    "540 farmer_A post_listing",
    "540 farmer_B wait_for_next_day",
    "540 roaster_A view_listings",
    "540 roaster_B wait_for_next_day",
    "540 retailer_A set_retail_price",
    "540 retailer_B wait_for_next_day",
    "570 farmer_A produce_item",
    "570 roaster_A make_offer",
    "570 retailer_A wait_for_next_day",
    "570 farmer_A post_listing",
    "600 farmer_A produce_item",
    "600 roaster_A post_listing",
    "630 farmer_A wait_for_next_day",
    "630 roaster_A send_message",
    "630 retailer_A set_retail_price",
    "660 roaster_A wait_for_next_day",
    "660 retailer_A wait_for_next_day",
    "1980 farmer_A view_offers",
    "1980 farmer_B wait_for_next_day",
    "1980 roaster_A wait_for_next_day",
    "1980 roaster_B wait_for_next_day",
    "1980 retailer_A view_listings",
    "1980 retailer_B view_listings",
    "2010 farmer_A accept_offer",
    "2010 retailer_A make_offer",
    "2010 retailer_B make_offer",
    "2010 roaster_A view_offers",
    "2040 farmer_A wait_for_next_day",
    "2040 retailer_A wait_for_next_day",
    "2040 retailer_B wait_for_next_day",
    "2040 roaster_A accept_offer",
    "2040 retailer_A wait_for_next_day",
    "2070 roaster_A wait_for_next_day",
    "3420 farmer_A view_trial_balance",
    "3420 roaster_A view_offers",
    "3420 retailer_A view_payables",
    "3420 farmer_B wait_for_next_day",
    "3420 roaster_B wait_for_next_day",
    "3420 retailer_B wait_for_next_day",
    "3450 farmer_A wait_for_next_day",
    "3450 roaster_A accept_offer",
    "3450 retailer_A return_shipment",
    "3450 retailer_B wait_for_next_day",
    "3450 roaster_A roast",
    "3480 roaster_A wait_for_next_day",
    "3480 retailer_A pay_invoice",
    "3480 roaster_A wait_for_next_day",
    "3510 retailer_A view_consumer_sales",
    "3540 retailer_A wait_for_next_day",
    "4860 roaster_A view_trial_balance",
    "4860 retailer_B view_deals",
    "4860 farmer_A wait_for_next_day",
    "4860 farmer_B produce_item",
    "4860 roaster_B wait_for_next_day",
    "4860 retailer_A view_messages",
    "4890 roaster_A wait_for_next_day",
    "4890 retailer_B wait_for_next_day",
    "4890 farmer_B wait_for_next_day",
    "4890 retailer_A read_message",
    "4920 retailer_A wait_for_next_day",
    "6300 farmer_A wait_for_next_day",
    "6300 roaster_A view_payables",
    "6300 roaster_B wait_for_next_day",
    "6300 retailer_A wait_for_next_day",
    "6300 retailer_B wait_for_next_day",
    "6330 roaster_A wait_for_next_day",
    "7740 farmer_A wait_for_next_day",
    "7740 roaster_A wait_for_next_day",
    "7740 roaster_B wait_for_next_day",
    "7740 retailer_A view_listings",
    "7770 retailer_A make_offer",
    "7770 roaster_A view_offers",
    "7800 retailer_A wait_for_next_day",
    "7800 roaster_A accept_offer",
    "7800 retailer_A wait_for_next_day",
    "7830 roaster_A wait_for_next_day",
    "9180 retailer_A wait_for_next_day",
    "9180 farmer_A wait_for_next_day",
    "9180 roaster_A wait_for_next_day",
    "9180 roaster_B wait_for_next_day",
    "10620 farmer_A wait_for_next_day",
    "10620 roaster_A wait_for_next_day",
    "10620 roaster_B wait_for_next_day",
    "10620 retailer_A wait_for_next_day",
]

CONSUMER_SALES = [
    [0, "retailer_A", "roasted_coffee_kg", 18, 13, 5, 360.0, 29.51, 0.4237],
    [0, "retailer_B", "roasted_coffee_kg", 22, 17, 5, 396.0, 29.51, 0.5763],
    [1, "retailer_A", "roasted_coffee_kg", 7, 12, 5, 140.0, 29.08, 0.4237],
    [1, "retailer_B", "roasted_coffee_kg", 3, 17, 5, 54.0, 29.08, 0.5763],
    [2, "retailer_A", "roasted_coffee_kg", 8, 27, 5, 160.0, 26.55, 1.0],
    [3, "retailer_B", "roasted_coffee_kg", 5, 32, 5, 90.0, 32.07, 1.0],
    [6, "retailer_A", "roasted_coffee_kg", 5, 27, 5, 100.0, 26.7, 1.0],
]

BANKRUPTCIES = [
    {
        "agent_id": "farmer_B",
        "day": 4,
        "cash": -26.0,
        "true_equity_at_bankruptcy": 92.0,
        "reason": "cash_below_zero",
        "detail": None,
        "bad_debt_writeoffs": [],
    },
    {
        "agent_id": "retailer_B",
        "day": 5,
        "cash": -11.0,
        "true_equity_at_bankruptcy": -68.5,
        "reason": "cash_below_zero",
        "detail": None,
        "bad_debt_writeoffs": [
            {
                "invoice_id": "88cc7ae5",
                "seller": "roaster_A",
                "buyer": "retailer_B",
                "outstanding": 57.5,
                "principal": 57.5,
                "late_fees_lost": 0.0,
            }
        ],
    },
]

LOYALTY = {"retailer_A": 0.9430442707957998, "retailer_B": 1.0689495244780385}

DEMAND_PATH_HEAD = {
    "roasted_coffee_kg": [0.4708577023403322, -0.6982890523505749, -0.33985722403921054],
    "roasted_specialty_kg": [0.4966248517675986, -0.3234908152737524, -0.16683399189783477],
}

AVAILABLE_AT = {
    "farmer_A": 11220,
    "farmer_B": 6900,
    "roaster_A": 11220,
    "roaster_B": 11220,
    "retailer_A": 11220,
    "retailer_B": 8340,
}

STEP_COUNT = 84

EARLY = {
    "terminated_early": {
        "agent_id": "retailer_B",
        "day": 5,
        "reason": "cash_below_zero",
        "detail": None,
    },
    "actual_final_day": 5,
}

EARLY_DAY_ENDS = [0, 1, 2, 3, 4]

EARLY_LAST_STEP = "7740 retailer_A view_listings"

EARLY_NI = {
    "farmer_A": -91.88,
    "farmer_B": -227.0,
    "roaster_A": -168.56,
    "roaster_B": -180.0,
    "retailer_A": 22.0,
    "retailer_B": -67.5,
}


@pytest.fixture(scope="module")
def run() -> ScriptedRun:
    return scripted_run(0, 8, "roaster_A")


# ----- the scheduler -----


def test_event_loop_pops_a_bucket_in_insertion_order() -> None:
    loop = EventLoop()
    loop.schedule_at(600, "b", target_agent="x")
    loop.schedule_at(540, "a1", target_agent="late-inserted")
    loop.schedule_at(600, "c", target_agent="y")
    loop.schedule_at(540, "a2", target_agent="z")
    assert loop.peek_time() == 540
    assert [ev.kind for ev in loop.pop_bucket()] == ["a1", "a2"]
    assert loop.current_min == 540
    assert [ev.target_agent for ev in loop.pop_bucket()] == ["x", "y"]
    assert loop.pop_bucket() == []
    assert not loop


def test_event_loop_clamps_a_past_event_up_to_now() -> None:
    loop = EventLoop()
    loop.schedule_at(900, "now")
    loop.pop_bucket()
    ev = loop.schedule_at(100, "past")
    assert ev.virtual_min == 900  # rewritten, so a stale check against 100 drops it
    assert loop.pop().kind == "past"
    assert loop.current_min == 900


def test_ref_sum_is_python_312_sum() -> None:
    # Values of Python 3.12's builtin sum (Neumaier-compensated); 3.11 gives
    # 0.9999999999999999 and 0.0 for the first two.
    assert ref_sum([0.1] * 10) == 1.0
    assert ref_sum([1e100, 1.0, -1e100]) == 1.0
    assert ref_sum([3, 0.1, 0.2, 5, 0.3]) == 8.600000000000001
    assert ref_sum([110.0, 0.11, 0.11, 0.11, -22.0]) == 88.33
    assert ref_sum([]) == 0
    assert ref_sum([2, 3]) == 5 and isinstance(ref_sum([2, 3]), int)


def test_classify_opex_entry() -> None:
    def entry(et: str, memo: str | None = None) -> JournalEntry:
        return JournalEntry(id="x", day=0, trader_id="a", entry_type=et, amount=1.0, memo=memo)

    assert classify_opex_entry(entry("operating_expense", "daily fixed opex (farmer)")) == (
        "rent_utilities_expense"
    )
    assert classify_opex_entry(entry("operating_expense", "other")) == "other_operating_expense"
    assert classify_opex_entry(entry("spoilage_expense")) == "spoilage_expense"
    assert classify_opex_entry(entry("writedown")) == "other_operating_expense"
    assert classify_opex_entry(entry("bad_debt_expense")) == "other_operating_expense"
    assert classify_opex_entry(entry("inventory_out")) is None
    assert classify_opex_entry(entry("interest_expense")) is None


# ----- the scripted run against the reference -----


def test_final_audit_matches_reference(run: ScriptedRun) -> None:
    for aid, want in FINAL.items():
        got = run.result["agents"][aid]
        for key in (
            "true_initial_equity",
            "true_final_equity",
            "true_equity_at_run_end",
            "net_income",
            "bankrupt_day",
            "bankrupt_reason",
            "completed",
        ):
            assert got[key] == want[key], (aid, key)
        assert got["audit"]["annual"] == want["annual"], aid
        assert got["audit"]["balance_sheet"] == want["balance_sheet"], aid
        assert got["audit"]["message_volume"] == MESSAGE_VOLUME[aid], aid
        assert "usage" not in got  # the run layer owns model usage
    assert run.result["agents"]["roaster_A"]["audit"]["roast_metrics"] == ROAST_METRICS_ROASTER_A
    for key, want_tail in RUN_TAIL.items():
        assert run.result[key] == want_tail, key


def test_daily_snapshots_match_reference(run: ScriptedRun) -> None:
    stats = run.econ.daily_stats
    assert [s["day"] for s in stats] == list(DAILY)
    for s in stats:
        got = {
            aid: [p["cash"], p["true_equity"], p["ar_total"], p["ap_total"], p["inventory_value"]]
            for aid, p in s["per_agent"].items()
        }
        assert got == DAILY[s["day"]], s["day"]
    got_totals = [
        [
            s["day"],
            s["overdue_kept_open"],
            s["opex_total"],
            s["consumer_sales_count"],
            s["consumer_sales_revenue"],
            s["marketplace_open_listings"],
            s["marketplace_total_deals"],
        ]
        for s in stats
    ]
    assert got_totals == DAILY_TOTALS


def test_truth_ledger_matches_reference_entry_for_entry(run: ScriptedRun) -> None:
    ledger = run.econ.truth_ledger
    counts = {
        aid: dict(sorted(_count(e.entry_type for e in es).items())) for aid, es in ledger.items()
    }
    assert counts == TRUTH_COUNTS
    digests = {
        aid: hashlib.sha256(
            json.dumps([asdict(e) for e in es], sort_keys=True).encode()
        ).hexdigest()
        for aid, es in ledger.items()
    }
    assert digests == TRUTH_DIGEST


def _count(xs: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in xs:  # type: ignore[attr-defined]
        out[x] = out.get(x, 0) + 1
    return out


def test_schedule_matches_reference(run: ScriptedRun) -> None:
    steps = [
        f"{d['at']} {d['agent_id']} {d['action']}" for et, d in run.events if et == "agent_step"
    ]
    assert steps == STEPS
    assert run.econ._available_at == AVAILABLE_AT
    assert run.econ.step_count == STEP_COUNT


def test_events_match_reference(run: ScriptedRun) -> None:
    assert dict(sorted(_count(et for et, _ in run.events).items())) == EVENT_COUNTS
    deals = [
        [
            d["deal_id"],
            d["seller"],
            d["buyer"],
            d["qty"],
            d["unit_price"],
            d["day"],
            d["invoice_id"],
        ]
        for et, d in run.events
        if et == "deal_delivered"
    ]
    assert deals == DEALS
    sales = [
        [
            d["day"],
            d["shop_id"],
            d["item_id"],
            d["qty"],
            d["elastic_qty"],
            d["floor_qty"],
            d["total_price"],
            d["market_demand"],
            d["share"],
        ]
        for et, d in run.events
        if et == "consumer_sale"
    ]
    assert sales == CONSUMER_SALES
    assert [d for et, d in run.events if et == "agent_bankrupt"] == BANKRUPTCIES
    start = next(d for et, d in run.events if et == "run_start")
    assert start["retailer_loyalty"] == LOYALTY
    assert {k: v[:3] for k, v in start["demand_paths"].items()} == DEMAND_PATH_HEAD
    assert all(len(v) == 8 + 2 for v in start["demand_paths"].values())
    assert "models" not in start


def test_focal_bankruptcy_ends_the_run_after_its_bucket() -> None:
    early = scripted_run(0, 6, "retailer_B")
    for key, want in EARLY.items():
        assert early.result[key] == want, key
    assert [d["day"] for et, d in early.events if et == "day_end"] == EARLY_DAY_ENDS
    steps = [
        f"{d['at']} {d['agent_id']} {d['action']}" for et, d in early.events if et == "agent_step"
    ]
    assert steps[-1] == EARLY_LAST_STEP
    got_ni = {
        aid: a["audit"]["annual"]["true_net_income"] for aid, a in early.result["agents"].items()
    }
    assert got_ni == EARLY_NI
    assert early.econ.over
    assert early.econ.next_wakes() == []


# ----- the pull API and the wake semantics -----


def _first_bucket(days: int = 2):
    econ = build_economy(0, days)
    econ.start()
    return econ, econ.next_wakes()


def test_first_bucket_wakes_every_firm_at_nine_with_a_morning_observation() -> None:
    econ, wakes = _first_bucket()
    assert [w.firm for w in wakes] == list(econ.business_apps)
    assert econ.time_manager.get_virtual_min() == 540
    for w in wakes:
        assert w.observation is not None
        assert w.observation.startswith("Observation: Day 0, 09:00 (Jan 1, Mon).\n")
        assert "[Wake reason:" not in w.observation  # the morning heartbeat is not named


def test_an_external_wake_moves_a_parked_clock_back_to_now() -> None:
    econ, wakes = _first_bucket()
    listing = econ.apply(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 40, "asking_price": 4.5, "payment_terms_days": 1},
    )
    for w in wakes[1:]:
        econ.apply(w.firm, None, None, "")
    assert econ._available_at["farmer_A"] == 570
    assert econ._available_at["roaster_A"] == BUSINESS_HOURS_END  # parked at the close

    wakes = econ.next_wakes()
    assert [(w.firm, w.observation) for w in wakes] == [("farmer_A", None)]  # mid-burst
    econ.apply("farmer_A", None, None, "done")
    assert econ._available_at["farmer_A"] == BUSINESS_HOURS_END

    # An offer made "now" (09:30) by a firm woken now: roaster_A is woken by hand here.
    econ.time_manager.virtual_min = 570
    econ._wake_agent_externally("roaster_A", "test")
    assert econ._available_at["roaster_A"] == 570
    wakes = econ.next_wakes()
    assert [w.firm for w in wakes] == ["roaster_A"]
    assert wakes[0].observation.endswith("\n[Wake reason: test]")
    econ.apply(
        "roaster_A",
        "make_offer",
        {"listing_id": listing["listing_id"], "offered_price": 4.0, "qty": 30},
    )
    # The seller's clock went back from 19:00 to now, and it wakes at 09:30 again.
    assert econ._available_at["farmer_A"] == 570
    wakes = econ.next_wakes()
    assert [w.firm for w in wakes] == ["farmer_A"]
    assert wakes[0].observation.startswith("Observation: Day 0, 09:30 (Jan 1, Mon).\n")
    assert wakes[0].observation.endswith(
        f"\n[Wake reason: offer_received: roaster_A offered 30 kg @ $4.0/kg on "
        f"{listing['listing_id']}]"
    )
    econ.apply("farmer_A", None, None)
    wakes = econ.next_wakes()  # roaster_A's own continuation, 30 minutes after its offer
    assert [(w.firm, w.observation) for w in wakes] == [("roaster_A", None)]
    assert econ.time_manager.get_virtual_min() == 600


def test_a_wake_behind_the_agents_clock_is_dropped_as_stale() -> None:
    econ, wakes = _first_bucket()
    for w in wakes:
        econ.apply(w.firm, "view_deals", {})  # everyone continues at 09:30
    econ.event_loop.schedule_at(600, EVENT_AGENT_WAKE, target_agent="farmer_A")
    wakes = econ.next_wakes()
    assert econ.time_manager.get_virtual_min() == 570
    assert len(wakes) == 6
    for w in wakes:
        econ.apply(w.firm, None, None)  # everyone parks at 19:00
    # farmer_A's clock says 19:00, so the 10:00 wake is stale: the next bucket is day 1.
    wakes = econ.next_wakes()
    assert econ.time_manager.get_virtual_min() == 1440 + 540
    assert len(econ.daily_stats) == 1
    assert len(wakes) == 6


def test_a_reply_without_a_tool_call_is_the_reference_agents_wait() -> None:
    econ, wakes = _first_bucket()
    res = econ.apply(wakes[0].firm, None, None, "  all good  ")
    assert res == {"status": "success", "message": "all good"}
    res = econ.apply(wakes[1].firm, None, None, "   ")
    assert res == {"status": "success", "message": "(no action; sleeping until next event)"}
    assert econ._available_at[wakes[0].firm] == BUSINESS_HOURS_END


def test_answers_must_follow_bucket_order() -> None:
    econ, wakes = _first_bucket()
    with pytest.raises(ValueError, match="bucket order"):
        econ.apply(wakes[1].firm, None, None)
    with pytest.raises(RuntimeError, match="not yet applied"):
        econ.next_wakes()


def test_a_context_overflow_bankrupts_the_firm() -> None:
    econ, wakes = _first_bucket()
    econ.fail(wakes[0].firm, "context_overflow", "too long")
    assert econ._bankrupt_reason == {wakes[0].firm: "context_overflow"}
    assert econ._available_at[wakes[0].firm] == BUSINESS_HOURS_END
