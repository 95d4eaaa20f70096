"""What the no-gaming rules change in ordinary runs, seeds 0-2, 90 days (docs/coffeebench.md,
"A score that cannot be gamed" and "Offline scores and the paper's scale"):

- the heuristic roaster_A's closing write-down and net income under the default background;
- kg spoiled in transit in those runs;
- the heuristic roaster's effective roast yield (output kg / green kg), to compare with 85 %;
- the average price per kg of regular green that roaster_A paid, negotiating by message
  (``haggle``) against taking asks (``scripted``).

    python benchmarks/coffee_rules.py
"""

from __future__ import annotations

from econbench.coffee.config import GREEN
from econbench.coffee.events import MemorySink
from econbench.coffee.sim import CoffeeRun
from econbench.runs.coffee.config import RunConfig

SEEDS = (0, 1, 2)


def run(seed: int, roaster: str) -> tuple[CoffeeRun, MemorySink]:
    sink = MemorySink()
    run = CoffeeRun(
        RunConfig(seed=seed, agents={"default": "negotiating", "roaster_A": roaster}), sink=sink
    )
    run.run()
    return run, sink


def green_price(run: CoffeeRun) -> float:
    deals = [
        d
        for d in run.world.state.deals.values()
        if d.buyer == "roaster_A" and d.status == "delivered" and d.item == GREEN
    ]
    kg = sum(d.shipped_qty for d in deals)
    return sum(d.shipped_qty * d.price for d in deals) / 100 / kg if kg else float("nan")


def main() -> None:
    print("seed  heuristic net   closing w/d  transit kg  roast yield  green $/kg haggle  scripted")
    for seed in SEEDS:
        heuristic, sink = run(seed, "heuristic")
        books = heuristic.world.firm("roaster_A").books
        transit = sum(d.spoiled_qty for d in heuristic.world.state.deals.values())
        roasts = [e for e in sink.events if e["type"] == "roast" and e["firm"] == "roaster_A"]
        green = sum(e["green_qty"] for e in roasts)
        roasted = sum(e["qty"] for e in roasts)
        haggle, _ = run(seed, "haggle")
        scripted, _ = run(seed, "scripted")
        print(
            f"{seed:4d}  {books.net_income / 100:13,.2f}  {books.closing_writedown / 100:11,.2f}"
            f"  {transit:10d}  {roasted / green:11.2%}  {green_price(haggle):17.3f}"
            f"  {green_price(scripted):8.3f}"
        )


if __name__ == "__main__":
    main()
