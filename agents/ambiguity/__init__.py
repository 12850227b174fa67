"""Agents for Ambiguity-v0: random and text-only baselines, the judge, the chat agent and the training material."""
