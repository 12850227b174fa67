"""PPO policies as checkpoints anyone may load without running pickled code, and the agent that
plays them through the evaluation runner (``hear-gym eval --cell ppo:FOLDER@ACCESS``, or
``ppo_greedy:FOLDER@ACCESS`` for the arg-max action).

A checkpoint is a folder of two files:

* ``policy.safetensors``: the weights of the policy (sb3-contrib's
  ``MaskableMultiInputActorCriticPolicy`` or a subclass; its torch state dict, stored with
  safetensors: tensors only, nothing executable; the RLlib trainer names and shapes its layers
  as the ``mlp`` policy, so both training backends write this file);
* ``policy.json``: what rebuilds the network: ``format``, the env id, access condition and env
  options it was trained on, the ``policy`` class (a name of ``ppo_policies(env_id)``; missing in
  older checkpoints, which are ``mlp``), ``net_arch``, the feature observation's leaf shapes and the
  number of actions (checked against the env on load, so a changed feature layout fails
  loudly), the ``observation_normalization`` the policy was trained with (``{}``, or
  ``clip``, ``epsilon`` and per standardized leaf its ``mean`` and ``var``: the policy sees
  ``clip((x - mean) / sqrt(var + epsilon), -clip, clip)``, as SB3's ``VecNormalize`` computes
  it), the training step and seed, and the provenance of the training run.

SB3's own zip (pickled) is never read here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.training_material import PPOPolicy, training_material
from hear_gym.core.registry import env_ids

CHECKPOINT_FORMAT = "hear_gym-ppo-1"
DEFAULT_POLICY = "mlp"
WEIGHTS_FILE = "policy.safetensors"
CONFIG_FILE = "policy.json"
# the observation leaf that only a training env has: what a policy's critic alone sees
# (agents.training_material.PrivilegedInfo); never in a checkpoint's observation
PRIVILEGED_LEAF = "privileged"


def _mlp_policy():
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy

    return MaskableMultiInputActorCriticPolicy


# "mlp": sb3-contrib's MultiInputPolicy, for every family and both backends
MLP = PPOPolicy(_mlp_policy)


def ppo_policies(env_id: str) -> dict[str, PPOPolicy]:
    """The policy networks of ``env_id`` by name: the shared ``mlp`` and its family's own (its
    training material's ``ppo_policies``; Hear2Act: ``per_option``, ``per_option_listening``)."""
    return {DEFAULT_POLICY: MLP, **training_material(env_id).ppo_policies}


def space_shapes(space: gym.spaces.Dict) -> dict[str, list[int]]:
    """Each leaf's shape, the training-only ``PRIVILEGED_LEAF`` aside (evaluations lack it)."""
    return {key: list(leaf.shape) for key, leaf in space.spaces.items() if key != PRIVILEGED_LEAF}


def save_policy(
    weights: Mapping[str, Any],
    observation_space: gym.spaces.Dict,
    n_actions: int,
    folder: Path,
    meta: dict[str, Any],
) -> Path:
    """Write ``weights`` (torch tensors named and shaped as the state dict of a
    ``MaskableMultiInputActorCriticPolicy`` on the feature observation ``observation_space``) and
    ``meta`` as a checkpoint folder. The spaces are passed, not read from a policy, so a trainer
    other than SB3 (``training.ppo.rllib``) writes the same checkpoint."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().cpu().contiguous() for name, tensor in weights.items()}
    save_file(state, str(folder / WEIGHTS_FILE))
    config = {
        "format": CHECKPOINT_FORMAT,
        **meta,
        "observation_shapes": space_shapes(observation_space),
        "n_actions": int(n_actions),
    }
    (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
    return folder


Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Width = Annotated[int, Field(strict=True, gt=0)]


class _Leaf(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mean: list[Number]
    var: list[Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]]


class _Normalization(BaseModel):
    model_config = ConfigDict(extra="forbid")
    clip: Number
    epsilon: Number
    leaves: dict[str, _Leaf]


class _PolicyConfig(BaseModel):
    """What ``policy.json`` must hold to rebuild its policy; other keys (step, seed, provenance)
    are kept as they are."""

    model_config = ConfigDict(extra="allow")
    env_id: str
    access: str
    env_options: dict[str, Any] = {}
    policy: str = DEFAULT_POLICY
    net_arch: list[Width] | dict[str, list[Width]]
    observation_shapes: dict[str, list[Annotated[int, Field(strict=True, ge=0)]]]
    n_actions: Width
    observation_normalization: dict[str, Any] = {}

    @field_validator("env_id")
    @classmethod
    def _registered(cls, env_id: str) -> str:
        if env_id not in env_ids():
            raise ValueError(f"{env_id!r} is not a hear_gym env (one of {', '.join(env_ids())})")
        return env_id


def _first_problem(exc: ValidationError) -> str:
    """One line from pydantic's report: where in the file, what is wrong."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the file"
    message = error["msg"].removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {message}{more}"


def read_config(folder: Path) -> dict[str, Any]:
    """``policy.json`` of a checkpoint folder, checked: a missing or mistyped field, an env id
    that is not a hear_gym env or statistics that are not numbers are a one-line ``ValueError``
    naming the file."""
    path = Path(folder) / CONFIG_FILE
    if not path.is_file() or not (Path(folder) / WEIGHTS_FILE).is_file():
        raise ValueError(f"{folder} is not a PPO checkpoint (needs {CONFIG_FILE} and {WEIGHTS_FILE})")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(config, dict) or config.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: format must be {CHECKPOINT_FORMAT!r}")
    try:
        _PolicyConfig.model_validate(config)
    except ValidationError as exc:
        raise ValueError(f"{path}: {_first_problem(exc)}") from None
    return config


def load_policy(folder: Path):
    """(policy in eval mode, its config) from a checkpoint folder; the network is rebuilt from the
    JSON and the spaces of the env it names, then the weights are loaded strictly."""
    config = read_config(folder)
    name = config.get("policy", DEFAULT_POLICY)
    policies = ppo_policies(config["env_id"])
    if name not in policies:
        raise ValueError(f"{folder}: unknown policy {name!r}; known: {sorted(policies)}")
    _check_normalization(folder, config)
    try:
        import torch
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        policy_class = policies[name].load()
    except ImportError as exc:
        raise RuntimeError("PPO checkpoints need sb3-contrib: pip install 'hear-gym[train]'") from exc
    try:
        env = gym.make(
            config["env_id"], access=config["access"], observation="features", **config["env_options"]
        )
    except (TypeError, ValueError, gym.error.Error) as exc:
        raise ValueError(
            f"{Path(folder) / CONFIG_FILE}: {config['env_id']} cannot be built with access "
            f"{config['access']!r} and env_options {config['env_options']}: {exc}"
        ) from None
    if (
        space_shapes(env.observation_space) != config["observation_shapes"]
        or env.action_space.n != (config["n_actions"])
    ):
        raise ValueError(
            f"{folder}: the env's feature observation or action space no longer matches the one this "
            "policy was trained on (retrain it with this version of hear_gym)"
        )
    # the initial weights are overwritten below: drawing them must not move the caller's generator
    # (a trainer evaluating its checkpoints samples its actions from it)
    with torch.random.fork_rng(devices=[]):
        policy = policy_class(
            env.observation_space, env.action_space, lambda _: 0.0, net_arch=config["net_arch"]
        )
    env.close()
    weights = Path(folder) / WEIGHTS_FILE
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError) as exc:
        raise ValueError(f"{weights} is not a readable safetensors file ({exc})") from None
    try:
        policy.load_state_dict(state)
    except (RuntimeError, OSError) as exc:
        raise ValueError(
            f"{folder}: the weights do not fit the network the config describes: {exc}"
        ) from None
    policy.set_training_mode(False)
    return policy, config


def _stamp(path: Path) -> tuple[int, int] | None:
    return (path.stat().st_mtime_ns, path.stat().st_size) if path.is_file() else None


@functools.lru_cache(maxsize=8)
def _loaded_policy(folder: Path, stamps: tuple) -> tuple[Any, dict[str, Any]]:
    """``load_policy``, once per checkpoint as its files are now (``stamps``: their times and
    sizes, so a checkpoint written again in place is loaded again)."""
    return load_policy(folder)


def _check_normalization(folder: Path, config: dict[str, Any]) -> None:
    normalization = config.get("observation_normalization") or {}  # older checkpoints: none
    if not normalization:
        return
    if not {"clip", "epsilon", "leaves"} <= set(normalization):
        raise ValueError(f"{folder}: observation_normalization needs clip, epsilon and leaves")
    try:
        checked = _Normalization.model_validate(normalization)
    except ValidationError as exc:
        raise ValueError(
            f"{Path(folder) / CONFIG_FILE}: observation_normalization.{_first_problem(exc)}"
        ) from None
    for key, stats in checked.leaves.items():
        shape = config["observation_shapes"].get(key)
        if not shape or any(len(getattr(stats, name)) != shape[0] for name in ("mean", "var")):
            raise ValueError(f"{folder}: the normalization of leaf {key!r} does not fit its shape {shape}")


def standardized(observation: dict[str, Any], normalization: dict[str, Any]) -> dict[str, Any]:
    """``observation`` as the policy saw it in training: each leaf of ``normalization["leaves"]``
    standardized and clipped as ``VecNormalize`` does."""
    if not normalization:
        return observation
    out = dict(observation)
    clip, epsilon = normalization["clip"], normalization["epsilon"]
    for key, stats in normalization["leaves"].items():
        scaled = (np.asarray(observation[key]) - np.asarray(stats["mean"])) / np.sqrt(
            np.asarray(stats["var"]) + epsilon
        )
        out[key] = np.clip(scaled, -clip, clip)
    return out


class PPOAgent:
    """Plays a PPO checkpoint on the feature observation of the access condition it was trained
    on, as PPO trained it: each action is drawn from the policy's masked distribution, with the
    agent's own generator seeded by ``reset(seed)`` (the runner's per-episode seed), so a run
    replays exactly. ``GreedyPPOAgent`` takes the most likely action instead."""

    observation_format = "features"

    def __init__(self, policy, config: dict[str, Any]) -> None:
        self.policy, self.config = policy, config
        self.required_access = config["access"]
        self.normalization = config.get("observation_normalization") or {}
        self.rng = np.random.default_rng(0)

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> PPOAgent:
        """An agent on the checkpoint at ``path``. The runner builds one per episode: the policy is
        loaded once per process and shared (it only reads its weights), each agent has its own
        generator."""
        folder = Path(path).resolve()
        stamps = tuple(_stamp(folder / name) for name in (CONFIG_FILE, WEIGHTS_FILE))
        return cls(*_loaded_policy(folder, stamps))

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def probabilities(self, observation: dict[str, Any]) -> np.ndarray:
        """The policy's action distribution, invalid actions at zero."""
        import torch

        mask = np.asarray(observation["action_mask"]) > 0
        tensor, _ = self.policy.obs_to_tensor(standardized(observation, self.normalization))
        with torch.no_grad():
            distribution = self.policy.get_distribution(tensor, action_masks=mask[None])
        probs = distribution.distribution.probs[0].double().numpy()
        return probs / probs.sum()

    def act(self, observation: dict[str, Any]) -> int:
        probs = self.probabilities(observation)
        return int(self.rng.choice(len(probs), p=probs))


class GreedyPPOAgent(PPOAgent):
    """The most likely valid action (SB3's ``predict(deterministic=True)``)."""

    def act(self, observation: dict[str, Any]) -> int:
        return int(np.argmax(self.probabilities(observation)))
