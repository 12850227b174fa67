"""Onset contrast groups: authored domains and deliveries (``data/``), the model and the generator."""
