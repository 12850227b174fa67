"""``hear-gym`` command line (``hear_gym.cli:app``)."""

from hear_gym.cli.app import app

__all__ = ["app"]
