"""Ambiguity items: typed instances and their deterministic generator."""
