"""The paper firm books (the reference's ``BusinessApp``): every tool's result text.

Every expected text below is what the reference itself returned for the same call in the
same state (see ``World``): production and its caps, roasting, retail prices, consumer
sales and the market aggregate, payables and receivables, payments, returns and refunds,
and the truth-ledger entries the tools book.
"""

from dataclasses import asdict, fields
from typing import Any

import pytest
from tests.coffee.paper._books_world import World, books_state

from econbench.coffee.paper import economy
from econbench.coffee.paper.books import FirmBooks
from econbench.coffee.paper.clock import TimeManager
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.ids import IdSource
from econbench.coffee.paper.market import Marketplace
from econbench.coffee.paper.records import AgentEndowment, Deal, Invoice
from econbench.coffee.paper.tools import execute

SALES = [
    {
        "day": 18,
        "shop_id": "retailer_A",
        "item_id": "roasted_coffee_kg",
        "qty": 7,
        "unit_price": 24.5,
        "total_price": 171.5,
        "share": 0.5,
    },
    {
        "day": 19,
        "shop_id": "retailer_B",
        "item_id": "roasted_coffee_kg",
        "qty": 5,
        "unit_price": 22.0,
        "total_price": 110.0,
        "share": 0.5,
    },
    {
        "day": 19,
        "shop_id": "retailer_A",
        "item_id": "roasted_coffee_kg",
        "qty": 3,
        "unit_price": 24.5,
        "total_price": 73.5,
        "share": 0.5,
    },
    {
        "day": 20,
        "shop_id": "retailer_A",
        "item_id": "roasted_specialty_kg",
        "qty": 2,
        "unit_price": 61.333,
        "total_price": 122.67,
        "share": 1.0,
    },
    {
        "day": 12,
        "shop_id": "retailer_A",
        "item_id": "roasted_specialty_kg",
        "qty": 1,
        "unit_price": 60.0,
        "total_price": 60.0,
        "share": 1.0,
    },
]
INVOICES = [
    ("i3", 100.0, 1, 15, {"late_fees_accrued": 0.5}),
    ("i1", 50.123, 2, 15, {"credited_amount": 10.0}),
    ("i2", 70.0, 3, 25, {}),
    ("i4", 80.0, 3, 10, {"bad_debt": True, "bad_debt_date": 12}),
    ("i5", 20.0, 3, 12, {"credited_amount": 20.0}),
    ("i6", 0.005, 3, 12, {}),
    ("i0", 12.0, 3, 30, {"paid": True, "paid_date": 4}),
]


def books_scenario(w: World) -> None:
    w.at(540)
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "nope", "quantity": 5},
        '{"status": "error", "message": "Item \'nope\' not in catalog."}',
    )
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "roasted_coffee_kg", "quantity": 5},
        ('{"status": "error", "message": "\'roasted_coffee_kg\' is not a producible item."}'),
    )
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": "q"},
        '{"status": "error", "message": "quantity must be an integer."}',
    )
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": -1},
        '{"status": "error", "message": "quantity must be > 0."}',
    )
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 10},
        (
            '{"status": "success", "item_id": "green_coffee_kg", "produced": 10, '
            '"unit_cost": 2.0, "total_cost": 20.0, "ready_day": 2, '
            '"production_lag_days": 2, "new_inventory_qty": 60, '
            '"remaining_cash": 14980.0, "production_capacity_used_today": 10, '
            '"production_capacity_remaining_today": 20}'
        ),
    )
    w.C(
        "farmer_A",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 21},
        (
            '{"status": "error", '
            "\"message\": \"Today's production capacity for 'green_coffee_kg' is 30. Alr"
            'eady used 10; only 20 remaining today."}'
        ),
    )
    w.C(
        "farmer_B",
        "produce_item",
        {"item_id": "green_specialty_kg", "quantity": 7},
        (
            '{"status": "success", "item_id": "green_specialty_kg", "produced": 7, '
            '"unit_cost": 10.0, "total_cost": 70.0, "ready_day": 2, '
            '"production_lag_days": 2, "new_inventory_qty": 0, '
            '"remaining_cash": 14930.0, "production_capacity_used_today": 7, '
            '"production_capacity_remaining_today": 3}'
        ),
    )
    w.apps["farmer_B"].inventory["green_coffee_kg"] = 115
    w.C(
        "farmer_B",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 10},
        (
            '{"status": "error", '
            '"message": "Producing 10 kg would push your committed holdings to 132 kg'
            " over the inventory cap 120 kg (on-hand 115 kg + in-flight 7 kg; -2 kg h"
            "eadroom). Wait for in-flight batches to land / sell some inventory befor"
            'e producing more."}'
        ),
    )
    w.apps["farmer_B"].inventory["green_coffee_kg"] = 60
    w.apps["farmer_B"].cash = 1.0
    w.C(
        "farmer_B",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 3},
        (
            '{"status": "error", '
            '"message": "Insufficient cash ($1.00) to produce 3 units at $2.00/unit ='
            ' $6.00."}'
        ),
    )
    w.apps["farmer_B"].cash = 9000.0
    w.mk.items["green_coffee_kg"].production_lag_days = 0
    w.C(
        "farmer_B",
        "produce_item",
        {"item_id": "green_coffee_kg", "quantity": 3},
        (
            '{"status": "success", "item_id": "green_coffee_kg", "produced": 3, '
            '"unit_cost": 2.0, "total_cost": 6.0, "ready_day": 0, '
            '"production_lag_days": 0, "new_inventory_qty": 63, '
            '"remaining_cash": 8994.0, "production_capacity_used_today": 3, '
            '"production_capacity_remaining_today": 27}'
        ),
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "beans", "qty_kg": 2},
        (
            '{"status": "error", '
            "\"message\": \"Unknown green item 'beans'. Valid: ['green_coffee_kg', "
            "'green_specialty_kg'].\"}"
        ),
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": 0},
        '{"status": "error", "message": "qty_kg must be > 0."}',
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": "three"},
        '{"status": "error", "message": "qty_kg must be an integer."}',
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": 3},
        (
            '{"status": "error", '
            '"message": "You only hold 0 kg of green_coffee_kg; requested 3 kg."}'
        ),
    )
    w.apps["roaster_A"].inventory["green_coffee_kg"] = 20
    w.apps["roaster_A"].inventory_total_cost["green_coffee_kg"] = 101.0
    w.apps["roaster_A"].inventory["green_specialty_kg"] = 100
    w.apps["roaster_A"].inventory_total_cost["green_specialty_kg"] = 1234.5
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_coffee_kg", "qty_kg": "18"},
        (
            '{"status": "error", '
            '"message": "Roasting 18 kg green_coffee_kg \\u2192 15 kg roasted_coffee_k'
            "g would push your committed holdings to 147 kg, "
            "over the inventory cap 120 kg (on-hand 150 kg \\u2212 18 kg consumed + in"
            "-flight 0 kg + 15 kg roast output). Wait for in-flight batches to land o"
            'r sell some inventory first."}'
        ),
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_specialty_kg", "qty_kg": 40},
        (
            '{"status": "error", '
            '"message": "Roasting 40 kg green_specialty_kg \\u2192 33 kg roasted_speci'
            "alty_kg would push your committed holdings to 143 kg, "
            "over the inventory cap 120 kg (on-hand 150 kg \\u2212 40 kg consumed + in"
            "-flight 0 kg + 33 kg roast output). Wait for in-flight batches to land o"
            'r sell some inventory first."}'
        ),
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_specialty_kg", "qty_kg": 30},
        (
            '{"status": "error", '
            '"message": "Roasting 30 kg green_specialty_kg \\u2192 25 kg roasted_speci'
            "alty_kg would push your committed holdings to 145 kg, "
            "over the inventory cap 120 kg (on-hand 150 kg \\u2212 30 kg consumed + in"
            "-flight 0 kg + 25 kg roast output). Wait for in-flight batches to land o"
            'r sell some inventory first."}'
        ),
    )
    w.apps["roaster_A"].inventory["green_specialty_kg"] = 30
    w.apps["roaster_A"].inventory_total_cost["green_specialty_kg"] = 300.0
    w.apps["roaster_A"].cash = 10.0
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_specialty_kg", "qty_kg": 5},
        (
            '{"status": "error", '
            '"message": "Insufficient cash ($10.00) to cover roast labor cost $25.00 '
            'for 5 kg green_specialty_kg at $5.00/kg."}'
        ),
    )
    w.apps["roaster_A"].cash = 5000.0
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_specialty_kg", "qty_kg": 30},
        (
            '{"status": "success", "input_item": "green_specialty_kg", '
            '"output_item": "roasted_specialty_kg", "green_consumed_kg": 30, '
            '"roasted_output_kg": 25, "labor_cost": 150.0, "yield": 0.82, '
            '"ready_day": 1, "roasted_unit_cost_estimate": 18.0, '
            '"remaining_cash": 4850.0, "remaining_green_inventory": 0, '
            '"shared_roast_capacity_used_today": 30, '
            '"shared_roast_capacity_remaining_today": 20}'
        ),
    )
    w.C(
        "roaster_A",
        "roast",
        {"green_item_id": "green_specialty_kg", "qty_kg": 1},
        (
            '{"status": "error", '
            '"message": "You only hold 0 kg of green_specialty_kg; requested 1 kg."}'
        ),
    )
    w.C(
        "retailer_A",
        "set_retail_price",
        {"item_id": "roasted_coffee_kg", "price_per_unit": "24.5"},
        (
            '{"status": "success", "item_id": "roasted_coffee_kg", '
            '"retail_price_per_unit": 24.5, "note": "OK \\u2014 retail price set."}'
        ),
    )
    w.C(
        "retailer_A",
        "set_retail_price",
        {"item_id": "roasted_coffee_kg", "price_per_unit": -1},
        '{"status": "error", "message": "price_per_unit must be \\u2265 0."}',
    )
    w.C(
        "retailer_A",
        "set_retail_price",
        {"item_id": "roasted_specialty_kg", "price_per_unit": 0},
        ('{"status": "success", "message": "Removed roasted_specialty_kg from storefront."}'),
    )
    w.C(
        "retailer_A",
        "set_retail_price",
        {"item_id": "roasted_coffee_kg", "price_per_unit": "cheap"},
        '{"status": "error", "message": "price_per_unit must be numeric."}',
    )
    w.env.consumer_sales_log.extend(SALES)
    w.at(20 * 1440 + 540)
    w.C(
        "retailer_A",
        "view_consumer_sales",
        {},
        (
            '{"status": "success", "count": 4, "sales": [{"day": 18, '
            '"shop_id": "retailer_A", "item_id": "roasted_coffee_kg", "qty": 7, '
            '"unit_price": 24.5, "total_price": 171.5, "share": 0.5}, {"day": 19, '
            '"shop_id": "retailer_A", "item_id": "roasted_coffee_kg", "qty": 3, '
            '"unit_price": 24.5, "total_price": 73.5, "share": 0.5}, {"day": 20, '
            '"shop_id": "retailer_A", "item_id": "roasted_specialty_kg", "qty": 2, '
            '"unit_price": 61.333, "total_price": 122.67, "share": 1.0}, {"day": 12, '
            '"shop_id": "retailer_A", "item_id": "roasted_specialty_kg", "qty": 1, '
            '"unit_price": 60.0, "total_price": 60.0, "share": 1.0}]}'
        ),
    )
    w.C(
        "retailer_A",
        "view_consumer_sales",
        {"since_day": "19"},
        (
            '{"status": "success", "count": 2, "sales": [{"day": 19, '
            '"shop_id": "retailer_A", "item_id": "roasted_coffee_kg", "qty": 3, '
            '"unit_price": 24.5, "total_price": 73.5, "share": 0.5}, {"day": 20, '
            '"shop_id": "retailer_A", "item_id": "roasted_specialty_kg", "qty": 2, '
            '"unit_price": 61.333, "total_price": 122.67, "share": 1.0}]}'
        ),
    )
    w.C(
        "retailer_B",
        "view_consumer_sales",
        {},
        (
            '{"status": "success", "count": 1, "sales": [{"day": 19, '
            '"shop_id": "retailer_B", "item_id": "roasted_coffee_kg", "qty": 5, '
            '"unit_price": 22.0, "total_price": 110.0, "share": 0.5}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_market_aggregate",
        {},
        (
            '{"status": "success", "window_start_day": 14, "window_end_day": 20, '
            '"n_days": 7, "per_day": [{"day": 18, "item_id": "roasted_coffee_kg", '
            '"market_qty_sold_kg": 7, "market_revenue": 171.5, '
            '"avg_unit_price": 24.5}, {"day": 19, "item_id": "roasted_coffee_kg", '
            '"market_qty_sold_kg": 8, "market_revenue": 183.5, '
            '"avg_unit_price": 22.94}, {"day": 20, '
            '"item_id": "roasted_specialty_kg", "market_qty_sold_kg": 2, '
            '"market_revenue": 122.67, "avg_unit_price": 61.34}], '
            '"per_item": [{"item_id": "roasted_coffee_kg", "total_qty_sold_kg": 15, '
            '"total_revenue": 355.0, "days_with_sales": 2, '
            '"avg_qty_per_active_day": 7.5, "avg_unit_price": 23.67}, '
            '{"item_id": "roasted_specialty_kg", "total_qty_sold_kg": 2, '
            '"total_revenue": 122.67, "days_with_sales": 1, '
            '"avg_qty_per_active_day": 2.0, "avg_unit_price": 61.34}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_market_aggregate",
        {"days_back": 3},
        (
            '{"status": "success", "window_start_day": 18, "window_end_day": 20, '
            '"n_days": 3, "per_day": [{"day": 18, "item_id": "roasted_coffee_kg", '
            '"market_qty_sold_kg": 7, "market_revenue": 171.5, '
            '"avg_unit_price": 24.5}, {"day": 19, "item_id": "roasted_coffee_kg", '
            '"market_qty_sold_kg": 8, "market_revenue": 183.5, '
            '"avg_unit_price": 22.94}, {"day": 20, '
            '"item_id": "roasted_specialty_kg", "market_qty_sold_kg": 2, '
            '"market_revenue": 122.67, "avg_unit_price": 61.34}], '
            '"per_item": [{"item_id": "roasted_coffee_kg", "total_qty_sold_kg": 15, '
            '"total_revenue": 355.0, "days_with_sales": 2, '
            '"avg_qty_per_active_day": 7.5, "avg_unit_price": 23.67}, '
            '{"item_id": "roasted_specialty_kg", "total_qty_sold_kg": 2, '
            '"total_revenue": 122.67, "days_with_sales": 1, '
            '"avg_qty_per_active_day": 2.0, "avg_unit_price": 61.34}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_market_aggregate",
        {"days_back": -4},
        (
            '{"status": "success", "window_start_day": 20, "window_end_day": 20, '
            '"n_days": 1, "per_day": [{"day": 20, "item_id": "roasted_specialty_kg", '
            '"market_qty_sold_kg": 2, "market_revenue": 122.67, '
            '"avg_unit_price": 61.34}], '
            '"per_item": [{"item_id": "roasted_specialty_kg", '
            '"total_qty_sold_kg": 2, "total_revenue": 122.67, "days_with_sales": 1, '
            '"avg_qty_per_active_day": 2.0, "avg_unit_price": 61.34}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_market_aggregate",
        {"days_back": 30},
        (
            '{"status": "success", "window_start_day": 0, "window_end_day": 20, '
            '"n_days": 30, "per_day": [{"day": 12, '
            '"item_id": "roasted_specialty_kg", "market_qty_sold_kg": 1, '
            '"market_revenue": 60.0, "avg_unit_price": 60.0}, {"day": 18, '
            '"item_id": "roasted_coffee_kg", "market_qty_sold_kg": 7, '
            '"market_revenue": 171.5, "avg_unit_price": 24.5}, {"day": 19, '
            '"item_id": "roasted_coffee_kg", "market_qty_sold_kg": 8, '
            '"market_revenue": 183.5, "avg_unit_price": 22.94}, {"day": 20, '
            '"item_id": "roasted_specialty_kg", "market_qty_sold_kg": 2, '
            '"market_revenue": 122.67, "avg_unit_price": 61.34}], '
            '"per_item": [{"item_id": "roasted_coffee_kg", "total_qty_sold_kg": 15, '
            '"total_revenue": 355.0, "days_with_sales": 2, '
            '"avg_qty_per_active_day": 7.5, "avg_unit_price": 23.67}, '
            '{"item_id": "roasted_specialty_kg", "total_qty_sold_kg": 3, '
            '"total_revenue": 182.67, "days_with_sales": 2, '
            '"avg_qty_per_active_day": 1.5, "avg_unit_price": 60.89}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_market_aggregate",
        {"days_back": "x"},
        '{"status": "error", "message": "days_back must be an integer."}',
    )
    w.C(
        "roaster_B",
        "view_payables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 0, "overdue_count": 0, '
            '"total_balance": 0.0, "total_overdue_balance": 0.0, '
            '"bad_debt_count": 0, "bad_debt_total": 0.0, "today": 20}, '
            '"returned": 0, "filtered_count": 0, "rows": [], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    for iid, amount, issue, due, extra in INVOICES:
        for books in (w.apps["roaster_B"].accounts_payable, w.apps["farmer_A"].accounts_receivable):
            books.append(
                w.Inv(
                    id=iid,
                    issuer="farmer_A",
                    payer="roaster_B",
                    amount=amount,
                    issue_date=issue,
                    due_date=due,
                    **extra,
                )
            )
    w.C(
        "roaster_B",
        "view_payables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 3, "overdue_count": 2, '
            '"total_balance": 210.62, "total_overdue_balance": 140.62, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 3, "filtered_count": 3, "rows": [{"id": "i1", '
            '"counterparty": "farmer_A", "amount": 50.12, "late_fees": 0.0, '
            '"credited": 10.0, "outstanding": 40.12, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i3", '
            '"counterparty": "farmer_A", "amount": 100.0, "late_fees": 0.5, '
            '"credited": 0.0, "outstanding": 100.5, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i2", '
            '"counterparty": "farmer_A", "amount": 70.0, "late_fees": 0.0, '
            '"credited": 0.0, "outstanding": 70.0, "due_day": 25, "days_to_due": 5, '
            '"overdue": false, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_B",
        "view_payables",
        {"only_overdue": True, "limit": 1},
        (
            '{"status": "success", "summary": {"open_count": 3, "overdue_count": 2, '
            '"total_balance": 210.62, "total_overdue_balance": 140.62, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 1, "filtered_count": 2, "rows": [{"id": "i1", '
            '"counterparty": "farmer_A", "amount": 50.12, "late_fees": 0.0, '
            '"credited": 10.0, "outstanding": 40.12, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_B",
        "view_payables",
        {"counterparty": "farmer_B"},
        (
            '{"status": "success", "summary": {"open_count": 3, "overdue_count": 2, '
            '"total_balance": 210.62, "total_overdue_balance": 140.62, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 0, "filtered_count": 0, "rows": [], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "farmer_A",
        "view_receivables",
        {"limit": "two"},
        (
            '{"status": "success", "summary": {"open_count": 3, "overdue_count": 2, '
            '"total_balance": 210.62, "total_overdue_balance": 140.62, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 3, "filtered_count": 3, "rows": [{"id": "i1", '
            '"counterparty": "roaster_B", "amount": 50.12, "late_fees": 0.0, '
            '"credited": 10.0, "outstanding": 40.12, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i3", '
            '"counterparty": "roaster_B", "amount": 100.0, "late_fees": 0.5, '
            '"credited": 0.0, "outstanding": 100.5, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i2", '
            '"counterparty": "roaster_B", "amount": 70.0, "late_fees": 0.0, '
            '"credited": 0.0, "outstanding": 70.0, "due_day": 25, "days_to_due": 5, '
            '"overdue": false, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "farmer_A",
        "view_receivables",
        {"only_overdue": True, "counterparty": "roaster_B"},
        (
            '{"status": "success", "summary": {"open_count": 3, "overdue_count": 2, '
            '"total_balance": 210.62, "total_overdue_balance": 140.62, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 2, "filtered_count": 2, "rows": [{"id": "i1", '
            '"counterparty": "roaster_B", "amount": 50.12, "late_fees": 0.0, '
            '"credited": 10.0, "outstanding": 40.12, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i3", '
            '"counterparty": "roaster_B", "amount": 100.0, "late_fees": 0.5, '
            '"credited": 0.0, "outstanding": 100.5, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "i5"},
        '{"status": "success", "message": "Already settled.", "paid_amount": 0.0}',
    )
    w.apps["roaster_B"].cash = 10.0
    w.C(
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "i3"},
        ('{"status": "error", "message": "Insufficient cash ($10.00) to pay $100.50."}'),
    )
    w.apps["roaster_B"].cash = 10000.0
    w.C(
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "i3"},
        '{"status": "success", "paid_amount": 100.5, "remaining_cash": 9899.5}',
    )
    w.C(
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "i3"},
        '{"status": "error", "message": "Open AP invoice \'i3\' not found."}',
    )
    w.C(
        "roaster_B",
        "pay_invoice",
        {"invoice_id": "i4"},
        '{"status": "success", "message": "Already settled.", "paid_amount": 0.0}',
    )
    w.C(
        "roaster_B",
        "view_payables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 2, "overdue_count": 1, '
            '"total_balance": 110.12, "total_overdue_balance": 40.12, '
            '"bad_debt_count": 1, "bad_debt_total": 80.0, "today": 20}, '
            '"returned": 2, "filtered_count": 2, "rows": [{"id": "i1", '
            '"counterparty": "farmer_A", "amount": 50.12, "late_fees": 0.0, '
            '"credited": 10.0, "outstanding": 40.12, "due_day": 15, '
            '"days_to_due": -5, "overdue": true, "bad_debt": false}, {"id": "i2", '
            '"counterparty": "farmer_A", "amount": 70.0, "late_fees": 0.0, '
            '"credited": 0.0, "outstanding": 70.0, "due_day": 25, "days_to_due": 5, '
            '"overdue": false, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_B",
        "wait_for_next_day",
        {},
        ('{"status": "success", "message": "Sleeping until next event or tomorrow\'s morning."}'),
    )


BOOKS_STATE = {
    "farmer_A": {
        "cash": 15080.5,
        "inventory": {
            "green_coffee_kg": 60,
        },
        "inventory_total_cost": {
            "green_coffee_kg": 120.0,
        },
        "retail_prices": {},
        "ar": [
            {
                "id": "i3",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 100.0,
                "issue_date": 1,
                "due_date": 15,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.5,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i1",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 50.123,
                "issue_date": 2,
                "due_date": 15,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 10.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i2",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 70.0,
                "issue_date": 3,
                "due_date": 25,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i4",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 80.0,
                "issue_date": 3,
                "due_date": 10,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": True,
                "bad_debt_date": 12,
            },
            {
                "id": "i5",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 20.0,
                "issue_date": 3,
                "due_date": 12,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 20.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i6",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 0.005,
                "issue_date": 3,
                "due_date": 12,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i0",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 12.0,
                "issue_date": 3,
                "due_date": 30,
                "reference": None,
                "paid": True,
                "paid_date": 4,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
        ],
        "ap": [],
        "ledger": [
            [
                "6e00302f",
                0,
                "cash_out",
                20.0,
                None,
                "green_coffee_kg",
                10,
                "produce 10 green_coffee_kg at $2.00/unit (ready day 2)",
                None,
            ],
            [
                "69fe7419",
                20,
                "cash_in",
                100.5,
                "roaster_B",
                None,
                None,
                "counterparty paid invoice",
                "i3",
            ],
        ],
    },
    "farmer_B": {
        "cash": 8994.0,
        "inventory": {
            "green_coffee_kg": 63,
        },
        "inventory_total_cost": {
            "green_coffee_kg": 126.0,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [],
        "ledger": [
            [
                "50a167eb",
                0,
                "cash_out",
                70.0,
                None,
                "green_specialty_kg",
                7,
                "produce 7 green_specialty_kg at $10.00/unit (ready day 2)",
                None,
            ],
            [
                "95105fa4",
                0,
                "cash_out",
                6.0,
                None,
                "green_coffee_kg",
                3,
                "produce 3 green_coffee_kg at $2.00/unit (ready day 0)",
                None,
            ],
            [
                "df441de1",
                0,
                "inventory_in",
                6.0,
                None,
                "green_coffee_kg",
                3,
                "production output (started day 0), WAVG cost $2.0000/unit",
                None,
            ],
        ],
    },
    "roaster_A": {
        "cash": 4850.0,
        "inventory": {
            "roasted_coffee_kg": 30,
            "green_coffee_kg": 20,
            "green_specialty_kg": 0,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 176.4,
            "green_coffee_kg": 101.0,
            "green_specialty_kg": 0.0,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [],
        "ledger": [
            [
                "76737c0f",
                0,
                "cash_out",
                150.0,
                None,
                "green_specialty_kg",
                30,
                "roast labor: 30kg green_specialty_kg @ $5.00/kg",
                None,
            ],
            [
                "5ddc27d9",
                0,
                "inventory_consumed",
                300.0,
                None,
                "green_specialty_kg",
                30,
                "roast input consumed (WAVG $10.00/kg)",
                None,
            ],
        ],
    },
    "roaster_B": {
        "cash": 9899.5,
        "inventory": {
            "roasted_coffee_kg": 30,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 176.4,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [
            {
                "id": "i3",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 100.0,
                "issue_date": 1,
                "due_date": 15,
                "reference": None,
                "paid": True,
                "paid_date": 20,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.5,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i1",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 50.123,
                "issue_date": 2,
                "due_date": 15,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 10.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i2",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 70.0,
                "issue_date": 3,
                "due_date": 25,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i4",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 80.0,
                "issue_date": 3,
                "due_date": 10,
                "reference": None,
                "paid": True,
                "paid_date": 20,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": True,
                "bad_debt_date": 12,
            },
            {
                "id": "i5",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 20.0,
                "issue_date": 3,
                "due_date": 12,
                "reference": None,
                "paid": True,
                "paid_date": 20,
                "credited_amount": 20.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i6",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 0.005,
                "issue_date": 3,
                "due_date": 12,
                "reference": None,
                "paid": False,
                "paid_date": None,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
            {
                "id": "i0",
                "issuer": "farmer_A",
                "payer": "roaster_B",
                "amount": 12.0,
                "issue_date": 3,
                "due_date": 30,
                "reference": None,
                "paid": True,
                "paid_date": 4,
                "credited_amount": 0.0,
                "last_return_date": None,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
        ],
        "ledger": [
            [
                "e66f979f",
                20,
                "cash_out",
                100.5,
                "farmer_A",
                None,
                None,
                "pay_invoice",
                "i3",
            ],
        ],
    },
    "retailer_A": {
        "cash": 15000.0,
        "inventory": {
            "roasted_coffee_kg": 25,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 250.0,
        },
        "retail_prices": {
            "roasted_coffee_kg": 24.5,
        },
        "ar": [],
        "ap": [],
        "ledger": [],
    },
    "retailer_B": {
        "cash": 15000.0,
        "inventory": {
            "roasted_coffee_kg": 25,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 250.0,
        },
        "retail_prices": {
            "roasted_coffee_kg": 18.0,
            "roasted_specialty_kg": 50.0,
        },
        "ar": [],
        "ap": [],
        "ledger": [],
    },
}

BOOKS_STATE_WAKES = {
    "farmer_B": "production_ready: 3× green_coffee_kg",
    "farmer_A": "invoice_paid: roaster_B paid $100.50 on invoice i3",
}


def returns_scenario(w: World) -> None:
    w.at(540)
    a = w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 30, "asking_price": 5.5},
        ('{"status": "success", "listing_id": "lst_6e00302f", "asking_price": 5.5, "qty": 30}'),
    )
    o = w.C(
        "roaster_A",
        "make_offer",
        {"listing_id": a["listing_id"], "offered_price": 5.2, "qty": 25, "payment_terms_days": 14},
        ('{"status": "success", "offer_id": "off_50a167eb", "seller_id": "farmer_A"}'),
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o["offer_id"]},
        (
            '{"status": "success", "deal_id": "dl_95105fa4", '
            '"invoice_id": "pending_dl_95105fa4", "buyer_id": "roaster_A", '
            '"item_id": "green_coffee_kg", "qty": 25, "unit_price": 5.2, '
            '"total_price": 130.0, "payment_terms_days": 14, "delivery_day": 1, '
            '"delivery_at": 1980}'
        ),
    )
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": "zz", "quantity_kg": 3},
        '{"status": "error", "message": "Invoice \'zz\' not found in your AP."}',
    )
    w.at(1440 + 540)
    w.env._process_deliveries(1)
    p = w.C(
        "roaster_A",
        "view_payables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 1, "overdue_count": 0, '
            '"total_balance": 130.0, "total_overdue_balance": 0.0, '
            '"bad_debt_count": 0, "bad_debt_total": 0.0, "today": 1}, "returned": 1, '
            '"filtered_count": 1, "rows": [{"id": "df441de1", '
            '"counterparty": "farmer_A", "amount": 130.0, "late_fees": 0.0, '
            '"credited": 0.0, "outstanding": 130.0, "due_day": 15, '
            '"days_to_due": 14, "overdue": false, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    inv = p["rows"][0]["id"]
    w.C(
        "farmer_A",
        "view_receivables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 1, "overdue_count": 0, '
            '"total_balance": 130.0, "total_overdue_balance": 0.0, '
            '"bad_debt_count": 0, "bad_debt_total": 0.0, "today": 1}, "returned": 1, '
            '"filtered_count": 1, "rows": [{"id": "df441de1", '
            '"counterparty": "roaster_A", "amount": 130.0, "late_fees": 0.0, '
            '"credited": 0.0, "outstanding": 130.0, "due_day": 15, '
            '"days_to_due": 14, "overdue": false, "bad_debt": false}], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": "x"},
        '{"status": "error", "message": "quantity_kg must be an integer."}',
    )
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 0},
        '{"status": "error", "message": "quantity_kg must be > 0."}',
    )
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 26},
        (
            '{"status": "error", '
            '"message": "Cannot return 26 \\u2014 only 25 units remaining on this deal'
            ' (already returned 0/25)."}'
        ),
    )
    w.apps["roaster_A"].inventory["green_coffee_kg"] = 2
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 3},
        (
            '{"status": "error", '
            '"message": "You hold only 2 units of \'green_coffee_kg\' \\u2014 cannot ret'
            'urn 3."}'
        ),
    )
    w.apps["roaster_A"].inventory["green_coffee_kg"] = 25
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 4, "reason": "quality"},
        (
            '{"status": "success", "deal_id": "dl_95105fa4", '
            '"invoice_id": "df441de1", "returned_qty": 4, "credit_amount": 20.8, '
            '"refund_amount": 0.0, "invoice_credited_total": 20.8, '
            '"invoice_net_outstanding": 109.2, "remaining_returnable_on_deal": 21, '
            '"your_inventory_after": 21}'
        ),
    )
    w.C(
        "farmer_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 1},
        ('{"status": "error", "message": "Invoice \'df441de1\' not found in your AP."}'),
    )
    w.C(
        "roaster_A",
        "pay_invoice",
        {"invoice_id": "nope"},
        '{"status": "error", "message": "Open AP invoice \'nope\' not found."}',
    )
    w.C(
        "roaster_A",
        "pay_invoice",
        {"invoice_id": inv},
        '{"status": "success", "paid_amount": 109.2, "remaining_cash": 14890.8}',
    )
    w.C(
        "roaster_A",
        "pay_invoice",
        {"invoice_id": inv},
        '{"status": "error", "message": "Open AP invoice \'df441de1\' not found."}',
    )
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 3},
        (
            '{"status": "success", "deal_id": "dl_95105fa4", '
            '"invoice_id": "df441de1", "returned_qty": 3, "credit_amount": 15.6, '
            '"refund_amount": 15.6, "invoice_credited_total": 36.4, '
            '"invoice_net_outstanding": 0.0, "remaining_returnable_on_deal": 18, '
            '"your_inventory_after": 18}'
        ),
    )
    w.C(
        "roaster_A",
        "view_payables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 0, "overdue_count": 0, '
            '"total_balance": 0.0, "total_overdue_balance": 0.0, '
            '"bad_debt_count": 0, "bad_debt_total": 0.0, "today": 1}, "returned": 0, '
            '"filtered_count": 0, "rows": [], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "farmer_A",
        "view_receivables",
        {},
        (
            '{"status": "success", "summary": {"open_count": 0, "overdue_count": 0, '
            '"total_balance": 0.0, "total_overdue_balance": 0.0, '
            '"bad_debt_count": 0, "bad_debt_total": 0.0, "today": 1}, "returned": 0, '
            '"filtered_count": 0, "rows": [], '
            '"note": "Compact rows; sorted by due_day ascending (most urgent first). '
            "Use `pay_invoice(id)` or `return_shipment(id, "
            '...)` with the listed id."}'
        ),
    )
    w.C(
        "roaster_A",
        "view_deals",
        {},
        (
            '{"status": "success", "count": 1, "deals": [{"id": "dl_95105fa4", '
            '"listing_id": "lst_6e00302f", "offer_id": "off_50a167eb", '
            '"seller_id": "farmer_A", "buyer_id": "roaster_A", '
            '"item_id": "green_coffee_kg", "qty": 25, "unit_price": 5.2, '
            '"total_price": 130.0, "payment_terms_days": 14, "deal_at": 540, '
            '"delivery_at": 1980, "invoice_id": "df441de1", "notes": null, '
            '"returned_qty": 7, "_reserved_seller_cogs": 50.0, "deal_day": 0, '
            '"delivery_day": 1, "accepted": "Day 0, 09:00", "delivers": "Day 1, '
            '09:00"}]}'
        ),
    )
    w.at(20 * 1440 + 540)
    w.C(
        "roaster_A",
        "return_shipment",
        {"invoice_id": inv, "quantity_kg": 1},
        (
            '{"status": "error", '
            '"message": "Return window (14 days) closed. Invoice issued day 1; today '
            'is day 20."}'
        ),
    )


RETURNS_STATE = {
    "farmer_A": {
        "cash": 15093.6,
        "inventory": {
            "green_coffee_kg": 42,
        },
        "inventory_total_cost": {
            "green_coffee_kg": 84.0,
        },
        "retail_prices": {},
        "ar": [
            {
                "id": "df441de1",
                "issuer": "farmer_A",
                "payer": "roaster_A",
                "amount": 130.0,
                "issue_date": 1,
                "due_date": 15,
                "reference": "dl_95105fa4",
                "paid": True,
                "paid_date": 1,
                "credited_amount": 36.4,
                "last_return_date": 1,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
        ],
        "ap": [],
        "ledger": [
            [
                "76737c0f",
                1,
                "sale_revenue",
                130.0,
                "roaster_A",
                "green_coffee_kg",
                25,
                "deal dl_95105fa4 delivered",
                "dl_95105fa4",
            ],
            [
                "5ddc27d9",
                1,
                "inventory_out",
                50.0,
                "roaster_A",
                "green_coffee_kg",
                25,
                "COGS at WAVG $2.00/unit (delivered)",
                "dl_95105fa4",
            ],
            [
                "fb5e8c0c",
                1,
                "sale_reversal",
                20.8,
                "roaster_A",
                "green_coffee_kg",
                4,
                "return_shipment (quality)",
                "dl_95105fa4",
            ],
            [
                "49131107",
                1,
                "inventory_in",
                8.0,
                "roaster_A",
                "green_coffee_kg",
                4,
                "goods returned at WAVG $2.00/unit",
                "dl_95105fa4",
            ],
            [
                "24ea820f",
                1,
                "cogs_reversal",
                8.0,
                "roaster_A",
                "green_coffee_kg",
                4,
                "cogs reversal on return @ $2.00/unit",
                "dl_95105fa4",
            ],
            [
                "8afa8837",
                1,
                "cash_in",
                109.2,
                "roaster_A",
                None,
                None,
                "counterparty paid invoice",
                "df441de1",
            ],
            [
                "b0961826",
                1,
                "sale_reversal",
                15.6,
                "roaster_A",
                "green_coffee_kg",
                3,
                "return_shipment",
                "dl_95105fa4",
            ],
            [
                "e33f5d9f",
                1,
                "inventory_in",
                6.0,
                "roaster_A",
                "green_coffee_kg",
                3,
                "goods returned at WAVG $2.00/unit",
                "dl_95105fa4",
            ],
            [
                "6c2f6f6e",
                1,
                "cogs_reversal",
                6.0,
                "roaster_A",
                "green_coffee_kg",
                3,
                "cogs reversal on return @ $2.00/unit",
                "dl_95105fa4",
            ],
            [
                "22cf42a3",
                1,
                "cash_out",
                15.6,
                "roaster_A",
                None,
                None,
                "refund on returned shipment",
                "df441de1",
            ],
        ],
    },
    "farmer_B": {
        "cash": 15000.0,
        "inventory": {
            "green_coffee_kg": 60,
        },
        "inventory_total_cost": {
            "green_coffee_kg": 120.0,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [],
        "ledger": [],
    },
    "roaster_A": {
        "cash": 14906.4,
        "inventory": {
            "roasted_coffee_kg": 30,
            "green_coffee_kg": 18,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 176.4,
            "green_coffee_kg": 93.6,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [
            {
                "id": "df441de1",
                "issuer": "farmer_A",
                "payer": "roaster_A",
                "amount": 130.0,
                "issue_date": 1,
                "due_date": 15,
                "reference": "dl_95105fa4",
                "paid": True,
                "paid_date": 1,
                "credited_amount": 36.4,
                "last_return_date": 1,
                "returned": False,
                "returned_date": None,
                "late_fees_accrued": 0.0,
                "bad_debt": False,
                "bad_debt_date": None,
            },
        ],
        "ledger": [
            [
                "e66f979f",
                1,
                "purchase_cogs",
                130.0,
                "farmer_A",
                "green_coffee_kg",
                25,
                "AP booked at delivery",
                "dl_95105fa4",
            ],
            [
                "69fe7419",
                1,
                "inventory_in",
                130.0,
                "farmer_A",
                "green_coffee_kg",
                25,
                "deal dl_95105fa4 delivered",
                "dl_95105fa4",
            ],
            [
                "540f46ae",
                1,
                "cash_out",
                109.2,
                "farmer_A",
                None,
                None,
                "pay_invoice",
                "df441de1",
            ],
            [
                "a3102181",
                1,
                "cash_in",
                15.6,
                "farmer_A",
                None,
                None,
                "refund received on returned shipment",
                "df441de1",
            ],
        ],
    },
    "roaster_B": {
        "cash": 15000.0,
        "inventory": {
            "roasted_coffee_kg": 30,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 176.4,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [],
        "ledger": [],
    },
    "retailer_A": {
        "cash": 15000.0,
        "inventory": {
            "roasted_coffee_kg": 25,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 250.0,
        },
        "retail_prices": {
            "roasted_coffee_kg": 18.0,
            "roasted_specialty_kg": 50.0,
        },
        "ar": [],
        "ap": [],
        "ledger": [],
    },
    "retailer_B": {
        "cash": 15000.0,
        "inventory": {
            "roasted_coffee_kg": 25,
        },
        "inventory_total_cost": {
            "roasted_coffee_kg": 250.0,
        },
        "retail_prices": {
            "roasted_coffee_kg": 18.0,
            "roasted_specialty_kg": 50.0,
        },
        "ar": [],
        "ap": [],
        "ledger": [],
    },
}

RETURNS_STATE_WAKES = {
    "farmer_A": "return_received: roaster_A returned 3 kg green_coffee_kg (credit $15.60)",
    "roaster_A": "delivery_arrived: 25× green_coffee_kg from farmer_A",
}


def test_books_scenario_answers_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(monkeypatch)
    books_scenario(w)
    assert books_state(w) == BOOKS_STATE
    assert dict(w.env._pending_wake_reason) == BOOKS_STATE_WAKES


def test_returns_scenario_answers_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(monkeypatch)
    returns_scenario(w)
    assert books_state(w) == RETURNS_STATE
    assert dict(w.env._pending_wake_reason) == RETURNS_STATE_WAKES


def _unwired_books(role: str = "roaster") -> FirmBooks:
    endowment = AgentEndowment(
        agent_id="x",
        display_name="X",
        role=role,
        persona="",
        initial_cash=100.0,
        initial_inventory={"green_coffee_kg": 4},
        initial_cost_basis={"green_coffee_kg": 2.5},
    )
    clock = TimeManager()
    return FirmBooks("x", endowment, Marketplace(clock, IdSource(0)), clock)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("view_consumer_sales", {}),
        ("view_market_aggregate", {}),
        ("return_shipment", {"invoice_id": "i", "quantity_kg": 1}),
        ("produce_item", {"item_id": "green_coffee_kg", "quantity": 1}),
        ("roast", {"green_item_id": "green_coffee_kg", "qty_kg": 1}),
        ("view_trial_balance", {}),
    ],
)
def test_tools_that_need_the_economy_say_so_before_it_is_wired(
    name: str, args: dict[str, Any]
) -> None:
    books = _unwired_books()
    assert getattr(books, name)(**args) == {
        "status": "error",
        "message": "Environment hook not available.",
    }


def test_unwired_books_value_inventory_at_cost() -> None:
    books = _unwired_books()
    assert books.inventory_total_cost == {"green_coffee_kg": 10.0}
    assert books.initial_equity == 110.0
    assert books.cost_basis.get("green_coffee_kg") == 2.5
    assert books.cost_basis.get("roasted_coffee_kg", 7.0) == 7.0
    assert list(books.cost_basis) == ["green_coffee_kg"]
    assert "green_coffee_kg" in books.cost_basis
    assert books._pending_inbound_kg() == 0
    assert books._inventory_capacity_remaining_kg() == 116


def test_retail_price_note_for_a_role_consumers_do_not_visit() -> None:
    """Only retailers are offered ``set_retail_price``; the method still answers others
    with the reference's note."""
    books = _unwired_books("roaster")
    assert books.set_retail_price("roasted_coffee_kg", 5) == {
        "status": "success",
        "item_id": "roasted_coffee_kg",
        "retail_price_per_unit": 5.0,
        "note": "OK — retail price set. Note: consumer demand only flows to retailer-role agents.",
    }


def test_ceo_may_message_only_its_direct_report(monkeypatch: pytest.MonkeyPatch) -> None:
    econ = build_economy(7, 10)
    ceo = econ.business_apps["retailer_B"]
    monkeypatch.setattr(ceo, "role", "ceo")
    assert execute(ceo, "send_message", {"recipient": "farmer_A", "title": "t", "body": "b"}) == {
        "status": "error",
        "message": "CEO can only message direct report 'roaster_A', not 'farmer_A'.",
    }
    assert execute(ceo, "set_retail_price", {"item_id": "a", "price_per_unit": 1}) == {
        "status": "error",
        "message": "Unknown action 'set_retail_price'. Pick one of the registered tools.",
    }
    sent = execute(ceo, "send_message", {"recipient": "roaster_A", "title": "t", "body": "b"})
    assert sent["status"] == "success"


def test_records_keep_the_reference_fields_in_order() -> None:
    assert [f.name for f in fields(Deal)] == [
        "id",
        "listing_id",
        "offer_id",
        "seller_id",
        "buyer_id",
        "item_id",
        "qty",
        "unit_price",
        "total_price",
        "payment_terms_days",
        "deal_at",
        "delivery_at",
        "invoice_id",
        "notes",
        "returned_qty",
        "_reserved_seller_cogs",
    ]
    inv = Invoice(id="i", issuer="a", payer="b", amount=10.0, issue_date=0, due_date=5)
    assert list(asdict(inv)) == [
        "id",
        "issuer",
        "payer",
        "amount",
        "issue_date",
        "due_date",
        "reference",
        "paid",
        "paid_date",
        "credited_amount",
        "last_return_date",
        "returned",
        "returned_date",
        "late_fees_accrued",
        "bad_debt",
        "bad_debt_date",
    ]
    inv.late_fees_accrued = 0.25
    inv.credited_amount = 3.0
    assert inv.net_outstanding == 7.25
    inv.credited_amount = 12.0
    assert inv.net_outstanding == 0.0
    inv.credited_amount = 0.0
    inv.bad_debt = True
    assert inv.net_outstanding == 0.0


def test_economy_constants_are_read_at_each_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's config overrides the reference's ``environment`` constants by rebinding
    them; the books read them per call, so an override applies."""
    econ = build_economy(7, 10)
    econ.time_manager.virtual_min = 540
    roaster = econ.business_apps["roaster_A"]
    monkeypatch.setattr(economy, "ROAST_DAILY_CAP_GREEN_KG", 2)
    roaster.inventory["green_coffee_kg"] = 5
    roaster.inventory_total_cost["green_coffee_kg"] = 10.0
    result = execute(roaster, "roast", {"green_item_id": "green_coffee_kg", "qty_kg": 3})
    assert result["message"] == (
        "Today's shared roasting capacity is 2 kg of green (commodity + specialty combined). "
        "Already used 0 kg; only 2 kg remaining today."
    )
    monkeypatch.setattr(economy, "ROLE_INVENTORY_CAP_KG", {"roaster": 7})
    assert roaster._inventory_cap_kg() == 7
