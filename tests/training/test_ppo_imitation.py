"""Behaviour cloning before PPO (``training.ppo.imitation``, ``--imitate``) and the learning-curve
PNG (``training.ppo.curve_plot``), on runs short enough for CI: the demonstrations are the
expert's own play (the dict and feature envs stay on one episode), a cloned policy takes the
expert's actions where a fresh one does not, the run records the cloning and evaluates the clone
as ``checkpoints/step_0``, and bad settings are refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402

from agents.ppo import ppo_policies  # noqa: E402
from training.ppo.curve import CURVE_FILE  # noqa: E402
from training.ppo.curve_plot import plot_curve  # noqa: E402
from training.ppo.envs import make_vec_env  # noqa: E402
from training.ppo.imitation import clone, demonstrations, expert_agent  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

HEAR2ACT = {"feedback": "prosody", "turn_cost": 0.05}
BASE = dict(
    env_options=HEAR2ACT,
    train_env_options={"hidden_users": "resample"},
    policy="per_option",
    n_envs=2,
    wandb_project=None,
    progress=False,
)


def _settings(tmp_path, **kwargs) -> PPOSettings:
    return PPOSettings(out=tmp_path / "run", **{**BASE, **kwargs})


def _agreement(policy, data) -> float:
    observation, _ = policy.obs_to_tensor(data.observations)
    chosen, _, _ = policy(observation, deterministic=True, action_masks=data.observations["action_mask"])
    return float(np.mean(chosen.cpu().numpy() == data.actions))


def test_a_cloned_policy_takes_the_experts_actions(tmp_path):
    settings = _settings(tmp_path)
    expert = expert_agent(settings.env_id, "ask_before_confirm", settings.training_env_options())
    data = demonstrations(settings, expert, episodes=30, seed=0)
    assert len(data) > 60 and len(data.episode_returns) == 30
    # the return from the first step of each episode is that episode's (discounted) return
    assert data.returns.max() <= 1.0 and np.isfinite(data.returns).all()
    envs = make_vec_env(settings)
    model = MaskablePPO(ppo_policies(settings.env_id)["per_option"].load(), envs, seed=0)
    before = _agreement(model.policy, data)
    clone(model.policy, data, epochs=100, seed=0)
    after = _agreement(model.policy, data)
    envs.close()
    assert before < 0.6 and after > 0.9, (before, after)


def test_a_run_records_its_cloning_and_plays_the_clone(tmp_path):
    settings = _settings(
        tmp_path,
        total_steps=256,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        eval_every=128,
        eval_split="dev",
        eval_limit=4,
        keep_best=True,
        imitate="ask_before_confirm",
        imitate_episodes=10,
        imitate_epochs=2,
        dagger_rounds=1,
    )
    train(settings)
    rows = [json.loads(line) for line in (settings.out / CURVE_FILE).read_text().splitlines()]
    cloning = [r for r in rows if r["kind"] == "imitation"]
    assert [r["round"] for r in cloning] == [0, 1] and cloning[1]["steps"] > cloning[0]["steps"]
    assert rows[len(cloning)]["kind"] == "eval" and rows[len(cloning)]["checkpoint"] == "checkpoints/step_0"
    assert (settings.out / "checkpoints" / "best" / "policy.json").exists()
    png = plot_curve(settings.out, tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "bad,message",
    [
        ({"imitate": "no_such_agent"}, "no agent 'no_such_agent'"),
        ({"imitate": "planner", "imitate_episodes": 0}, "imitate_episodes must be >= 1"),
        ({"imitate": "planner", "dagger_rounds": -1}, "dagger_rounds must be >= 0"),
        ({"imitate": "planner", "access": "A+T"}, "measured leaves"),
    ],
)
def test_bad_imitation_settings_are_refused(tmp_path, bad, message):
    with pytest.raises(ValueError, match=message):
        _settings(tmp_path, **bad)
