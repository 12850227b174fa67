"""Onset (PACT-SLM): when does partial speech license an action? See ``env.py``."""
