"""The AlloBench paper's reproduction: its conditions byte for byte, its published numbers,
what each stored run folder is, and the replay of its stored R3 sessions."""
