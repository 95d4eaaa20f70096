"""Local fake model servers that speak each provider's wire protocol (tests only)."""
