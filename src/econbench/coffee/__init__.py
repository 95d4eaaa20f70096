"""CoffeeBench: a 90-day, six-firm coffee supply-chain economy."""
