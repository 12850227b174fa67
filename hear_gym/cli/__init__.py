"""``hear-gym`` command line: the app is ``hear_gym.cli.app:app``."""
