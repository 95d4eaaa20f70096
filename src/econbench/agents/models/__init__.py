"""Model providers behind one ``generate(messages, tools, config) -> ModelOutput``."""
