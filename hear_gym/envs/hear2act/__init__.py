"""Hear2Act: multi-turn recommendation dialogue with hidden prioritized concerns (arXiv:2608.19515)."""
