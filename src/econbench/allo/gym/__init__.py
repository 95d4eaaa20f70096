"""Gymnasium environments for post-training (docs/allobench.md §6), their vectorised
features game, and the PPO yardstick trained on them."""
