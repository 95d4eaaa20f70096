"""The paper market (the reference's ``marketplace.py``) through the tools a model calls.

Every expected text below is what the reference itself returned for the same call in the
same state (see ``World``): listings, offers, acceptance checks in order, delivery lead
times (with a config's ``FARMER_DELIVERY_EXTRA_DAYS``), messages and read receipts.
"""

import json
import uuid

import pytest
from tests.coffee.paper._books_world import World, books_state

from econbench.coffee.paper.clock import (
    BUSINESS_HOURS_END,
    BUSINESS_HOURS_START,
    MINUTES_PER_DAY,
    TimeManager,
    format_min,
    min_to_day_hour_minute,
    tool_cost_minutes,
)
from econbench.coffee.paper.economy import build_economy
from econbench.coffee.paper.ids import IdSource
from econbench.coffee.paper.market import Marketplace


def market_scenario(w: World) -> None:
    w.at(540)
    a = w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 30, "asking_price": 5.5, "payment_terms_days": 10},
        ('{"status": "success", "listing_id": "lst_6e00302f", "asking_price": 5.5, "qty": 30}'),
    )
    w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 0, "asking_price": 5.5},
        '{"status": "error", "message": "qty must be > 0."}',
    )
    w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": 61, "asking_price": 5.5},
        ('{"status": "error", "message": "You only hold 60 units of \'green_coffee_kg\'."}'),
    )
    w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": "abc", "asking_price": 5.5},
        (
            '{"status": "error", "message": "qty must be int, asking_price float, '
            'payment_terms_days int."}'
        ),
    )
    b = w.C(
        "farmer_A",
        "post_listing",
        {"item_id": "green_coffee_kg", "qty": "12", "asking_price": "6"},
        ('{"status": "success", "listing_id": "lst_50a167eb", "asking_price": 6.0, "qty": 12}'),
    )
    w.at(570)
    w.C(
        "roaster_A",
        "view_listings",
        {},
        (
            '{"status": "success", "count": 2, "listings": [{"id": "lst_6e00302f", '
            '"seller_id": "farmer_A", "item_id": "green_coffee_kg", "qty": 30, '
            '"asking_price": 5.5, "payment_terms_days": 10, "posted_at": 540, '
            '"status": "open", "posted_day": 0, "posted": "Day 0, 09:00", '
            '"delivery_eta_days": 1, "delivery_eta_note": "1 (base)"}, '
            '{"id": "lst_50a167eb", "seller_id": "farmer_A", '
            '"item_id": "green_coffee_kg", "qty": 12, "asking_price": 6.0, '
            '"payment_terms_days": 30, "posted_at": 540, "status": "open", '
            '"posted_day": 0, "posted": "Day 0, 09:00", "delivery_eta_days": 1, '
            '"delivery_eta_note": "1 (base)"}]}'
        ),
    )
    w.C(
        "farmer_A",
        "view_listings",
        {"only_others": True},
        '{"status": "success", "count": 0, "listings": []}',
    )
    w.C(
        "farmer_A",
        "view_listings",
        {"item_id": "roasted_coffee_kg", "only_others": False},
        '{"status": "success", "count": 0, "listings": []}',
    )
    o1 = w.C(
        "roaster_A",
        "make_offer",
        {
            "listing_id": a["listing_id"],
            "offered_price": 5.2,
            "qty": 25,
            "payment_terms_days": 14,
            "message": "hi",
        },
        ('{"status": "success", "offer_id": "off_95105fa4", "seller_id": "farmer_A"}'),
    )
    w.C(
        "roaster_A",
        "make_offer",
        {"listing_id": "lst_nope", "offered_price": 5.2, "qty": 25},
        '{"status": "error", "message": "Listing lst_nope not found."}',
    )
    w.C(
        "roaster_A",
        "make_offer",
        {"listing_id": a["listing_id"], "offered_price": 5.2, "qty": 31},
        '{"status": "error", "message": "Offer qty must be 1..30."}',
    )
    w.C(
        "farmer_A",
        "make_offer",
        {"listing_id": a["listing_id"], "offered_price": 5.2, "qty": 3},
        '{"status": "error", "message": "Cannot offer on your own listing."}',
    )
    w.C(
        "roaster_A",
        "make_offer",
        {"listing_id": a["listing_id"], "offered_price": "x", "qty": 3},
        '{"status": "error", "message": "Type error in offer params."}',
    )
    o2 = w.C(
        "roaster_B",
        "make_offer",
        {"listing_id": a["listing_id"], "offered_price": 5, "qty": 10},
        ('{"status": "success", "offer_id": "off_df441de1", "seller_id": "farmer_A"}'),
    )
    o3 = w.C(
        "roaster_B",
        "make_offer",
        {"listing_id": b["listing_id"], "offered_price": 5, "qty": 5},
        ('{"status": "success", "offer_id": "off_76737c0f", "seller_id": "farmer_A"}'),
    )
    w.C(
        "roaster_B",
        "withdraw_offer",
        {"offer_id": o3["offer_id"]},
        '{"status": "success", "message": "Offer withdrawn."}',
    )
    w.C(
        "roaster_B",
        "withdraw_offer",
        {"offer_id": o3["offer_id"]},
        '{"status": "error", "message": "Offer is already withdrawn."}',
    )
    w.C(
        "roaster_A",
        "withdraw_offer",
        {"offer_id": o2["offer_id"]},
        ('{"status": "error", "message": "Only the buyer can withdraw this offer."}'),
    )
    w.C(
        "roaster_A",
        "withdraw_offer",
        {"offer_id": "off_none"},
        '{"status": "error", "message": "Offer off_none not found."}',
    )
    w.C(
        "farmer_A",
        "view_offers",
        {"direction": "incoming"},
        (
            '{"status": "success", "offers": [{"id": "off_95105fa4", '
            '"listing_id": "lst_6e00302f", "buyer_id": "roaster_A", '
            '"seller_id": "farmer_A", "offered_price": 5.2, "qty": 25, '
            '"payment_terms_days": 14, "posted_at": 570, "message": "hi", '
            '"status": "pending", "posted_day": 0, "posted": "Day 0, 09:30"}, '
            '{"id": "off_df441de1", "listing_id": "lst_6e00302f", '
            '"buyer_id": "roaster_B", "seller_id": "farmer_A", "offered_price": 5.0, '
            '"qty": 10, "payment_terms_days": 30, "posted_at": 570, "message": null, '
            '"status": "pending", "posted_day": 0, "posted": "Day 0, 09:30"}, '
            '{"id": "off_76737c0f", "listing_id": "lst_50a167eb", '
            '"buyer_id": "roaster_B", "seller_id": "farmer_A", "offered_price": 5.0, '
            '"qty": 5, "payment_terms_days": 30, "posted_at": 570, "message": null, '
            '"status": "withdrawn", "posted_day": 0, "posted": "Day 0, 09:30"}]}'
        ),
    )
    w.C(
        "roaster_A",
        "view_offers",
        {"direction": "outgoing"},
        (
            '{"status": "success", "offers": [{"id": "off_95105fa4", '
            '"listing_id": "lst_6e00302f", "buyer_id": "roaster_A", '
            '"seller_id": "farmer_A", "offered_price": 5.2, "qty": 25, '
            '"payment_terms_days": 14, "posted_at": 570, "message": "hi", '
            '"status": "pending", "posted_day": 0, "posted": "Day 0, 09:30"}]}'
        ),
    )
    w.C("roaster_B", "view_offers", {"direction": "bogus"}, '{"status": "success", "offers": []}')
    w.at(600)
    w.C(
        "roaster_A",
        "accept_offer",
        {"offer_id": o1["offer_id"]},
        '{"status": "error", "message": "Only the seller can accept this offer."}',
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o1["offer_id"]},
        (
            '{"status": "success", "deal_id": "dl_5ddc27d9", '
            '"invoice_id": "pending_dl_5ddc27d9", "buyer_id": "roaster_A", '
            '"item_id": "green_coffee_kg", "qty": 25, "unit_price": 5.2, '
            '"total_price": 130.0, "payment_terms_days": 14, "delivery_day": 1, '
            '"delivery_at": 1980}'
        ),
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o1["offer_id"]},
        '{"status": "error", "message": "Offer is already accepted."}',
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": "off_zzz"},
        '{"status": "error", "message": "Offer off_zzz not found."}',
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o3["offer_id"]},
        '{"status": "error", "message": "Offer is already withdrawn."}',
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o2["offer_id"]},
        ('{"status": "error", "message": "Offer qty 10 exceeds remaining listing qty 5."}'),
    )
    w.C(
        "roaster_A",
        "view_deals",
        {},
        (
            '{"status": "success", "count": 1, "deals": [{"id": "dl_5ddc27d9", '
            '"listing_id": "lst_6e00302f", "offer_id": "off_95105fa4", '
            '"seller_id": "farmer_A", "buyer_id": "roaster_A", '
            '"item_id": "green_coffee_kg", "qty": 25, "unit_price": 5.2, '
            '"total_price": 130.0, "payment_terms_days": 14, "deal_at": 600, '
            '"delivery_at": 1980, "invoice_id": "pending_dl_5ddc27d9", '
            '"notes": null, "returned_qty": 0, "_reserved_seller_cogs": 50.0, '
            '"deal_day": 0, "delivery_day": 1, "accepted": "Day 0, 10:00", '
            '"delivers": "Day 1, 09:00"}]}'
        ),
    )
    w.C("retailer_A", "view_deals", {}, '{"status": "success", "count": 0, "deals": []}')
    w.C(
        "farmer_A",
        "view_listings",
        {"only_others": False},
        (
            '{"status": "success", "count": 2, "listings": [{"id": "lst_6e00302f", '
            '"seller_id": "farmer_A", "item_id": "green_coffee_kg", "qty": 5, '
            '"asking_price": 5.5, "payment_terms_days": 10, "posted_at": 540, '
            '"status": "open", "posted_day": 0, "posted": "Day 0, 09:00", '
            '"delivery_eta_days": 1, "delivery_eta_note": "1 (base)"}, '
            '{"id": "lst_50a167eb", "seller_id": "farmer_A", '
            '"item_id": "green_coffee_kg", "qty": 12, "asking_price": 6.0, '
            '"payment_terms_days": 30, "posted_at": 540, "status": "open", '
            '"posted_day": 0, "posted": "Day 0, 09:00", "delivery_eta_days": 1, '
            '"delivery_eta_note": "1 (base)"}]}'
        ),
    )
    o4 = w.C(
        "retailer_A",
        "make_offer",
        {"listing_id": b["listing_id"], "offered_price": 6, "qty": 6},
        ('{"status": "success", "offer_id": "off_e66f979f", "seller_id": "farmer_A"}'),
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o4["offer_id"]},
        (
            '{"status": "success", "deal_id": "dl_69fe7419", '
            '"invoice_id": "pending_dl_69fe7419", "buyer_id": "retailer_A", '
            '"item_id": "green_coffee_kg", "qty": 6, "unit_price": 6.0, '
            '"total_price": 36.0, "payment_terms_days": 30, "delivery_day": 1, '
            '"delivery_at": 1980}'
        ),
    )
    w.emod.FARMER_DELIVERY_EXTRA_DAYS = 2
    w.C(
        "roaster_B",
        "view_listings",
        {"item_id": "green_coffee_kg"},
        (
            '{"status": "success", "count": 2, "listings": [{"id": "lst_6e00302f", '
            '"seller_id": "farmer_A", "item_id": "green_coffee_kg", "qty": 5, '
            '"asking_price": 5.5, "payment_terms_days": 10, "posted_at": 540, '
            '"status": "open", "posted_day": 0, "posted": "Day 0, 09:00", '
            '"delivery_eta_days": 3, '
            '"delivery_eta_note": "1 (base) + 2 (farmer ships from origin)"}, '
            '{"id": "lst_50a167eb", "seller_id": "farmer_A", '
            '"item_id": "green_coffee_kg", "qty": 6, "asking_price": 6.0, '
            '"payment_terms_days": 30, "posted_at": 540, "status": "open", '
            '"posted_day": 0, "posted": "Day 0, 09:00", "delivery_eta_days": 3, '
            '"delivery_eta_note": "1 (base) + 2 (farmer ships from origin)"}]}'
        ),
    )
    o5 = w.C(
        "roaster_B",
        "make_offer",
        {"listing_id": b["listing_id"], "offered_price": 6.25, "qty": 6, "payment_terms_days": 0},
        ('{"status": "success", "offer_id": "off_fb5e8c0c", "seller_id": "farmer_A"}'),
    )
    w.C(
        "farmer_A",
        "accept_offer",
        {"offer_id": o5["offer_id"]},
        (
            '{"status": "success", "deal_id": "dl_49131107", '
            '"invoice_id": "pending_dl_49131107", "buyer_id": "roaster_B", '
            '"item_id": "green_coffee_kg", "qty": 6, "unit_price": 6.25, '
            '"total_price": 37.5, "payment_terms_days": 0, "delivery_day": 3, '
            '"delivery_at": 4860}'
        ),
    )
    w.emod.FARMER_DELIVERY_EXTRA_DAYS = 0
    w.C(
        "roaster_B",
        "view_offers",
        {},
        (
            '{"status": "success", "offers": [{"id": "off_df441de1", '
            '"listing_id": "lst_6e00302f", "buyer_id": "roaster_B", '
            '"seller_id": "farmer_A", "offered_price": 5.0, "qty": 10, '
            '"payment_terms_days": 30, "posted_at": 570, "message": null, '
            '"status": "pending", "posted_day": 0, "posted": "Day 0, 09:30"}, '
            '{"id": "off_76737c0f", "listing_id": "lst_50a167eb", '
            '"buyer_id": "roaster_B", "seller_id": "farmer_A", "offered_price": 5.0, '
            '"qty": 5, "payment_terms_days": 30, "posted_at": 570, "message": null, '
            '"status": "withdrawn", "posted_day": 0, "posted": "Day 0, 09:30"}, '
            '{"id": "off_fb5e8c0c", "listing_id": "lst_50a167eb", '
            '"buyer_id": "roaster_B", "seller_id": "farmer_A", '
            '"offered_price": 6.25, "qty": 6, "payment_terms_days": 0, '
            '"posted_at": 600, "message": null, "status": "accepted", '
            '"posted_day": 0, "posted": "Day 0, 10:00"}]}'
        ),
    )
    w.C(
        "roaster_B",
        "view_listings",
        {},
        (
            '{"status": "success", "count": 1, "listings": [{"id": "lst_6e00302f", '
            '"seller_id": "farmer_A", "item_id": "green_coffee_kg", "qty": 5, '
            '"asking_price": 5.5, "payment_terms_days": 10, "posted_at": 540, '
            '"status": "open", "posted_day": 0, "posted": "Day 0, 09:00", '
            '"delivery_eta_days": 1, "delivery_eta_note": "1 (base)"}]}'
        ),
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "farmer_A", "title": "t", "body": "  "},
        '{"status": "error", "message": "body cannot be empty."}',
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "farmer_A", "title": "  ", "body": "b"},
        (
            '{"status": "error", "message": "title is required (short subject line, '
            '\\u226460 chars recommended)."}'
        ),
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "farmer_A", "title": "x" * 81, "body": "b"},
        '{"status": "error", "message": "title is 81 chars; hard cap is 80."}',
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "roaster_A", "title": "t", "body": "b"},
        '{"status": "error", "message": "cannot send a message to yourself."}',
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "nobody", "title": "t", "body": "b"},
        '{"status": "error", "message": "unknown recipient agent_id \'nobody\'."}',
    )
    w.C(
        "roaster_A",
        "send_message",
        {"recipient": "farmer_A", "title": "b", "body": 5},
        (
            '{"status": "error", '
            '"message": "Tool call failed: AttributeError: \'int\' object has no attrib'
            "ute 'strip'. Check the tool's required parameters and types, "
            'then try again."}'
        ),
    )
    m1 = w.C(
        "roaster_A",
        "send_message",
        {
            "recipient": "farmer_A",
            "title": "  Thanks!  ",
            "body": "Body one",
            "ref_listing_id": a["listing_id"],
        },
        ('{"status": "success", "message_id": "msg_24ea820f", "recipient": "farmer_A"}'),
    )
    w.at(630)
    w.C(
        "farmer_A",
        "send_message",
        {
            "recipient": "roaster_A",
            "title": "Re",
            "body": "Body two",
            "ref_offer_id": o1["offer_id"],
        },
        ('{"status": "success", "message_id": "msg_540f46ae", "recipient": "roaster_A"}'),
    )
    w.C(
        "retailer_A",
        "send_message",
        {"recipient": "roaster_A", "title": "Hello", "body": "Body three"},
        ('{"status": "success", "message_id": "msg_8afa8837", "recipient": "roaster_A"}'),
    )
    w.C(
        "roaster_A",
        "view_messages",
        {},
        (
            '{"status": "success", "total_visible": 3, "returned": 3, '
            '"inbox": [{"id": "msg_8afa8837", "sent": "Day 0, 10:30", "day": 0, '
            '"sender": "retailer_A", "recipient": "roaster_A", "read": false, '
            '"title": "Hello", "ref_listing_id": null, "ref_offer_id": null, '
            '"ref_deal_id": null}, {"id": "msg_540f46ae", "sent": "Day 0, 10:30", '
            '"day": 0, "sender": "farmer_A", "recipient": "roaster_A", '
            '"read": false, "title": "Re", "ref_listing_id": null, '
            '"ref_offer_id": "off_95105fa4", "ref_deal_id": null}, '
            '{"id": "msg_24ea820f", "sent": "Day 0, 10:00", "day": 0, '
            '"sender": "roaster_A", "recipient": "farmer_A", "read": true, '
            '"title": "Thanks!", "ref_listing_id": "lst_6e00302f", '
            '"ref_offer_id": null, "ref_deal_id": null}], '
            '"note": "title-only listing; call read_message(message_id) to fetch a bo'
            'dy (also marks it read)"}'
        ),
    )
    w.C(
        "roaster_A",
        "view_messages",
        {"counterparty": "self"},
        (
            '{"status": "success", "total_visible": 1, "returned": 1, '
            '"inbox": [{"id": "msg_24ea820f", "sent": "Day 0, 10:00", "day": 0, '
            '"sender": "roaster_A", "recipient": "farmer_A", "read": true, '
            '"title": "Thanks!", "ref_listing_id": "lst_6e00302f", '
            '"ref_offer_id": null, "ref_deal_id": null}], '
            '"note": "title-only listing; call read_message(message_id) to fetch a bo'
            'dy (also marks it read)"}'
        ),
    )
    w.C(
        "roaster_A",
        "view_messages",
        {"counterparty": "farmer_A", "since_day": "0", "limit": "1"},
        (
            '{"status": "success", "total_visible": 2, "returned": 1, '
            '"inbox": [{"id": "msg_540f46ae", "sent": "Day 0, 10:30", "day": 0, '
            '"sender": "farmer_A", "recipient": "roaster_A", "read": false, '
            '"title": "Re", "ref_listing_id": null, "ref_offer_id": "off_95105fa4", '
            '"ref_deal_id": null}], '
            '"note": "title-only listing; call read_message(message_id) to fetch a bo'
            'dy (also marks it read)"}'
        ),
    )
    w.C(
        "roaster_A",
        "view_messages",
        {"since_day": 1, "limit": "zz"},
        (
            '{"status": "success", "total_visible": 0, "returned": 0, "inbox": [], '
            '"note": "title-only listing; call read_message(message_id) to fetch a bo'
            'dy (also marks it read)"}'
        ),
    )
    w.C(
        "farmer_A",
        "read_message",
        {"message_id": m1["message_id"]},
        (
            '{"status": "success", "message": {"id": "msg_24ea820f", '
            '"sender_id": "roaster_A", "recipient_id": "farmer_A", '
            '"title": "Thanks!", "body": "Body one", "sent_at": 600, '
            '"ref_listing_id": "lst_6e00302f", "ref_offer_id": null, '
            '"ref_deal_id": null, "sent_day": 0, "sent": "Day 0, 10:00"}}'
        ),
    )
    w.C(
        "roaster_A",
        "read_message",
        {"message_id": m1["message_id"]},
        (
            '{"status": "success", "message": {"id": "msg_24ea820f", '
            '"sender_id": "roaster_A", "recipient_id": "farmer_A", '
            '"title": "Thanks!", "body": "Body one", "sent_at": 600, '
            '"ref_listing_id": "lst_6e00302f", "ref_offer_id": null, '
            '"ref_deal_id": null, "sent_day": 0, "sent": "Day 0, 10:00"}}'
        ),
    )
    w.C(
        "retailer_B",
        "read_message",
        {"message_id": m1["message_id"]},
        (
            '{"status": "error", '
            '"message": "Message \'msg_24ea820f\' not visible to you or unknown id."}'
        ),
    )
    w.C(
        "farmer_A",
        "view_messages",
        {"limit": 0},
        (
            '{"status": "success", "total_visible": 2, "returned": 1, '
            '"inbox": [{"id": "msg_540f46ae", "sent": "Day 0, 10:30", "day": 0, '
            '"sender": "farmer_A", "recipient": "roaster_A", "read": true, '
            '"title": "Re", "ref_listing_id": null, "ref_offer_id": "off_95105fa4", '
            '"ref_deal_id": null}], '
            '"note": "title-only listing; call read_message(message_id) to fetch a bo'
            'dy (also marks it read)"}'
        ),
    )


MARKET_STATE = {
    "farmer_A": {
        "cash": 15000.0,
        "inventory": {
            "green_coffee_kg": 23,
        },
        "inventory_total_cost": {
            "green_coffee_kg": 46.0,
        },
        "retail_prices": {},
        "ar": [],
        "ap": [],
        "ledger": [],
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

MARKET_STATE_WAKES = {
    "farmer_A": "dm_received: from roaster_A — 'Thanks!'",
    "roaster_A": "dm_received: from retailer_A — 'Hello'",
    "retailer_A": "deal_accepted: farmer_A→you 6× green_coffee_kg @ $6.0/u",
    "roaster_B": "deal_accepted: farmer_A→you 6× green_coffee_kg @ $6.25/u",
}


def test_market_scenario_answers_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(monkeypatch)
    market_scenario(w)
    assert books_state(w) == MARKET_STATE
    assert dict(w.env._pending_wake_reason) == MARKET_STATE_WAKES
    assert w.mk._read_message_ids == {"farmer_A": ["msg_24ea820f"]}
    assert [m.id for m in w.mk.unread_messages_for("roaster_A")] == ["msg_540f46ae", "msg_8afa8837"]
    assert w.mk.unread_messages_for("farmer_A") == []


def test_ids_are_the_shared_sources_draws() -> None:
    ids = IdSource(7)
    drawn = [str(ids.uuid4()) for _ in range(3)]
    assert drawn == [
        "6e00302f-a861-4e7b-9720-a50060bf7683",
        "50a167eb-3e2e-431d-aaf9-327102e9f561",
        "95105fa4-88f5-420b-974a-2dc4d04bcd96",
    ]
    assert str(IdSource(0).uuid4()) == "f04550b9-7103-468b-87b2-88a7c5b7cb93"
    assert all(uuid.UUID(d).version == 4 for d in drawn)


def test_id_source_state_round_trips_through_json() -> None:
    ids = IdSource(3)
    ids.uuid4()
    saved = json.loads(json.dumps(ids.state()))
    ahead = [ids.uuid4() for _ in range(4)]
    other = IdSource(99)
    other.set_state(saved)
    assert [other.uuid4() for _ in range(4)] == ahead


def test_clock_texts_and_costs() -> None:
    assert format_min(44040) == "Day 30, 14:00"
    assert format_min(0) == "Day 0, 00:00"
    assert format_min(1439) == "Day 0, 23:59"
    assert min_to_day_hour_minute(33660) == (23, 9, 0)
    assert (MINUTES_PER_DAY, BUSINESS_HOURS_START, BUSINESS_HOURS_END) == (1440, 540, 1140)
    assert tool_cost_minutes("roast") == 30
    assert tool_cost_minutes("wait_for_next_day") == 0
    assert tool_cost_minutes("not_a_tool") == 30


def test_time_manager() -> None:
    tm = TimeManager()
    tm.advance_minutes(1500)
    assert (tm.get_virtual_min(), tm.get_current_day()) == (1500, 1)
    tm.advance_day(2)
    assert tm.get_virtual_min() == 3 * 1440
    with pytest.raises(ValueError, match="minutes must be non-negative, got -1"):
        tm.advance_minutes(-1)
    tm.reset()
    assert tm.virtual_min == 0


def test_accept_without_the_economy_wired() -> None:
    """The reference's message when no deal hook is set (checked after the listing
    bookkeeping, as there)."""
    w_market = Marketplace(TimeManager(), IdSource(1))
    econ = build_economy(1, 10)
    books = econ.business_apps
    w_market.items = econ.marketplace.items
    w_market.business_apps = books
    listing = w_market.post_listing("farmer_A", "green_coffee_kg", 10, 5.0, 30)
    offer, msg = w_market.make_offer(listing.id, "roaster_A", 5.0, 10, 30)
    assert offer is not None and msg == "ok"
    deal, msg = w_market.accept_offer(offer.id, "farmer_A")
    assert deal is None
    assert msg == "Internal: marketplace.on_deal_accepted not wired."
    assert listing.status == "closed"
    w_market.business_apps = {}
    offer2 = w_market.offers[0]
    offer2.status = "pending"
    listing.status = "open"
    listing.qty = 10
    assert w_market.accept_offer(offer2.id, "farmer_A") == (
        None,
        "Internal: counterparty BusinessApp not registered.",
    )
