"""Policies that act in hear_gym envs. They read observations only, never ``info``."""
