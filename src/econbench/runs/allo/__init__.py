"""AlloBench in the run layer: how its cells are started, resumed, read and shown."""
