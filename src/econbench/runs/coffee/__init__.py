"""CoffeeBench in the run layer: how its runs are started, resumed, read and shown."""
