"""Reference policies (docs/allobench.md §3): scripted players with exactly an agent's
information, the exact posterior over the hidden hot set, and the Bellman-optimal ``bayes``."""
