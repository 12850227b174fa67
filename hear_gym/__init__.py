"""hear_gym: Gymnasium environments for spoken agents that must listen before they act."""

from hear_gym.core.registry import register_envs
from hear_gym.envs.registration import ENV_IDS

__version__ = "0.1.0"

register_envs()

__all__ = ["ENV_IDS", "__version__"]
