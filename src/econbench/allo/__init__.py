"""AlloBench: online tool allocation under a build budget."""
