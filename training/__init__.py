"""Trainers and the tiny offline model builder."""
