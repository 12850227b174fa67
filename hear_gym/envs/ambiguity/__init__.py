"""Ambiguity (C3): the same words, said differently or heard in a different context, call for a
different answer, in English and Mandarin. See ``env.py``."""
