"""Every constant of the economy, and what a world needs to play, as validated pydantic models.

Defaults are the paper's economy (docs/coffeebench.md §1–§9). A TOML file can override any of
them under ``[economy]``; unknown keys and wrong types are rejected with the key's full
path, so a typo never silently runs the default economy. Every number has a finite range
(TOML can spell ``inf`` and ``nan``), and paired values their order, so a config that
validates cannot crash a run midway.

Nothing here knows about models: the settings of a model that plays a firm belong to the run
layer (``econbench.runs.coffee.config.RunConfig``, which extends :class:`WorldConfig`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from econbench.suggest import did_you_mean

Role = Literal["farmer", "roaster", "retailer"]

GREEN = "green_coffee_kg"
GREEN_SPECIALTY = "green_specialty_kg"
ROASTED = "roasted_coffee_kg"
ROASTED_SPECIALTY = "roasted_specialty_kg"
ITEMS: tuple[str, ...] = (GREEN, GREEN_SPECIALTY, ROASTED, ROASTED_SPECIALTY)
GREEN_ITEMS = (GREEN, GREEN_SPECIALTY)
RETAIL_ITEMS = (ROASTED, ROASTED_SPECIALTY)
ROAST_OUTPUT = {GREEN: ROASTED, GREEN_SPECIALTY: ROASTED_SPECIALTY}

FIRMS: tuple[str, ...] = (
    "farmer_A",
    "farmer_B",
    "roaster_A",
    "roaster_B",
    "retailer_A",
    "retailer_B",
)
"""The canonical firm order: apply order of simultaneous actions, sales loop, draws."""

FOCAL_FIRM = "roaster_A"
PROMPT_VARIANTS: tuple[str, ...] = ("standard", "revenue_pressure")


MAX_MONEY = 1e9
"""Dollars: the most a firm may start with or pay per day (beyond it cents lose meaning)."""
MAX_PRICE = 1e6
"""Dollars per kg: the most any unit cost, price or ceiling may be."""
MAX_KG = 1_000_000
MAX_DAYS = 10_000
MAX_FACTOR = 100.0
MINUTES_PER_DAY = 24 * 60
MAX_SEED = 2**63 - 1

Money = Annotated[float, Field(ge=0, le=MAX_MONEY, allow_inf_nan=False)]
UnitCost = Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
Price = Annotated[float, Field(gt=0, le=MAX_PRICE, allow_inf_nan=False)]
Kg = Annotated[int, Field(ge=0, le=MAX_KG)]
KgRate = Annotated[float, Field(ge=0, le=MAX_KG, allow_inf_nan=False)]
Day = Annotated[int, Field(ge=0, le=MAX_DAYS)]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Factor = Annotated[float, Field(gt=0, le=MAX_FACTOR, allow_inf_nan=False)]


def role_of(firm_id: str) -> Role:
    return firm_id.split("_", 1)[0]  # type: ignore[return-value]


class Strict(BaseModel):
    """No unknown keys, and no conversions: ``days = 2.0``, ``seed = true`` or ``cash = "5"``
    in a TOML file is refused, not read as 2, 1 or 5.0 (an integer is still a float)."""

    model_config = ConfigDict(extra="forbid", validate_default=True, strict=True)


class RoleConfig(Strict):
    """Endowment and running cost of every firm of one role."""

    cash: Money = 15_000.0
    start_item: str
    start_qty: Kg
    start_unit_cost: UnitCost
    inventory_cap: int = Field(gt=0, le=MAX_KG)
    opex_per_day: Money

    @model_validator(mode="after")
    def _check_cap(self) -> RoleConfig:
        if self.start_qty > self.inventory_cap:
            raise ValueError(
                f"start_qty ({self.start_qty}) exceeds inventory_cap ({self.inventory_cap})"
            )
        return self


class ProductionConfig(Strict):
    """A farm's production of one green item: unit cost, daily cap per farm, lag in days."""

    unit_cost: Price
    daily_cap: int = Field(gt=0, le=MAX_KG)
    lag_days: int = Field(ge=1, le=MAX_DAYS)


class RoastConfig(Strict):
    """Roasting one green item: labour per kg of green and the yield of roasted kg."""

    labour_per_kg: UnitCost
    yield_: float = Field(alias="yield", gt=0, le=1, allow_inf_nan=False)
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DemandConfig(Strict):
    """Consumer demand for one retail item (docs/coffeebench.md §7)."""

    reservation_price: Price
    base_demand: KgRate
    floor_kg: Kg


class EconomyConfig(Strict):
    """All constants of the economy; the defaults are the paper's."""

    farmer: RoleConfig = RoleConfig(
        start_item=GREEN, start_qty=60, start_unit_cost=2.0, inventory_cap=120, opex_per_day=25
    )
    roaster: RoleConfig = RoleConfig(
        start_item=ROASTED, start_qty=30, start_unit_cost=5.88, inventory_cap=120, opex_per_day=30
    )
    retailer: RoleConfig = RoleConfig(
        start_item=ROASTED, start_qty=25, start_unit_cost=10.0, inventory_cap=80, opex_per_day=50
    )
    start_retail_prices: dict[str, Price] = {ROASTED: 18.0, ROASTED_SPECIALTY: 50.0}

    production: dict[str, ProductionConfig] = {
        GREEN: ProductionConfig(unit_cost=2.0, daily_cap=30, lag_days=2),
        GREEN_SPECIALTY: ProductionConfig(unit_cost=10.0, daily_cap=10, lag_days=2),
    }
    roasting: dict[str, RoastConfig] = {
        GREEN: RoastConfig(labour_per_kg=3.0, yield_=0.85),
        GREEN_SPECIALTY: RoastConfig(labour_per_kg=5.0, yield_=0.82),
    }
    roast_daily_cap_kg: int = Field(50, gt=0, le=MAX_KG)
    roast_lag_days: int = Field(1, ge=1, le=MAX_DAYS)
    shipping_days: int = Field(1, ge=1, le=MAX_DAYS)

    demand: dict[str, DemandConfig] = {
        ROASTED: DemandConfig(reservation_price=30.0, base_demand=80.0, floor_kg=5),
        ROASTED_SPECIALTY: DemandConfig(reservation_price=80.0, base_demand=15.0, floor_kg=1),
    }
    demand_noise_sd: KgRate = 0.5
    demand_cap_per_80: float = Field(130.0, gt=0, le=MAX_KG, allow_inf_nan=False)
    """The pool is capped at f · demand_cap_per_80 · d0 / 80 (docs/coffeebench.md §7, step 3)."""
    # A pair is a list in TOML and JSON: the pair is converted, its numbers stay strict.
    festival_days: tuple[Day, Day] = Field((40, 53), strict=False)
    festival_factor: Factor = 3.0
    loyalty_range: tuple[Factor, Factor] = Field((0.85, 1.15), strict=False)

    ship_loss_prob: Share = 0.015
    ship_delay_prob: Share = 0.07

    late_fee_rate: Share = 0.001
    """Per day, on the outstanding amount."""
    return_window_days: Day = 14
    spoilage_rate: Share = 0.005
    writedown_ceiling: dict[str, Price] = {
        GREEN: 22.50,
        GREEN_SPECIALTY: 60.60,
        ROASTED: 30.0,
        ROASTED_SPECIALTY: 80.0,
    }

    day_start_minute: int = Field(9 * 60, ge=0, le=MINUTES_PER_DAY)
    day_end_minute: int = Field(19 * 60, ge=0, le=MINUTES_PER_DAY)
    minutes_per_tool: int = Field(30, gt=0, le=MINUTES_PER_DAY)
    max_payment_terms_days: Day = 90
    max_price_per_kg: Price = 1_000.0
    """Prices above this are rejected as absurd (a typo or an exploit, not a strategy)."""
    max_title_chars: int = Field(80, gt=0, le=10_000)
    max_body_chars: int = Field(4_000, gt=0, le=1_000_000)

    @model_validator(mode="after")
    def _check_items(self) -> EconomyConfig:
        for name, mapping, expected in (
            ("production", self.production, GREEN_ITEMS),
            ("roasting", self.roasting, GREEN_ITEMS),
            ("demand", self.demand, RETAIL_ITEMS),
            ("start_retail_prices", self.start_retail_prices, RETAIL_ITEMS),
            ("writedown_ceiling", self.writedown_ceiling, ITEMS),
        ):
            if set(mapping) != set(expected):
                raise ValueError(f"{name} must have exactly the items {list(expected)}")
        for role in ("farmer", "roaster", "retailer"):
            if getattr(self, role).start_item not in ITEMS:
                raise ValueError(f"{role}.start_item must be one of {list(ITEMS)}")
        lo, hi = self.festival_days
        if lo > hi:
            raise ValueError("festival_days must be [first, last] with first <= last")
        low, high = self.loyalty_range
        if low > high:
            raise ValueError("loyalty_range must be [low, high] with low <= high")
        for item, price in self.start_retail_prices.items():
            if price > self.max_price_per_kg:
                raise ValueError(
                    f"start_retail_prices.{item} ({price}) exceeds max_price_per_kg "
                    f"({self.max_price_per_kg})"
                )
        if self.day_end_minute - self.day_start_minute < self.minutes_per_tool:
            raise ValueError("the business day is shorter than one tool call")
        if self.ship_loss_prob + self.ship_delay_prob > 1:
            raise ValueError("ship_loss_prob + ship_delay_prob must not exceed 1")
        return self

    def role(self, role: str) -> RoleConfig:
        return getattr(self, role)

    @property
    def actions_per_day(self) -> int:
        return (self.day_end_minute - self.day_start_minute) // self.minutes_per_tool


DEFAULT_BACKGROUND = "bargaining"
"""The offline background of every firm no config names (``policies.bargaining``); runs
record it in their config, so an old run (``negotiating``) reads as what it was."""


class WorldConfig(Strict):
    """One CoffeeBench world: seed, length, who plays each firm, and the economy."""

    seed: int = Field(0, ge=0, le=MAX_SEED)
    days: int = Field(90, ge=1, le=MAX_DAYS)
    agents: dict[str, str] = {"default": DEFAULT_BACKGROUND, FOCAL_FIRM: "heuristic"}
    """Who plays each firm: a scripted policy's name, or a model's (``provider/model``),
    whose policy the run layer builds. The offline background is the bargaining one (prices
    set by each firm's market and its concession schedule, counters, messages);
    ``negotiating`` (hidden valuations a proposer can bisect) and ``scripted`` are the
    earlier ones, kept by name for old results."""
    prompts: dict[str, str] = {}
    """Per firm, the system-prompt variant of a model-driven agent (standard, revenue_pressure)."""
    economy: EconomyConfig = EconomyConfig()

    @model_validator(mode="after")
    def _check_agents(self) -> WorldConfig:
        if "default" not in self.agents:  # recorded, so a run's config names its background
            self.agents = {"default": DEFAULT_BACKGROUND, **self.agents}
        for key in self.agents:
            if key != "default" and key not in FIRMS:
                raise ValueError(
                    f"unknown firm '{key}'{did_you_mean(key, (*FIRMS, 'default'))} "
                    f"(firms: {', '.join(FIRMS)}, or 'default')"
                )
        for key, variant in self.prompts.items():
            if key not in FIRMS:
                raise ValueError(f"prompts: unknown firm '{key}' (firms: {', '.join(FIRMS)})")
            if variant not in PROMPT_VARIANTS:
                raise ValueError(
                    f"prompts.{key}: unknown variant '{variant}' "
                    f"(choose one of {', '.join(PROMPT_VARIANTS)})"
                )
        return self

    def policy_for(self, firm_id: str) -> str:
        return self.agents.get(firm_id) or self.agents.get("default", DEFAULT_BACKGROUND)


def is_model(name: str) -> bool:
    """A slash means a model (``provider/model``); the model registry validates the rest."""
    return "/" in name


class ConfigError(ValueError):
    """A configuration problem, phrased for the person who wrote the config."""


def format_validation(exc: ValidationError, prefix: str = "") -> str:
    """A pydantic error as one line: each problem with the key's full path and the value."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if p != "__root__")
        key = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "config"
        if err["type"] == "extra_forbidden":
            lines.append(f"unknown key '{key}'")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            if any("key" in str(part).lower() for part in err["loc"]):
                # A key pasted where its variable's name belongs must not reach a terminal
                # or a CI log: the message says what is wrong without the value.
                lines.append(f"'{key}': {msg} (value not shown)")
                continue
            got = repr(err.get("input"))
            got = got if len(got) <= 80 else got[:79] + "…"
            lines.append(f"'{key}': {msg} (got {got})")
    return "; ".join(lines)
