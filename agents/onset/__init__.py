"""Onset agents: the matched controls and the frozen-representation probes of PACT-SLM."""
