"""hear_gym: Gymnasium environments for spoken agents that must listen before they act."""

from hear_gym.envs.registration import ENV_IDS, register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["ENV_IDS", "__version__"]
