"""Statistics every family shares: scenario-level and group bootstrap."""
