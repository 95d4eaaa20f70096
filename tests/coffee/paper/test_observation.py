"""The wake observation (`paper.observation`) against the reference, byte for byte.

The literal texts were produced by the reference CoffeeBench `Environment._format_observation`
(SakanaAI/CoffeeBench 71442fb, Python 3.12): the OBS_* lists are every observation the
reference sent each firm in the scripted run of `_paper_script.py` (seed 0, 8 days), and
SYNTH_* are observations of hand-built states that the scripted run never reaches (a
multi-day retail-sales window, DMs from several senders, a bankrupt counterparty without
written-off AR, pending production in ready-day order, a nudge).
"""

from __future__ import annotations

import pytest

from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.observation import date_label, since_day_for

from ._paper_script import ScriptedRun, scripted_run

OBS_ROASTER_A = [
    "Observation: Day 0, 09:00 (Jan 1, Mon).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14970.00 | inventory_value $176.40 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=30. [on-hand 30 kg + in-flight 0 kg / cap 120 kg, 90 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
    "Observation: Day 1, 09:00 (Jan 2, Tue).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14940.00 | inventory_value $176.40 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=30. [on-hand 30 kg + in-flight 0 kg / cap 120 kg, 90 kg "
    "headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 1.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
    "Observation: Day 1, 09:30 (Jan 2, Tue).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14940.00 | inventory_value $176.40 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=30. [on-hand 30 kg + in-flight 30 kg / cap 120 kg, 60 "
    "kg headroom]\n"
    "Open listings: 1 | pending offers: in 2, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.\n"
    "[Wake reason: offer_received: retailer_B offered 5 kg @ $11.5/kg on lst_08cc1a45]",
    "Observation: Day 2, 09:00 (Jan 3, Wed).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14910.00 | inventory_value $237.60 | AR $110.00 (1 open) | AP $120.00 (1 open).\n"
    "Inventory by item: green_coffee_kg=30, roasted_coffee_kg=20. [on-hand 50 kg + in-flight 0 kg "
    "/ cap 120 kg, 70 kg headroom]\n"
    "Open listings: 1 | pending offers: in 1, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
    "Observation: Day 2, 09:30 (Jan 3, Wed).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14910.00 | inventory_value $219.96 | AR $88.00 (1 open) | AP $120.00 (1 open).\n"
    "Inventory by item: green_coffee_kg=30, roasted_coffee_kg=17. [on-hand 47 kg + in-flight 0 kg "
    "/ cap 120 kg, 73 kg headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.\n"
    "[Wake reason: return_received: retailer_A returned 2 kg roasted_coffee_kg (credit $22.00)]",
    "Observation: Day 2, 10:00 (Jan 3, Wed).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14938.00 | inventory_value $139.96 | AR $0.00 (0 open) | AP $120.00 (1 open).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=17. [on-hand 27 kg + in-flight 17 "
    "kg / cap 120 kg, 76 kg headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: 17 kg roasted_coffee_kg landing day 3.\n"
    "[Wake reason: invoice_paid: retailer_A paid $88.00 on invoice 325c2cc0]",
    "Observation: Day 3, 09:00 (Jan 4, Thu).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14908.00 | inventory_value $279.96 | AR $57.50 (1 open) | AP $120.00 (1 open).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=34. [on-hand 44 kg + in-flight 0 kg "
    "/ cap 120 kg, 76 kg headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
    "Observation: Day 4, 09:00 (Jan 5, Fri).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14878.00 | inventory_value $279.96 | AR $57.50 (1 open) | AP $120.00 (1 open, 1 "
    "OVERDUE accruing $0.00 late fees).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=34. [on-hand 44 kg + in-flight 0 kg "
    "/ cap 120 kg, 76 kg headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
    "Observation: Day 5, 09:00 (Jan 6, Sat).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14848.00 | inventory_value $279.96 | AR $57.50 (1 open) | AP $120.12 (1 open, 1 "
    "OVERDUE accruing $0.12 late fees).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=34. [on-hand 44 kg + in-flight 0 kg "
    "/ cap 120 kg, 76 kg headroom]\n"
    "Open listings: 1 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.\n"
    "Note: farmer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer accept "
    "orders, settle invoices, or post listings.",
    "Observation: Day 5, 09:30 (Jan 6, Sat).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14848.00 | inventory_value $279.96 | AR $0.00 (0 open) | AP $120.12 (1 open, 1 OVERDUE "
    "accruing $0.12 late fees).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=34. [on-hand 44 kg + in-flight 0 kg "
    "/ cap 120 kg, 76 kg headroom]\n"
    "Open listings: 1 | pending offers: in 1, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.\n"
    "Note: farmer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer accept "
    "orders, settle invoices, or post listings.\n"
    "[Wake reason: offer_received: retailer_A offered 5 kg @ $11.0/kg on lst_08cc1a45]",
    "Observation: Day 6, 09:00 (Jan 7, Sun).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14818.00 | inventory_value $244.67 | AR $55.00 (1 open) | AP $120.24 (1 open, 1 "
    "OVERDUE accruing $0.24 late fees).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=29. [on-hand 39 kg + in-flight 0 kg "
    "/ cap 120 kg, 81 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.\n"
    "⚠ Counterparty retailer_B went BANKRUPT yesterday (reason: cash_below_zero). $57.50 of your "
    "AR has been written off (bad_debt_expense → other_operating_expense). Reflect it in your "
    "next filing's BS/IS.",
    "Observation: Day 7, 09:00 (Jan 8, Mon).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $14788.00 | inventory_value $244.67 | AR $55.00 (1 open) | AP $120.36 (1 open, 1 "
    "OVERDUE accruing $0.36 late fees).\n"
    "Inventory by item: green_coffee_kg=10, roasted_coffee_kg=29. [on-hand 39 kg + in-flight 0 kg "
    "/ cap 120 kg, 81 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: none.",
]

OBS_RETAILER_A = [
    "Observation: Day 0, 09:00 (Jan 1, Mon).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $14950.00 | inventory_value $250.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=25. [on-hand 25 kg + in-flight 0 kg / cap 80 kg, 55 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 0, 10:30 (Jan 1, Mon).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $14950.00 | inventory_value $250.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=25. [on-hand 25 kg + in-flight 0 kg / cap 80 kg, 55 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 1 from roaster_A×1 (oldest from day 0). Use read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "[Wake reason: dm_received: from roaster_A — 'Roasted available']",
    "Observation: Day 1, 09:00 (Jan 2, Tue).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15260.00 | inventory_value $70.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=7. [on-hand 7 kg + in-flight 0 kg / cap 80 kg, 73 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 1 from roaster_A×1 (oldest from day 0). Use read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 1, 10:00 (Jan 2, Tue).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15260.00 | inventory_value $70.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=7. [on-hand 7 kg + in-flight 10 kg / cap 80 kg, 63 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 1 from roaster_A×1 (oldest from day 0). Use read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "[Wake reason: deal_accepted: roaster_A→you 10× roasted_coffee_kg @ $11.0/u]",
    "Observation: Day 2, 09:00 (Jan 3, Wed).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15350.00 | inventory_value $110.00 | AR $0.00 (0 open) | AP $110.00 (1 open).\n"
    "Inventory by item: roasted_coffee_kg=10. [on-hand 10 kg + in-flight 0 kg / cap 80 kg, 70 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 1 from roaster_A×1 (oldest from day 0). Use read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 3, 09:00 (Jan 4, Thu).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15372.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 1 from roaster_A×1 (oldest from day 0). Use read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 4, 09:00 (Jan 5, Fri).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15322.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 5, 09:00 (Jan 6, Sat).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15272.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "Note: farmer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer accept "
    "orders, settle invoices, or post listings.",
    "Observation: Day 5, 10:00 (Jan 6, Sat).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15272.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 5 kg / cap 80 kg, 75 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "Note: farmer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer accept "
    "orders, settle invoices, or post listings.\n"
    "[Wake reason: deal_accepted: roaster_A→you 5× roasted_coffee_kg @ $11.0/u]",
    "Observation: Day 6, 09:00 (Jan 7, Sun).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15222.00 | inventory_value $55.00 | AR $0.00 (0 open) | AP $55.00 (1 open).\n"
    "Inventory by item: roasted_coffee_kg=5. [on-hand 5 kg + in-flight 0 kg / cap 80 kg, 75 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "Note: retailer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer "
    "accept orders, settle invoices, or post listings.",
    "Observation: Day 7, 09:00 (Jan 8, Mon).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15272.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $55.00 (1 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$20.00/kg, roasted_specialty_kg=$50.00/kg.",
]

OBS_FARMER_A = [
    "Observation: Day 0, 09:00 (Jan 1, Mon).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14975.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 0 kg / cap 120 kg, 60 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 0, 09:30 (Jan 1, Mon).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14935.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 20 kg / cap 120 kg, 40 kg "
    "headroom]\n"
    "Open listings: 1 | pending offers: in 1, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: 20 green_coffee_kg landing day 2.\n"
    "[Wake reason: offer_received: roaster_A offered 30 kg @ $4.0/kg on lst_7ee2c036]",
    "Observation: Day 1, 09:00 (Jan 2, Tue).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14910.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 20 kg / cap 120 kg, 40 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 1, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: 20 green_coffee_kg landing day 2.",
    "Observation: Day 2, 09:00 (Jan 3, Wed).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14885.00 | inventory_value $100.00 | AR $120.00 (1 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=50. [on-hand 50 kg + in-flight 0 kg / cap 120 kg, 70 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 3, 09:00 (Jan 4, Thu).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14860.00 | inventory_value $100.00 | AR $120.00 (1 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=50. [on-hand 50 kg + in-flight 0 kg / cap 120 kg, 70 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 4, 09:00 (Jan 5, Fri).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14835.00 | inventory_value $100.00 | AR $120.00 (1 open, 1 overdue (+$0.00 late-fee "
    "revenue)) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=50. [on-hand 50 kg + in-flight 0 kg / cap 120 kg, 70 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 5, 09:00 (Jan 6, Sat).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14810.00 | inventory_value $98.00 | AR $120.12 (1 open, 1 overdue (+$0.12 late-fee "
    "revenue)) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=49. [on-hand 49 kg + in-flight 0 kg / cap 120 kg, 71 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.\n"
    "Note: farmer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer accept "
    "orders, settle invoices, or post listings.",
    "Observation: Day 6, 09:00 (Jan 7, Sun).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14785.00 | inventory_value $98.00 | AR $120.24 (1 open, 1 overdue (+$0.24 late-fee "
    "revenue)) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=49. [on-hand 49 kg + in-flight 0 kg / cap 120 kg, 71 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.\n"
    "Note: retailer_B went BANKRUPT yesterday (reason: cash_below_zero). They can no longer "
    "accept orders, settle invoices, or post listings.",
    "Observation: Day 7, 09:00 (Jan 8, Mon).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $14760.00 | inventory_value $98.00 | AR $120.36 (1 open, 1 overdue (+$0.36 late-fee "
    "revenue)) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=49. [on-hand 49 kg + in-flight 0 kg / cap 120 kg, 71 kg "
    "headroom]\n"
    "Open listings: 2 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
]

OBS_RETAILER_B = [
    "Observation: Day 0, 09:00 (Jan 1, Mon).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $14950.00 | inventory_value $250.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=25. [on-hand 25 kg + in-flight 0 kg / cap 80 kg, 55 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 1, 09:00 (Jan 2, Tue).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $15296.00 | inventory_value $30.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: roasted_coffee_kg=3. [on-hand 3 kg + in-flight 0 kg / cap 80 kg, 77 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 2, 09:00 (Jan 3, Wed).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $15300.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 1.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 2, 09:30 (Jan 3, Wed).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $15300.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 5 kg / cap 80 kg, 75 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "[Wake reason: deal_accepted: roaster_A→you 5× roasted_coffee_kg @ $11.5/u]",
    "Observation: Day 3, 09:00 (Jan 4, Thu).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $15250.00 | inventory_value $57.50 | AR $0.00 (0 open) | AP $57.50 (1 open).\n"
    "Inventory by item: roasted_coffee_kg=5. [on-hand 5 kg + in-flight 0 kg / cap 80 kg, 75 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
    "Observation: Day 4, 09:00 (Jan 5, Fri).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $39.00 | inventory_value $0.00 | AR $0.00 (0 open) | AP $57.50 (1 open).\n"
    "Inventory by item: (empty). [on-hand 0 kg + in-flight 0 kg / cap 80 kg, 80 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.",
]

OBS_FARMER_B = [
    "Observation: Day 0, 09:00 (Jan 1, Mon).\n"
    "You are Farmer B (farmer_B).\n"
    "Cash $14975.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 0 kg / cap 120 kg, 60 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 1, 09:00 (Jan 2, Tue).\n"
    "You are Farmer B (farmer_B).\n"
    "Cash $14950.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 0 kg / cap 120 kg, 60 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 2, 09:00 (Jan 3, Wed).\n"
    "You are Farmer B (farmer_B).\n"
    "Cash $14925.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 0 kg / cap 120 kg, 60 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
    "Observation: Day 3, 09:00 (Jan 4, Thu).\n"
    "You are Farmer B (farmer_B).\n"
    "Cash $14900.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 0 kg / cap 120 kg, 60 kg "
    "headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: none.",
]

TB_ROASTER_A_DAY3 = (
    '{"status": "success", "period_label": "YTD", "days_range": [0, 3], "as_of": 3, "complete": '
    'false, "accounts": {"cash": {"balance": 14908.0, "kind": "snapshot"}, "accounts_receivable": '
    '{"balance": 57.5, "kind": "snapshot"}, "inventory": {"balance": 279.96, "kind": "snapshot"}, '
    '"accounts_payable": {"balance": 120.0, "kind": "snapshot"}, "sales_revenue": {"balance": '
    '167.5, "kind": "period"}, "sales_returns": {"balance": 22.0, "kind": "period"}, "cogs": '
    '{"balance": 76.44, "kind": "period"}, "rent_utilities_expense": {"balance": 120.0, "kind": '
    '"period"}, "spoilage_expense": {"balance": 0.0, "kind": "period"}, '
    '"other_operating_expense": {"balance": 0.0, "kind": "period"}, "interest_expense": '
    '{"balance": 0, "kind": "period"}, "interest_revenue": {"balance": 0, "kind": "period"}, '
    '"cash_received": {"balance": 88.0, "kind": "period"}, "cash_paid": {"balance": 180.0, '
    '"kind": "period"}, "cash_paid_for_production": {"balance": 60.0, "kind": "period", "note": '
    '"Subset of cash_paid: production + roast labor (capex-like)."}}, "inventory_by_item": '
    '{"roasted_coffee_kg": 34, "green_coffee_kg": 10}, "bs_source": "live"}'
)

TB_FARMER_A_DAY2 = (
    '{"status": "success", "period_label": "FY", "days_range": [0, 2], "as_of": 2, "complete": '
    'false, "accounts": {"cash": {"balance": 14885.0, "kind": "snapshot"}, "accounts_receivable": '
    '{"balance": 120.0, "kind": "snapshot"}, "inventory": {"balance": 100.0, "kind": "snapshot"}, '
    '"accounts_payable": {"balance": 0.0, "kind": "snapshot"}, "sales_revenue": {"balance": '
    '120.0, "kind": "period"}, "sales_returns": {"balance": 0, "kind": "period"}, "cogs": '
    '{"balance": 60.0, "kind": "period"}, "rent_utilities_expense": {"balance": 75.0, "kind": '
    '"period"}, "spoilage_expense": {"balance": 0.0, "kind": "period"}, '
    '"other_operating_expense": {"balance": 0.0, "kind": "period"}, "interest_expense": '
    '{"balance": 0, "kind": "period"}, "interest_revenue": {"balance": 0, "kind": "period"}, '
    '"cash_received": {"balance": 0, "kind": "period"}, "cash_paid": {"balance": 115.0, "kind": '
    '"period"}, "cash_paid_for_production": {"balance": 40.0, "kind": "period", "note": "Subset '
    'of cash_paid: production + roast labor (capex-like)."}}, "inventory_by_item": '
    '{"green_coffee_kg": 50}, "bs_source": "live"}'
)

DATE_LABELS = {
    0: "Jan 1, Mon",
    6: "Jan 7, Sun",
    7: "Jan 8, Mon",
    30: "Jan 31, Wed",
    31: "Feb 1, Thu",
    58: "Feb 28, Wed",
    59: "Mar 1, Thu",
    89: "Mar 31, Sat",
    90: "Mar 32, Sun",
    120: "Mar 62, Tue",
}

SYNTH = {
    "retailer_A": "Observation: Day 3, 10:00 (Jan 4, Thu).\n"
    "You are Retailer A (retailer_A).\n"
    "Cash $15000.00 | inventory_value $250.00 | AR $0.00 (0 open) | AP $0.00 (0 "
    "open).\n"
    "Inventory by item: roasted_coffee_kg=25. [on-hand 25 kg + in-flight 0 kg / cap "
    "80 kg, 55 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 3 from roaster_B×2, farmer_B×1 (oldest from day 0). Use "
    "read_message(id) to view.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=(unset).\n"
    "Last 2 days' retail sales: 9 unit(s) of roasted_coffee_kg+roasted_specialty_kg "
    "for $226.15.\n"
    "Note: roaster_B went BANKRUPT yesterday (reason: cash_below_zero). They can no "
    "longer accept orders, settle invoices, or post listings.",
    "farmer_A": "Observation: Day 3, 10:00 (Jan 4, Thu).\n"
    "You are Farmer A (farmer_A).\n"
    "Cash $15000.00 | inventory_value $120.00 | AR $0.00 (0 open) | AP $0.00 (0 "
    "open).\n"
    "Inventory by item: green_coffee_kg=60. [on-hand 60 kg + in-flight 30 kg / cap "
    "120 kg, 30 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending production: 10 green_specialty_kg landing day 4, 20 green_coffee_kg "
    "landing day 5.\n"
    "Note: roaster_B went BANKRUPT yesterday (reason: cash_below_zero). They can no "
    "longer accept orders, settle invoices, or post listings.\n"
    "Reminder: file your books.",
    "roaster_A": "Observation: Day 3, 10:00 (Jan 4, Thu).\n"
    "You are Roaster A (roaster_A).\n"
    "Cash $15000.00 | inventory_value $176.40 | AR $0.00 (0 open) | AP $0.00 (0 "
    "open).\n"
    "Inventory by item: roasted_coffee_kg=30. [on-hand 30 kg + in-flight 17 kg / cap "
    "120 kg, 73 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Pending roasting: 17 kg roasted_coffee_kg landing day 4.\n"
    "Note: roaster_B went BANKRUPT yesterday (reason: cash_below_zero). They can no "
    "longer accept orders, settle invoices, or post listings.",
    "retailer_B": "Observation: Day 3, 10:00 (Jan 4, Thu).\n"
    "You are Retailer B (retailer_B).\n"
    "Cash $15000.00 | inventory_value $250.00 | AR $0.00 (0 open) | AP $0.00 (0 "
    "open).\n"
    "Inventory by item: roasted_coffee_kg=25. [on-hand 25 kg + in-flight 0 kg / cap "
    "80 kg, 55 kg headroom]\n"
    "Open listings: 0 | pending offers: in 0, out 0.\n"
    "Recent deals: 0 since yesterday.\n"
    "Unread DMs: 0.\n"
    "Retail prices: roasted_coffee_kg=$18.00/kg, roasted_specialty_kg=$50.00/kg.\n"
    "Yesterday's retail sales: 9 unit(s) of roasted_coffee_kg for $1.00.\n"
    "Note: roaster_B went BANKRUPT yesterday (reason: cash_below_zero). They can no "
    "longer accept orders, settle invoices, or post listings.",
}


@pytest.fixture(scope="module")
def run() -> ScriptedRun:
    return scripted_run(0, 8, "roaster_A")


def _observations(run: ScriptedRun, firm: str) -> list[str]:
    return [m["content"] for m in run.transcripts[firm] if m["role"] == "user"]


@pytest.mark.parametrize(
    ("firm", "expected"),
    [
        ("roaster_A", OBS_ROASTER_A),
        ("retailer_A", OBS_RETAILER_A),
        ("farmer_A", OBS_FARMER_A),
        ("retailer_B", OBS_RETAILER_B),
        ("farmer_B", OBS_FARMER_B),
    ],
)
def test_every_observation_of_the_scripted_run_is_the_references(
    run: ScriptedRun, firm: str, expected: list[str]
) -> None:
    got = _observations(run, firm)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g == e


def test_trial_balance_results_are_the_references(run: ScriptedRun) -> None:
    def tool_texts(firm: str) -> list[str]:
        return [
            m["content"]
            for m in run.transcripts[firm]
            if m["role"] == "tool" and "period_label" in m["content"]
        ]

    assert tool_texts("roaster_A")[0] == TB_ROASTER_A_DAY3
    assert tool_texts("farmer_A")[0] == TB_FARMER_A_DAY2


def test_date_label() -> None:
    assert {d: date_label(d) for d in DATE_LABELS} == DATE_LABELS


@pytest.mark.parametrize(
    ("last_active", "day", "since"),
    [(-1, 0, -1), (-1, 5, 4), (4, 5, 5), (5, 5, 6), (2, 5, 3), (0, 5, 1)],
)
def test_since_day_window(last_active: int, day: int, since: int) -> None:
    # The reference's arithmetic, quirk included: an agent active yesterday gets the empty
    # window [day, day), so its "Recent deals" count is 0 and no retail-sales line shows.
    assert since_day_for(last_active, day) == since


def test_synthetic_states_render_as_the_references() -> None:
    econ = build_economy(0, 8)
    econ.time_manager.virtual_min = 3 * 1440 + 600
    econ.consumer_sales_log.extend(
        [
            {
                "day": 0,
                "shop_id": "retailer_A",
                "item_id": "roasted_coffee_kg",
                "qty": 5,
                "total_price": 90.0,
            },
            {
                "day": 1,
                "shop_id": "retailer_A",
                "item_id": "roasted_coffee_kg",
                "qty": 7,
                "total_price": 126.1,
            },
            {
                "day": 2,
                "shop_id": "retailer_A",
                "item_id": "roasted_specialty_kg",
                "qty": 2,
                "total_price": 100.05,
            },
            {
                "day": 2,
                "shop_id": "retailer_B",
                "item_id": "roasted_coffee_kg",
                "qty": 9,
                "total_price": 1.0,
            },
        ]
    )
    econ._last_active_day_per_agent["retailer_A"] = 0
    econ._last_active_day_per_agent["farmer_A"] = 2
    for who, t in (("farmer_B", 100), ("roaster_B", 2000), ("roaster_B", 3000)):
        econ.time_manager.virtual_min = t
        econ.marketplace.post_message(
            sender_id=who, recipient_id="retailer_A", title="hi", body="b"
        )
    econ.time_manager.virtual_min = 3 * 1440 + 600
    econ._bankrupt_day["roaster_B"] = 2
    econ._bankrupt_reason["roaster_B"] = "cash_below_zero"
    econ._bankrupt_agents.add("roaster_B")
    econ.business_apps["retailer_A"].retail_prices.pop("roasted_specialty_kg")
    econ._pending_production.extend(
        [
            {
                "agent_id": "farmer_A",
                "item_id": "green_coffee_kg",
                "qty": 20,
                "ready_day": 5,
                "total_cost": 40.0,
            },
            {
                "agent_id": "farmer_A",
                "item_id": "green_specialty_kg",
                "qty": 10,
                "ready_day": 4,
                "total_cost": 100.0,
            },
        ]
    )
    econ._pending_roasting.append(
        {
            "agent_id": "roaster_A",
            "output_qty": 17,
            "output_item": "roasted_coffee_kg",
            "ready_day": 4,
            "output_total_cost": 100.0,
        }
    )
    got = {
        "retailer_A": econ._format_observation("retailer_A", 3, None),
        "farmer_A": econ._format_observation("farmer_A", 3, "Reminder: file your books."),
        "roaster_A": econ._format_observation("roaster_A", 3, None),
        "retailer_B": econ._format_observation("retailer_B", 3, None),
    }
    assert got == SYNTH
