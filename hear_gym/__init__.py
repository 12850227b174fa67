"""hear_gym: Gymnasium environments for spoken agents that must listen before they act."""

from hear_gym.core.registry import register_envs
from hear_gym.envs.registration import ENV_IDS

__version__ = "0.1.0"

register_envs()


def load_environment(env: str = "hear_gym/Hear2Act-v0", access: str | None = None, **options):
    """verifiers' entry point (``vf.load_environment("hear-gym", env=..., access=...)``,
    ``vf-eval hear-gym``): the registered env ``env`` as a verifiers environment
    (``hear_gym.integrations.verifiers``; needs ``pip install 'hear-gym[verifiers]'``)."""
    from hear_gym.integrations.verifiers import load_environment as load

    return load(env=env, access=access, **options)


__all__ = ["ENV_IDS", "__version__", "load_environment"]
