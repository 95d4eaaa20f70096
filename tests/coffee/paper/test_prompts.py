"""The paper condition's system prompt is the reference's, byte for byte.

The expected digests were computed by importing the reference's ``coffeebench/main.py``
(CoffeeBench 71442fb) under Python 3.12 and formatting ``SYSTEM_PROMPT`` exactly as its
``build_run`` does, for every agent and several horizons and score framings.
"""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from econbench.coffee.paper import prompts
from econbench.coffee.paper.seed import seed_world

ROLE_DIGESTS = {
    ("farmer_A", 90): ("38fb90e44416eb03d288fd11f746ee919da61352137fded46499aea072004452", 14646),
    ("farmer_A", 30): ("d704baeafb64c593780ec87ae303f5bac9ff86397ed17cc802ccbb80e98e5169", 14646),
    ("farmer_A", 365): ("cabf3bf99116102c4c4a1f2cde57b3cebbab8c5a24f068b46ced41bbba27a020", 14650),
    ("farmer_B", 90): ("713a79455a1a4b568c7106d8f559638de41dad0154f96ec8a7400cb23153cf4e", 14646),
    ("farmer_B", 30): ("314d46c34d9445f580f1dcae4006f98646d338936411ee3a19e07843d56494b4", 14646),
    ("farmer_B", 365): ("66138085e24242c63ebde95874c98d002d2a3b7d20c503a3042df462fedac3a5", 14650),
    ("roaster_A", 90): ("785eb53f96f08939bf7a632fef0a15877dc7ba1850f61616c2e69fd868723b1f", 14784),
    ("roaster_A", 30): ("c942a9d3e482f99f9c8e6cc3413bc0d106eab617342609e0930b7642648dc608", 14784),
    ("roaster_A", 365): ("5be22bd1781db7aed5fe18f8ed66199ea420003c89541c0667e212eafc58b795", 14788),
    ("roaster_B", 90): ("a26c6b03eb849f1bd87ed5585eaa096c0ef5516043728df342422e3354210427", 14784),
    ("roaster_B", 30): ("a12ae311883ff0072d55f26cf25e8de92aa9d5a022cfb4f6aa44039ae3b60bfb", 14784),
    ("roaster_B", 365): ("c04e4a725080f2493d86f12b0a75ecda577062c6cc1c214c92e097297806d1e0", 14788),
    ("retailer_A", 90): ("1c483ba946286e1746171db877c603dae3726842d053003198c0fc94e173f226", 14815),
    ("retailer_A", 30): ("da0db372ef290c762c38980624ea294f9ed05e53234c948d991ab58ebabc0786", 14815),
    ("retailer_A", 365): (
        "4ab94479b71c4c5f2de88735a681f525d2153ab1cae370f904c59169a3e09c91",
        14819,
    ),
    ("retailer_B", 90): ("7e755fae5727a4d58270fe11a6604888b82fc6ce48d36e1da08dd925181854ed", 14815),
    ("retailer_B", 30): ("e09cbe2f8fcaf196be408debe10ddca22503d5051b16f38f75c5515392ef165d", 14815),
    ("retailer_B", 365): (
        "f62ae7516469153be7a4bd8765c9ea4050fffad93923eb62e7fef288e9d51f6e",
        14819,
    ),
}

# roaster_A, 90 days, with each of the reference's KPI score framings.
KPI_CASES = {
    "net_income": (
        {"metric": "net_income"},
        "785eb53f96f08939bf7a632fef0a15877dc7ba1850f61616c2e69fd868723b1f",
        14784,
    ),
    "revenue": (
        {"metric": "revenue"},
        "cbd2c6f0421125e7f042c5d483952236c829ce9671b8f1019d702b841967d674",
        14632,
    ),
    "revenue_pressure": (
        {"metric": "revenue_pressure", "target_usd": 75000},
        "cceba6b53287a3fbbf90aff77661021c01e9e3b401e85cfa9d1f7c5fa56d643a",
        14817,
    ),
    "revenue_pressure_default": (
        {"metric": "revenue_pressure"},
        "318ffe834dc888079835e283cfd5999a4d17c199024d107d1f16e5f38debd6f4",
        14817,
    ),
    "revenue_max": (
        {"metric": "revenue_max"},
        "3808e84343dbbe291a081e5b3164edb27f396bef4278067a12195565375f9f45",
        14771,
    ),
    "peer_revenue_max": (
        {"metric": "peer_revenue_max", "affiliate_id": "roaster_B", "affiliate_role": "roaster"},
        "71fc516c5360143ee23c2b64a8864d3177b9ff4c949d93f373c3e87cbfb23e7f",
        15021,
    ),
    "peer_revenue_max_default": (
        {"metric": "peer_revenue_max"},
        "f903bc35b029166161a1bbf8f28eb4a4d55fb33502e74376b44bd01689dac438",
        15019,
    ),
    "survival_revenue_pair": (
        {
            "metric": "survival_revenue_pair",
            "target_usd": 40000,
            "peer_id": "retailer_B",
            "peer_role": "retailer",
        },
        "22ebee80f595644b8e5392b54370b5b52e9f673cda7e347a2fd299cf038672c4",
        14816,
    ),
    "survival_revenue_pair_default": (
        {"metric": "survival_revenue_pair"},
        "c5ae862af7dc1e030dd2b0e1a503c5508bde4b24261c69e4e3cecd7fe7564e29",
        14811,
    ),
}

TEXT_DIGESTS = {
    "SCORE_FRAMING_DEFAULT": "12c7f42f5356aade1244eb6562e64b1e8a7f33cd994274bab46cb3c9a6e4b1ea",
    "SCORE_FRAMING_REVENUE": "055fb17a980bc1a828b30804433826e5a33551b295356e54ab0da31ee1986fc9",
    "SCORE_FRAMING_REVENUE_PRESSURE": (
        "b86e31e737998681580b53e09b13a72279f378c8344f905e540a4e2a89dbdce4"
    ),
    "SCORE_FRAMING_REVENUE_MAX": "415bda7284d97420d83378718655de8f4dc2abd3308cea6980ad2ab6ee204281",
    "SCORE_FRAMING_PEER_REVENUE_MAX": (
        "9732047df361a5640bd30a7c3b69ac79740a04debff0347886575c33c1f8cdd0"
    ),
    "SCORE_FRAMING_SURVIVAL_REVENUE_PAIR": (
        "668bed624df463d00a197bbfe72b93a3ffbc5dd7382eca5081971fae5b28dc1d"
    ),
    "INITIAL_OBSERVATION": "1ec6ece69836edafef713befe92f351acd7c203da4a98f38c74d143e13c96686",
}


def _digest(text: str) -> tuple[str, int]:
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), len(text)


@pytest.mark.parametrize(("agent_id", "max_days"), sorted(ROLE_DIGESTS))
def test_system_prompt_matches_reference(agent_id: str, max_days: int) -> None:
    assert (
        _digest(prompts.system_prompt(agent_id, max_days=max_days))
        == ROLE_DIGESTS[(agent_id, max_days)]
    )


@pytest.mark.parametrize("case", sorted(KPI_CASES))
def test_score_framings_match_reference(case: str) -> None:
    kpi, sha, length = KPI_CASES[case]
    assert _digest(prompts.system_prompt("roaster_A", kpi=kpi)) == (sha, length)


@pytest.mark.parametrize("name", sorted(TEXT_DIGESTS))
def test_texts_match_reference(name: str) -> None:
    assert _digest(getattr(prompts, name))[0] == TEXT_DIGESTS[name]


def test_prompt_begins_and_ends_as_the_reference() -> None:
    """Readable spot checks of the newline-sensitive edges (the files store no edge newlines)."""
    text = prompts.system_prompt("roaster_A")
    assert text.startswith(
        "\nYou are Roaster A (roaster), an autonomous AI agent running a small business in a "
        "regional B2B marketplace.\nFive other "
    )
    assert text.endswith(
        "much higher margin than commodity, but also much smaller daily market demand pool."
        "  [consumer-facing]\n"
    )
    assert "\nThe simulation runs for 90 days. Your **score** is your **true net income**" in text
    assert (
        "Your agent_id is `roaster_A`. Other participants:\n  - farmer_A (farmer, Farmer A)\n"
        in (text)
    )
    assert "{" not in text and "}" not in text  # every field filled


def test_operational_mechanics_block_matches_reference() -> None:
    assert _digest(prompts._operational_mechanics_block()) == (
        "a775b71ec04f756c302f3e0c271c5614aec218bfc88ec1d9f0f57e8698315560",
        3713,
    )


def test_catalog_and_participants_match_reference() -> None:
    items, endowments = seed_world()
    assert _digest(prompts._format_catalog(items)) == (
        "433f69aee3e46676499e79dd8d6e14b64acce0131878b6a0110fc52b4ad6a735",
        1626,
    )
    assert prompts._format_participants(endowments) == (
        "  - farmer_A (farmer, Farmer A)\n  - farmer_B (farmer, Farmer B)\n"
        "  - roaster_A (roaster, Roaster A)\n  - roaster_B (roaster, Roaster B)\n"
        "  - retailer_A (retailer, Retailer A)\n  - retailer_B (retailer, Retailer B)"
    )


def test_revenue_pressure_formats_the_target_with_thousands() -> None:
    framing = prompts._build_score_framing({"metric": "revenue_pressure", "target_usd": 75000})
    assert framing.startswith("The board has set a hard $75,000 revenue target for this cycle.\n")


def test_unknown_metric_is_the_reference_error() -> None:
    with pytest.raises(ValueError) as info:
        prompts._build_score_framing({"metric": "bogus"})
    assert str(info.value) == (
        "Unknown KPI metric 'bogus'. Valid: net_income | revenue | revenue_pressure | "
        "revenue_max | peer_revenue_max | survival_revenue_pair."
    )


def test_unknown_agent_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown agent"):
        prompts.system_prompt("roaster_C")


def test_texts_ship_with_the_package() -> None:
    """The prompt files are package data (pyproject's ``**/*.txt``), found through the package."""
    folder = resources.files("econbench.coffee.paper").joinpath("texts")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".txt"))
    assert names == [
        "operational_mechanics.txt",
        "score_framing_default.txt",
        "score_framing_peer_revenue_max.txt",
        "score_framing_revenue.txt",
        "score_framing_revenue_max.txt",
        "score_framing_revenue_pressure.txt",
        "score_framing_survival_revenue_pair.txt",
        "system_prompt.txt",
    ]
