"""The envs PPO trains on (step 2 of ``training.ppo.train``): one training env
(``make_training_env``: feature observation, training split, the finished episode record under
``info[RECORD_KEY]``), ``n_envs`` of them vectorized (``make_vec_env``), and the standardization
of their measured leaves: SB3's ``VecNormalize`` with running statistics (``normalization_stats``
reads them for a checkpoint) or fixed statistics measured before training
(``measured_statistics``, the rllib backend's). Each training env remembers how its current
episode began and the actions since (``EpisodeReplay``), so a resumed run rebuilds it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

from agents.ppo import PRIVILEGED_LEAF, ppo_policies
from agents.training_material import PrivilegedInfo
from hear_gym.wrappers.episode_record import EPISODE_RECORD_KEY, MoveEpisodeRecord

RECORD_KEY = EPISODE_RECORD_KEY
VEC_ENVS = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}
UNBOUNDED = 1e4  # the feature observations bound leaves of raw measurements by +-1e4
CLIP_OBS = 10.0  # standardized measurements are clipped to +-10 (VecNormalize's default)
EPSILON = 1e-8  # added to the variance before its square root (VecNormalize's default)
STATS_STEPS = 2_048  # env steps that measure the rllib backend's fixed standardization


class EnvSettings(Protocol):
    """What building the training envs reads of ``training.ppo.settings.PPOSettings`` (a protocol,
    so the settings module can use these envs to check itself)."""

    env_id: str
    access: str
    vec_env: str
    n_envs: int
    normalize_observation: bool
    gamma: float
    seed: int
    policy: str

    def training_env_options(self) -> dict[str, Any]: ...


def make_training_env(
    env_id: str, access: str, env_options: dict[str, Any], privileged: PrivilegedInfo | None = None
) -> gym.Env:
    env = gym.make(
        env_id, access=access, observation="features", split="train", disable_env_checker=True, **env_options
    )
    if privileged is not None:
        env = PrivilegedObservation(env, privileged)
    return EpisodeReplay(Monitor(MoveEpisodeRecord(env, RECORD_KEY)))


class PrivilegedObservation(gym.Wrapper):
    """Adds ``PRIVILEGED_LEAF``: what the policy's critic alone sees, encoded from the step's
    ``info`` (``PrivilegedInfo``; training envs only)."""

    def __init__(self, env: gym.Env, privileged: PrivilegedInfo) -> None:
        super().__init__(env)
        self.privileged = privileged
        leaf = gym.spaces.Box(0.0, 1.0, (privileged.size,), np.float32)
        self.observation_space = gym.spaces.Dict({**env.observation_space.spaces, PRIVILEGED_LEAF: leaf})

    def _with_leaf(self, observation: dict, info: dict) -> dict:
        return {**observation, PRIVILEGED_LEAF: np.asarray(self.privileged.encode(info), np.float32)}

    def reset(self, **kwargs):
        observation, info = self.env.reset(**kwargs)
        return self._with_leaf(observation, info), info

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._with_leaf(observation, info), reward, terminated, truncated, info


class EpisodeReplay(gym.Wrapper):
    """Remembers how the current episode began (the reset's seed, or the state of the env's
    generator before an unseeded reset) and the actions taken since, as JSON-able data.

    An env's inner state mid-episode (its scenario, its simulated user) cannot be saved as data,
    but it follows from those: ``replay`` in a fresh env plays the same episode up to the same
    point, as the envs draw everything from their own generator (``np_random``)."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        rng = None if seed is not None else self.env.np_random.bit_generator.state
        self.start = {"seed": seed, "options": options, "rng": rng}
        self.actions: list[int] = []
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        self.actions.append(int(action))
        return self.env.step(action)

    def episode_so_far(self) -> dict[str, Any]:
        return {**self.start, "actions": list(self.actions)}

    def replay(self, episode: dict[str, Any]):
        """Play ``episode`` (an ``episode_so_far``) again; the observation it reaches."""
        if episode["rng"] is not None:
            bit_generator = getattr(np.random, episode["rng"]["bit_generator"])()
            bit_generator.state = episode["rng"]
            self.env.np_random = np.random.Generator(bit_generator)
        observation, _ = self.reset(seed=episode["seed"], options=episode["options"])
        for action in episode["actions"]:
            observation, *_ = self.step(action)
        return observation


def measured_leaves(space: gym.spaces.Dict) -> list[str]:
    """Leaves of raw measurements in physical units (semitones, dB, seconds): the Boxes a feature
    observation leaves unbounded both ways."""
    return [
        key
        for key, leaf in space.spaces.items()
        if np.all(leaf.low <= -UNBOUNDED) and np.all(leaf.high >= UNBOUNDED)
    ]


def make_vec_env(settings: EnvSettings):
    """The training envs; with ``normalize_observation``, under a ``VecNormalize`` that
    standardizes the measured leaves (rewards stay as the env gives them)."""
    privileged = ppo_policies(settings.env_id)[settings.policy].privileged
    build = functools.partial(
        make_training_env, settings.env_id, settings.access, settings.training_env_options(), privileged
    )
    if settings.vec_env == "subproc":
        build = functools.partial(_in_one_thread, build)
    envs = VEC_ENVS[settings.vec_env]([build] * settings.n_envs)
    measured = measured_leaves(envs.observation_space)
    if not (settings.normalize_observation and measured):
        return envs
    return VecNormalize(
        envs,
        norm_obs_keys=measured,
        norm_reward=False,
        clip_obs=CLIP_OBS,
        epsilon=EPSILON,
        gamma=settings.gamma,
    )


def normalization_stats(envs: VecNormalize | None) -> dict[str, Any]:
    """The ``observation_normalization`` a checkpoint records (``agents.ppo``): ``{}`` without a
    ``VecNormalize``, else its clip, epsilon and each standardized leaf's running mean and
    variance."""
    if envs is None:
        return {}
    leaves = {key: {"mean": rms.mean.tolist(), "var": rms.var.tolist()} for key, rms in envs.obs_rms.items()}
    return {"clip": float(envs.clip_obs), "epsilon": float(envs.epsilon), "leaves": leaves}


def measured_statistics(settings: EnvSettings, steps: int = STATS_STEPS) -> dict[str, Any]:
    """A fixed ``observation_normalization`` (``normalization_stats``' format): each measured
    leaf's mean and variance over ``steps`` steps of one training env under a uniformly random
    valid action, seeded by ``settings.seed``. The rllib backend standardizes with it for the
    whole run, so every env runner, on any machine, standardizes alike without synchronizing
    running statistics. ``{}`` without measured leaves or with ``normalize_observation`` off."""
    with make_training_env(settings.env_id, settings.access, settings.training_env_options()) as env:
        measured = measured_leaves(env.observation_space)
        if not (settings.normalize_observation and measured):
            return {}
        rng = np.random.default_rng(settings.seed)
        seen: dict[str, list[np.ndarray]] = {key: [] for key in measured}
        observation, _ = env.reset(seed=settings.seed)
        for _ in range(steps):
            for key in measured:
                seen[key].append(np.asarray(observation[key], dtype=np.float64))
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            observation, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                observation, _ = env.reset()
    leaves = {
        key: {"mean": np.mean(rows, 0).tolist(), "var": np.var(rows, 0).tolist()}
        for key, rows in seen.items()
    }
    return {"clip": CLIP_OBS, "epsilon": EPSILON, "leaves": leaves}


def _in_one_thread(build: Callable[[], gym.Env]) -> gym.Env:
    """A SubprocVecEnv worker's env, the worker process computing on one thread for good."""
    import threadpoolctl

    threadpoolctl.threadpool_limits(1)
    return build()
