"""Hear2Act policies: rule baselines, shortcut attacks, audio probes, LLM agents."""
