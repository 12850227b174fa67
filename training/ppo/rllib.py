"""PPO with Ray RLlib (new API stack): the ``rllib`` backend of ``training.ppo.train.train``, for runs
that need more samplers than one process, or than one machine. Same env, reward, feature
observation, curve and checkpoint format as the sb3 backend. Read top to bottom:

1. ``FlatFeatureEnv``: the env exactly as the sb3 backend trains on it (``make_training_env``:
   feature observation, training split, the finished episode record under ``info[RECORD_KEY]``),
   built by RLlib from ``env_config`` on each env runner. Its measured leaves are standardized
   by the fixed statistics ``training.ppo.envs.measured_statistics`` took before training (the
   sb3 backend keeps running ones); every checkpoint records them. Its observation is flattened
   as SB3's
   ``CombinedExtractor`` flattens it (the Dict leaves in the space's key order, ``action_mask``
   included) under ``"observations"``, with the mask again under ``"action_mask"``.
2. ``MaskedActorCritic``: a ``TorchRLModule`` with ``ValueFunctionAPI`` built, named and
   initialised as sb3-contrib's ``MaskableMultiInputActorCriticPolicy`` (separate tanh MLPs for
   the policy and the value, then ``action_net`` and ``value_net``), invalid actions' logits set
   as ``MaskableCategorical`` sets them. Its weights are therefore an SB3 policy's state dict:
   checkpoints go through ``agents.ppo.save_policy`` and ``hear-gym eval --cell ppo:FOLDER@ACCESS``
   plays them unchanged.
3. ``EpisodeScalars``: an RLlib callback on each env runner that sends every finished episode's
   family scalars to the driver through RLlib's metrics (``item_series``: each episode, no mean).
4. ``ppo_config``: ``PPOSettings`` mapped onto ``PPOConfig``; the PPO settings PPOSettings does not
   expose follow MaskablePPO's defaults where RLlib's differ.
5. ``learn_rllib``: ``algo.train()`` until ``total_steps`` env steps are sampled, a ``train`` row
   per iteration and the evaluations through ``training.ppo.curve.TrainingCurve``. Ray starts
   locally unless ``RAY_ADDRESS`` names a cluster (``ray.init()`` reads it).

With ``env_runners=0`` (sampling in the driver) the same settings and seed give the same curve
and weights (RLlib seeds torch, NumPy and each env runner's envs); RLlib does not promise that
with remote env runners.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from stable_baselines3.common.torch_layers import create_mlp
from torch import nn
from tqdm import tqdm

from agents.ppo import save_policy, standardized
from training.ppo.curve import TrainingCurve, checkpoint_meta, episode_scalars
from training.ppo.envs import RECORD_KEY, make_training_env, measured_statistics
from training.ppo.settings import PPOSettings

EPISODES_METRIC = "hear_gym_episode_scalars"
MASKED_LOGIT = -1e8  # the logit sb3-contrib's MaskableCategorical gives an invalid action
VECTORIZE_MODES = {"dummy": gym.VectorizeMode.SYNC, "subproc": gym.VectorizeMode.ASYNC}
# MaskablePPO's defaults where RLlib's differ, so both backends run the same PPO: GAE lambda,
# clip range, value loss weight, gradient norm clip; no KL penalty and no value loss clipping.
SB3_PPO_DEFAULTS = {
    "lambda_": 0.95,
    "clip_param": 0.2,
    "vf_loss_coeff": 0.5,
    "grad_clip": 0.5,
    "use_kl_loss": False,
    "vf_clip_param": math.inf,
}


# -- 1. the env ------------------------------------------------------------------------------
class FlatFeatureEnv(gym.ObservationWrapper):
    """What RLlib builds from ``env_config`` (``env_id``, ``access``, ``env_options``,
    ``normalization``: ``measured_statistics`` or ``{}``)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(make_training_env(config["env_id"], config["access"], config["env_options"]))
        self.normalization = config["normalization"]
        leaves = dict(self.env.observation_space.spaces)
        for key in self.normalization.get("leaves", {}):  # standardized leaves lie within +-clip
            clip = self.normalization["clip"]
            leaves[key] = gym.spaces.Box(-clip, clip, leaves[key].shape, np.float32)
        if not all(isinstance(leaf, gym.spaces.Box) for leaf in leaves.values()):
            raise ValueError(f"{config['env_id']}: the rllib backend flattens Box feature leaves only")
        self.keys = list(leaves)  # the order SB3's CombinedExtractor concatenates them in
        flat = gym.spaces.Box(
            np.concatenate([leaves[k].low.ravel() for k in self.keys]).astype(np.float32),
            np.concatenate([leaves[k].high.ravel() for k in self.keys]).astype(np.float32),
            dtype=np.float32,
        )
        self.observation_space = gym.spaces.Dict({"observations": flat, "action_mask": leaves["action_mask"]})

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        observation = standardized(observation, self.normalization)
        flat = np.concatenate([np.asarray(observation[k], dtype=np.float32).ravel() for k in self.keys])
        return {"observations": flat, "action_mask": observation["action_mask"]}


# -- 2. the policy -----------------------------------------------------------------------------
def _tanh_mlp(width: int, net_arch: list[int]) -> nn.Sequential:
    """Linear + tanh per size, as SB3's ``MlpExtractor`` builds each of its two networks."""
    return nn.Sequential(*create_mlp(width, 0, net_arch, nn.Tanh))


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """``model_config``: ``{"net_arch": [sizes]}``, as SB3's ``net_arch`` list."""

    def setup(self) -> None:
        width = self.observation_space["observations"].shape[0]
        net_arch = list(self.model_config["net_arch"])
        latent = net_arch[-1] if net_arch else width
        self.mlp_extractor = nn.ModuleDict(
            {"policy_net": _tanh_mlp(width, net_arch), "value_net": _tanh_mlp(width, net_arch)}
        )
        self.action_net = nn.Linear(latent, self.action_space.n)
        self.value_net = nn.Linear(latent, 1)
        # SB3's orthogonal initialisation, so an untrained policy starts as the sb3 backend's does
        for part, gain in (
            (self.mlp_extractor, math.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ):
            for layer in part.modules():
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight, gain=gain)
                    nn.init.zeros_(layer.bias)

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        logits = self.action_net(self.mlp_extractor["policy_net"](observation["observations"]))
        masked = logits.masked_fill(observation["action_mask"] <= 0, MASKED_LOGIT)
        return {Columns.ACTION_DIST_INPUTS: masked}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        latent = self.mlp_extractor["value_net"](batch[Columns.OBS]["observations"])
        return self.value_net(latent).squeeze(-1)


# -- 3. training episodes for the curve -------------------------------------------------------
class EpisodeScalars(RLlibCallback):
    def on_episode_end(self, *, episode, env_runner, metrics_logger, **kwargs) -> None:
        record = episode.get_infos(-1).get(RECORD_KEY)
        if record is not None:
            scalars = episode_scalars(env_runner.config.env_config["env_id"])(record)
            metrics_logger.log_value(EPISODES_METRIC, scalars, reduce="item_series")


# -- 4. the configuration ----------------------------------------------------------------------
def ppo_config(settings: PPOSettings, normalization: dict[str, Any]) -> PPOConfig:
    env_config = {
        "env_id": settings.env_id,
        "access": settings.access,
        "env_options": settings.training_env_options(),
        "normalization": normalization,
    }
    return (
        PPOConfig()
        .environment(FlatFeatureEnv, env_config=env_config)
        .env_runners(
            num_env_runners=settings.env_runners,
            num_envs_per_env_runner=settings.n_envs,
            gym_env_vectorize_mode=VECTORIZE_MODES[settings.vec_env],
        )
        .training(
            train_batch_size_per_learner=settings.n_steps * settings.n_envs,
            minibatch_size=settings.batch_size,
            num_epochs=settings.n_epochs,
            lr=settings.learning_rate,
            gamma=settings.gamma,
            entropy_coeff=settings.ent_coef,
            **SB3_PPO_DEFAULTS,
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=MaskedActorCritic, model_config={"net_arch": list(settings.net_arch)}
            )
        )
        .callbacks(EpisodeScalars)
        .debugging(seed=settings.seed)
    )


# -- 5. the whole job --------------------------------------------------------------------------
def save_checkpoint(
    algo,
    settings: PPOSettings,
    spaces: tuple[gym.spaces.Dict, int],
    normalization: dict[str, Any],
    folder: Path,
    step: int,
) -> Path:
    """The learner's current weights as an ``agents.ppo`` checkpoint; ``spaces``: the feature
    observation space and the number of actions; ``normalization``: what the envs standardize by."""
    weights = algo.learner_group.get_weights([DEFAULT_MODULE_ID])[DEFAULT_MODULE_ID]
    tensors = {name: torch.from_numpy(np.asarray(array)) for name, array in weights.items()}
    meta = checkpoint_meta(settings, step, "RLlib PPO", ("torch", "ray"), normalization)
    return save_policy(tensors, *spaces, folder, meta)


def learn_rllib(settings: PPOSettings, wandb_run) -> dict[str, Any]:
    """Train with RLlib's PPO, writing the curve; the final checkpoint's metrics."""
    started = not ray.is_initialized()
    if started:  # a local instance, unless RAY_ADDRESS names a cluster
        ray.init(include_dashboard=False, log_to_driver=False)
    try:
        return _train(settings, wandb_run)
    finally:
        if started:
            ray.shutdown()


def _train(settings: PPOSettings, wandb_run) -> dict[str, Any]:
    # the spaces a checkpoint records, read here: the env runners may be on other machines
    with make_training_env(settings.env_id, settings.access, settings.training_env_options()) as env:
        spaces = (env.observation_space, int(env.action_space.n))
    normalization = measured_statistics(settings)
    algo = ppo_config(settings, normalization).build_algo()
    save = functools.partial(save_checkpoint, algo, settings, spaces, normalization)
    curve = TrainingCurve(settings, save, wandb_run)
    step = 0
    try:
        with tqdm(total=settings.total_steps, unit="step", disable=not settings.progress) as progress:
            while step < settings.total_steps:
                results = algo.train()[ENV_RUNNER_RESULTS]
                for scalars in results.get(EPISODES_METRIC, []):
                    curve.add_episode(scalars)
                sampled = int(results[NUM_ENV_STEPS_SAMPLED_LIFETIME])
                progress.update(sampled - step)
                step = sampled
                curve.end_rollout(step)
                curve.evaluate_if_due(step)
        return curve.evaluate("final", step)
    finally:
        algo.stop()
