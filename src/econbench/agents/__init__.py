"""The agent layer shared by both benchmarks: tools, policies, (later) model providers."""
