"""Generic wrappers every family can use (no family imports here)."""
