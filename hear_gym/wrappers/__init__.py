"""Access conditions and other behaviour layered over the envs as Gymnasium wrappers."""

from hear_gym.wrappers.access import ACCESS_CONDITIONS, ConcernStateTag, apply_access
from hear_gym.wrappers.text_actions import TextActions

__all__ = ["ACCESS_CONDITIONS", "ConcernStateTag", "TextActions", "apply_access"]
