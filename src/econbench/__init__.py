"""econbench: CoffeeBench and AlloBench, benchmarks of LLM agents making economic decisions."""

__version__ = "0.1.0"
