"""Onset contrast groups: authored families and deliveries (``data/``), the model and the generator."""
