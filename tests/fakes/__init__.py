"""Local fake model servers that speak each provider's wire protocol (tests only); ``FAKES``
in ``tests.fakes.providers`` says which one stands in for which provider."""
