"""No trainer bootstraps past a scored end. Hear2Act scores the outcome at its turn limit, so that
step must reach SB3 as termination: were it truncation, ``MaskablePPO.collect_rollouts`` would add
gamma * V(terminal observation) to its reward, crediting a continuation that does not exist. The
test compares, through SB3's own rollout collection, the rewards the envs gave with the rewards
the rollout buffer learns from, on envs whose short turn limit ends most episodes; the leaky
variant (the limit step reported as truncation) must show the difference."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402

from agents.ppo import ppo_policies  # noqa: E402
from hear_gym.envs.hear2act.env import Hear2ActEnv  # noqa: E402
from training.ppo.envs import RECORD_KEY, make_vec_env  # noqa: E402
from training.ppo.settings import PPOSettings  # noqa: E402

N_STEPS = 32


class RewardsSeen(BaseCallback):
    """The rewards each vectorized step returned (copied before SB3 may change them in place) and
    how many episodes ended at the turn limit; the buffer's rewards at the rollout's end."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[np.ndarray] = []
        self.limit_ends = 0
        self.learned: np.ndarray | None = None

    def _on_step(self) -> bool:
        self.given.append(np.array(self.locals["rewards"], dtype=np.float32))
        self.limit_ends += sum(
            info[RECORD_KEY]["turn_limit"] for info in self.locals["infos"] if RECORD_KEY in info
        )
        return True

    def _on_rollout_end(self) -> None:
        self.learned = self.model.rollout_buffer.rewards.copy()


def _one_rollout(tmp_path) -> RewardsSeen:
    settings = PPOSettings(
        out=tmp_path / "run",
        env_options={"feedback": "prosody", "turn_cost": 0.05, "max_turns": 3},
        n_envs=2,
        n_steps=N_STEPS,
        policy="per_option",
        wandb_project=None,
        progress=False,
    )
    envs = make_vec_env(settings)
    model = MaskablePPO(ppo_policies(settings.env_id)[settings.policy].load(), envs, n_steps=N_STEPS, seed=0)
    seen = RewardsSeen()
    model.learn(N_STEPS * settings.n_envs, callback=seen)
    envs.close()
    return seen


def test_the_turn_limit_is_not_bootstrapped(tmp_path):
    seen = _one_rollout(tmp_path)
    assert seen.limit_ends >= 10  # most episodes end at the 3-turn limit
    np.testing.assert_array_equal(seen.learned, np.stack(seen.given))


def test_a_limit_reported_as_truncation_would_be_bootstrapped(tmp_path, monkeypatch):
    """The leaky variant: the old semantics, the scored limit step reported as truncated."""
    advance = Hear2ActEnv._advance

    def truncating(self, *args, **kwargs):
        obs, reward, terminated, truncated, info = advance(self, *args, **kwargs)
        at_limit = terminated and info["episode"]["turn_limit"]
        return obs, reward, terminated and not at_limit, truncated or at_limit, info

    monkeypatch.setattr(Hear2ActEnv, "_advance", truncating)
    seen = _one_rollout(tmp_path)
    assert seen.limit_ends >= 10
    assert not np.array_equal(seen.learned, np.stack(seen.given))
