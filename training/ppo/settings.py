"""Step 1 of ``training.ppo.train``: ``PPOSettings``, everything one PPO run is, checked when it is made
(before anything is written): the env (id, access condition, ``gym.make`` options), PPO's
hyperparameters, the policy network, evaluations, the backend and the device; the output folder,
the seed, W&B and progress bars are every trainer's (``training.run_settings.RunSettings``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.device import resolve_device
from agents.ppo import DEFAULT_POLICY, ppo_policies, read_config
from agents.training_material import default_env
from hear_gym.core.registry import family
from training.ppo.envs import VEC_ENVS, make_training_env, measured_leaves
from training.run_settings import RunSettings

BACKEND_NAMES = ("sb3", "rllib")  # training.ppo.train.BACKENDS loads each


@dataclass(kw_only=True)
class PPOSettings(RunSettings):
    # a registered env; None: the family that declares itself PPO's default (its material's
    # default_for names ppo_policies)
    env_id: str | None = None
    access: str = "T"
    env_options: dict[str, Any] = field(default_factory=dict)  # gym.make kwargs: feedback, reward, ...
    # gym.make kwargs of the training envs only, never of the evaluations (Hear2Act:
    # hidden_users="resample", so a policy cannot learn the training scenarios' golds by heart)
    train_env_options: dict[str, Any] = field(default_factory=dict)
    total_steps: int = 20_000
    n_envs: int = 4
    vec_env: str = "dummy"
    n_steps: int = 128  # per env and rollout
    batch_size: int = 128
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.99
    ent_coef: float = 0.01
    net_arch: tuple[int, ...] = (64, 64)
    policy: str = "mlp"  # a name of agents.ppo.ppo_policies(env_id); "per_option": Hear2Act's option scorer
    eval_every: int = 10_000  # steps; 0: only after training
    eval_split: str = "test"
    eval_limit: int | None = None  # first N held-out episodes
    # copy the evaluated checkpoint with the best held-out return to checkpoints/best at the end
    # (curve.best_evaluated); choose on eval_split="dev" so the test report stays untouched
    keep_best: bool = False
    backend: str = "sb3"  # one of BACKEND_NAMES (training.ppo.train.BACKENDS loads each)
    env_runners: int = 0  # rllib: remote processes that sample; 0: sample in the driver
    # sb3: auto, cpu, cuda or cuda:N (agents.device). The CPU by default: these small MLPs update
    # faster there than across a GPU's transfers (as SB3 advises for non-CNN policies)
    device: str = "cpu"
    # standardize the measured leaves (sb3: VecNormalize's running statistics; rllib: fixed
    # ones, measured_statistics). Raw prosody mixes scales (energy near
    # 64 dB, pause ratio near 0.1) that saturate the tanh layers of a small policy
    normalize_observation: bool = True
    # sb3: a checkpoint folder (agents.ppo) whose weights the policy starts from, e.g. to fine-tune
    # under another reward; its standardization statistics stay fixed (the weights expect them)
    init_from: str | None = None
    # sb3: an agent registered for the env (Hear2Act: "planner") whose play the policy is cloned
    # from before PPO (training.ppo.imitation): imitate_episodes of its training episodes,
    # imitate_epochs over them, then dagger_rounds of DAgger
    imitate: str | None = None
    imitate_episodes: int = 300
    imitate_epochs: int = 20
    dagger_rounds: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.env_id is None:
            self.env_id = default_env("ppo_policies")
        env_family = family(self.env_id)
        env_family.check_access(self.access)
        if self.vec_env not in VEC_ENVS:
            raise ValueError(f"vec_env must be one of {sorted(VEC_ENVS)}, got {self.vec_env!r}")
        if self.backend not in BACKEND_NAMES:
            raise ValueError(f"backend must be one of {sorted(BACKEND_NAMES)}, got {self.backend!r}")
        if self.env_runners < 0:
            raise ValueError("env_runners must be >= 0")
        if self.env_runners and self.backend != "rllib":
            raise ValueError(
                "env_runners (remote samplers) needs backend 'rllib'; sb3 samples in one process"
            )
        if resolve_device(self.device) != "cpu" and self.backend != "sb3":
            raise ValueError(
                f"device {self.device!r} needs backend 'sb3': the rllib backend trains on the CPU"
            )
        missing = [k for k in env_family.cell_options if k not in self.env_options]
        if missing:
            raise ValueError(
                f"{self.env_id} evaluations name the {missing} of a cell: set them in env_options"
            )
        if "split" in self.env_options or "split" in self.train_env_options:
            raise ValueError("PPO trains on the 'train' split and evaluates on eval_split; do not set split")
        both = sorted(set(self.env_options) & set(self.train_env_options))
        if both:
            raise ValueError(f"{both} set in both env_options and train_env_options: choose one")
        for name in ("total_steps", "n_envs", "n_steps", "batch_size", "n_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.eval_split not in env_family.splits and self.eval_split != "all":
            raise ValueError(f"eval_split must be one of {env_family.splits}")
        policies = ppo_policies(self.env_id)
        if self.policy not in policies:
            raise ValueError(
                f"policy must be one of {sorted(policies)} on {self.env_id}, got {self.policy!r}"
            )
        if self.backend == "rllib" and self.policy != DEFAULT_POLICY:
            raise ValueError(
                f"backend 'rllib' trains the {DEFAULT_POLICY!r} policy only, not {self.policy!r}"
            )
        # one training env now, so a bad env option (unknown, non-finite) is refused before the
        # run folder, its settings or a W&B run exist
        with make_training_env(self.env_id, self.access, self.training_env_options()) as env:
            if self.policy != DEFAULT_POLICY:
                policies[self.policy].load().check_spaces(env.observation_space, env.action_space)
        if self.init_from is not None:
            self._check_init_from()
        if self.imitate is not None:
            self._check_imitate()

    def _check_imitate(self) -> None:
        from training.ppo.imitation import expert_agent  # the registered agents, loaded when used

        if self.backend != "sb3" or self.init_from is not None:
            raise ValueError("imitate needs backend 'sb3' and no init_from: it sets the starting weights")
        for name in ("imitate_episodes", "imitate_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.dagger_rounds < 0:
            raise ValueError("dagger_rounds must be >= 0")
        with make_training_env(self.env_id, self.access, self.training_env_options()) as env:
            if self.normalize_observation and measured_leaves(env.observation_space):
                raise ValueError(
                    f"imitate clones from unstandardized features: access {self.access!r} has measured "
                    "leaves; use a transcript condition or normalize_observation=False"
                )
        expert_agent(self.env_id, self.imitate, self.training_env_options())  # an unknown name: refused

    def _check_init_from(self) -> None:
        self.init_from = str(self.init_from)
        if self.backend != "sb3":
            raise ValueError(f"init_from needs backend 'sb3', not {self.backend!r}")
        config = read_config(Path(self.init_from))
        theirs = {
            "env_id": config.get("env_id"),
            "access": config.get("access"),
            "policy": config.get("policy", DEFAULT_POLICY),
            "net_arch": config.get("net_arch"),
        }
        mine = {
            "env_id": self.env_id,
            "access": self.access,
            "policy": self.policy,
            "net_arch": list(self.net_arch),
        }
        extends = ppo_policies(self.env_id)[self.policy].extends
        if theirs["policy"] == extends:  # e.g. per_option_listening from per_option
            mine["policy"] = theirs["policy"]
        for key in theirs:
            if theirs[key] != mine[key]:
                raise ValueError(
                    f"init_from {self.init_from}: its {key} is {theirs[key]!r}, not {mine[key]!r}"
                )
        with make_training_env(self.env_id, self.access, self.training_env_options()) as env:
            standardizes = self.normalize_observation and bool(measured_leaves(env.observation_space))
        if standardizes != bool(config.get("observation_normalization")):
            raise ValueError(
                f"init_from {self.init_from} was trained {'with' if not standardizes else 'without'} "
                "standardized measured leaves: set normalize_observation to match"
            )

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "net_arch": list(self.net_arch)}

    def training_env_options(self) -> dict[str, Any]:
        return {**self.env_options, **self.train_env_options}


__all__ = ["BACKEND_NAMES", "PPOSettings"]
