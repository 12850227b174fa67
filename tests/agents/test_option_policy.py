"""The per_option PPO policy (agents.hear2act.option_policy): its option rows are the
observation's, one shared scorer gives every recommend logit (swapping two options' rows swaps
their logits), it trains and plays through the checkpoint path, and it refuses other envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402

from agents.hear2act.option_policy import (  # noqa: E402
    AUDIO_LEAVES,
    CURRENT,
    RECOMMENDED,
    ListeningOptionPolicy,
    PerOptionPolicy,
)
from agents.ppo import PPOAgent, read_config  # noqa: E402
from hear_gym.envs.hear2act.actions import CONFIRM, N_ACTIONS, RECOMMEND0  # noqa: E402
from hear_gym.envs.hear2act.features import FIT_COLUMNS, OPTION_COLUMNS  # noqa: E402
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

HEAR2ACT = {"feedback": "prosody", "turn_cost": 0.02}


def _policy(access: str = "T"):
    env = gym.make("hear_gym/Hear2Act-v0", access=access, observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=4)
    obs, *_ = env.step(RECOMMEND0 + 2)  # a recommendation: the current and recommended columns
    policy = PerOptionPolicy(env.observation_space, env.action_space, lambda _: 3e-4, net_arch=[32, 32])
    return policy, obs


def _logits(policy, latent: torch.Tensor) -> np.ndarray:
    with torch.no_grad():
        return policy.action_net(latent)[0].numpy()


def test_the_option_rows_are_the_observations():
    policy, obs = _policy()
    tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        features = policy.extract_features(tensor)[0].numpy()
    extractor = policy.features_extractor
    rows = features[extractor.flat_dim :].reshape(N_CANDIDATES, extractor.row_width)
    options = obs["options"].reshape(N_CANDIDATES, OPTION_COLUMNS)
    fit = obs["option_fit"].reshape(N_CANDIDATES + 1, FIT_COLUMNS)[:-1]
    np.testing.assert_array_equal(rows[:, :OPTION_COLUMNS], options)
    np.testing.assert_array_equal(rows[:, OPTION_COLUMNS : OPTION_COLUMNS + FIT_COLUMNS], fit)
    np.testing.assert_array_equal(rows[:, -2], obs["dialogue"][CURRENT])
    np.testing.assert_array_equal(rows[:, -1], obs["dialogue"][RECOMMENDED])
    assert rows[2, -2] == 1.0 and rows[2, -1] == 1.0 and rows[:, -1].sum() == 1.0
    # under A (no words) there is no option_fit leaf and the rows are narrower
    audio_policy, _ = _policy("A")
    assert audio_policy.features_extractor.row_width == OPTION_COLUMNS + 2


def test_one_shared_scorer_gives_every_recommend_logit():
    policy, obs = _policy()
    with torch.no_grad():
        # a trained-looking head: random weights everywhere, not the near-zero output init
        for parameter in policy.action_net.parameters():
            parameter.copy_(torch.randn_like(parameter))
        tensor, _ = policy.obs_to_tensor(obs)
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(tensor))
    logits = _logits(policy, latent)
    assert logits.shape == (N_ACTIONS,) and len(set(np.round(logits[RECOMMEND0:CONFIRM], 6))) > 1
    hidden, width = policy.mlp_extractor.hidden_dim_pi, policy.features_extractor.row_width
    rows = latent[:, hidden:].reshape(1, N_CANDIDATES, width).clone()
    rows[:, [0, 5]] = rows[:, [5, 0]]  # swap options 1 and 6
    swapped = _logits(policy, torch.cat([latent[:, :hidden], rows.flatten(1)], dim=1))
    expected = logits.copy()
    expected[[RECOMMEND0, RECOMMEND0 + 5]] = logits[[RECOMMEND0 + 5, RECOMMEND0]]
    np.testing.assert_allclose(swapped, expected, rtol=1e-5, atol=1e-6)


def test_trains_and_plays_through_a_checkpoint(tmp_path):
    tiny = dict(total_steps=256, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, eval_every=0, eval_limit=4)
    settings = PPOSettings(
        out=tmp_path, env_options=HEAR2ACT, policy="per_option", wandb_project=None, progress=False, **tiny
    )
    result = train(settings)
    folder = tmp_path / "checkpoints" / "final"
    assert read_config(folder)["policy"] == "per_option"
    agent = PPOAgent.from_checkpoint(folder)
    assert isinstance(agent.policy, PerOptionPolicy)
    assert result["metrics"]["1st%"]["n_scenarios"] == 4
    env = gym.make("hear_gym/Hear2Act-v0", access="T", observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=0)
    probs = agent.probabilities(obs)
    assert probs.sum() == pytest.approx(1.0) and np.all(probs[obs["action_mask"] == 0] == 0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        # Hear2Act's policies are its own (its training material): VoiceGate has only the shared mlp
        ({"env_id": "hear_gym/VoiceGate-v0", "env_options": {}}, r"one of \['mlp'\] on hear_gym/VoiceGate"),
        ({"backend": "rllib"}, "trains the 'mlp' policy only"),
        ({"policy": "transformer"}, "policy must be one of"),
    ],
)
def test_bad_policy_settings_are_refused(tmp_path, kwargs, match):
    settings = {"env_options": HEAR2ACT, "policy": "per_option", **kwargs}
    with pytest.raises(ValueError, match=match):
        PPOSettings(out=tmp_path, **settings)


AUDIO_TINY = dict(
    total_steps=128, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, eval_every=0, eval_limit=2
)


def _listening_policy():
    env = gym.make("hear_gym/Hear2Act-v0", access="A+T", observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=4)
    obs, *_ = env.step(RECOMMEND0 + 2)
    policy = ListeningOptionPolicy(env.observation_space, env.action_space, lambda _: 3e-4, net_arch=[32, 32])
    return policy, obs


def test_the_listening_head_hears_the_audio_leaves_and_moves_only_confirm():
    policy, obs = _listening_policy()
    tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        features = policy.extract_features(tensor)[0].numpy()
    audio = np.concatenate([obs[key] for key in AUDIO_LEAVES])
    np.testing.assert_array_equal(features[-policy.features_extractor.audio_dim :], audio)
    with torch.no_grad():
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(tensor))
        silent = _logits(policy, latent)
        for parameter in policy.action_net.listen.parameters():
            parameter.copy_(torch.randn_like(parameter))
    heard = _logits(policy, latent)
    moved = np.flatnonzero(~np.isclose(heard, silent))
    assert moved.tolist() == [CONFIRM]  # the head adds to the confirm logit, nothing else
    # it starts silent: an untrained listening head changes no logit
    fresh, _ = _listening_policy()
    with torch.no_grad():
        latent = fresh.mlp_extractor.forward_actor(fresh.extract_features(fresh.obs_to_tensor(obs)[0]))
        assert torch.equal(
            fresh.action_net.listen(latent[:, -fresh.features_extractor.audio_dim :]), torch.zeros(1, 1)
        )


def test_a_listening_policy_starts_from_a_per_option_checkpoint(tmp_path):
    common = dict(access="A+T", env_options=HEAR2ACT, wandb_project=None, progress=False, **AUDIO_TINY)
    train(PPOSettings(out=tmp_path / "plain", policy="per_option", **common))
    start = tmp_path / "plain" / "checkpoints" / "final"
    tuned = tmp_path / "tuned"
    train(PPOSettings(out=tuned, policy="per_option_listening", init_from=start, learning_rate=0.0, **common))
    plain, listening = (
        PPOAgent.from_checkpoint(start),
        PPOAgent.from_checkpoint(tuned / "checkpoints" / "final"),
    )
    assert isinstance(listening.policy, ListeningOptionPolicy)
    env = gym.make("hear_gym/Hear2Act-v0", access="A+T", observation="features", **HEAR2ACT)
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step(RECOMMEND0 + 4)
    np.testing.assert_allclose(listening.probabilities(obs), plain.probabilities(obs), rtol=1e-6)
    with pytest.raises(ValueError, match="its policy is 'per_option_listening', not 'per_option'"):
        PPOSettings(
            out=tmp_path / "back", policy="per_option", init_from=tuned / "checkpoints" / "final", **common
        )


def test_the_listening_policy_needs_audio():
    with pytest.raises(ValueError, match="under access A or A"):
        PPOSettings(out="unused", env_options=HEAR2ACT, policy="per_option_listening")
