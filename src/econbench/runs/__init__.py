"""The run layer: run directories and their files (later: resume, sweeps, reports)."""
