"""Playing episodes: the runner that drives any actor through any framing, and the scripted
actors that put a reference policy behind the one actor protocol."""
