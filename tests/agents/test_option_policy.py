"""The per_option PPO policy (agents.hear2act.option_policy): its option rows are the
observation's, the policy is permutation equivariant end to end (options permuted in the
observation permute their recommend logits and nothing else), it trains and plays through the checkpoint path, and it refuses other envs. The privileged-critic variant's value reads the
hidden concern state in training, its actions never do, and its checkpoint plays without it."""

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
    PrivilegedCriticOptionPolicy,
)
from agents.ppo import PRIVILEGED_LEAF, PPOAgent, ppo_policies, read_config  # noqa: E402
from hear_gym.envs.hear2act.actions import CONFIRM, RECOMMEND0  # noqa: E402
from hear_gym.envs.hear2act.features import FIT_COLUMNS, OPTION_COLUMNS  # noqa: E402
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES  # noqa: E402
from training.ppo.envs import PrivilegedObservation  # noqa: E402
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


def _randomized(policy):
    """The policy with trained-looking weights: standard normal everywhere (seeded), not the
    near-zero output layers it starts with."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    return policy


def _permuted(obs: dict[str, np.ndarray], order: np.ndarray) -> dict[str, np.ndarray]:
    """The same observation with its options in another order: slot ``j`` shows what slot
    ``order[j]`` showed, in every option-indexed leaf and in the action mask."""
    out = {key: value.copy() for key, value in obs.items()}
    out["options"] = obs["options"].reshape(N_CANDIDATES, OPTION_COLUMNS)[order].reshape(-1)
    if "option_fit" in obs:  # 11 option rows, then the current option's row, which stays
        fit = obs["option_fit"].reshape(N_CANDIDATES + 1, FIT_COLUMNS)
        out["option_fit"] = np.concatenate([fit[:-1][order], fit[-1:]]).reshape(-1)
    for part in (CURRENT, RECOMMENDED):
        out["dialogue"][part] = obs["dialogue"][part][order]
    out["action_mask"][RECOMMEND0:CONFIRM] = obs["action_mask"][RECOMMEND0:CONFIRM][order]
    return out


def _logits_and_value(policy, obs: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
    """The policy's masked action logits and its value, end to end from the observation."""
    tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        distribution = policy.get_distribution(tensor, action_masks=obs["action_mask"])
        logits = distribution.distribution.logits[0].numpy()
        return logits, float(policy.predict_values(tensor)[0, 0])


@pytest.mark.parametrize("access", ["T", "A+T"])
def test_permuting_the_options_in_the_observation_permutes_only_their_recommend_logits(access):
    policy, obs = _listening_policy() if access == "A+T" else _policy(access)
    _randomized(policy)
    order = np.random.default_rng(0).permutation(N_CANDIDATES)
    assert np.any(order != np.arange(N_CANDIDATES))
    logits, value = _logits_and_value(policy, obs)
    assert len(set(np.round(logits[RECOMMEND0:CONFIRM], 4))) > 1  # the options do score apart
    moved, moved_value = _logits_and_value(policy, _permuted(obs, order))
    expected = logits.copy()
    expected[RECOMMEND0:CONFIRM] = logits[RECOMMEND0:CONFIRM][order]
    np.testing.assert_allclose(moved, expected, rtol=1e-5, atol=1e-4)
    assert moved_value == pytest.approx(value, rel=1e-5, abs=1e-4)


def test_the_option_rows_are_the_observations():
    policy, obs = _policy()
    tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        features = policy.extract_features(tensor)[0].numpy()
    extractor = policy.features_extractor
    rows = features[extractor.context_dim :].reshape(N_CANDIDATES, extractor.row_width)
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


@pytest.mark.parametrize("access", ["T", "A+T"])
def test_the_order_of_the_observation_leaves_does_not_matter(access):
    """SB3 trains on dicts in the space's (sorted) key order; an agent plays the env's dict, in
    the order the feature wrapper builds it. Both must mean the same to the policy."""
    policy, obs = _listening_policy() if access == "A+T" else _policy(access)
    _randomized(policy)
    assert list(obs) != sorted(obs)  # the env's own order is not the space's
    logits, value = _logits_and_value(policy, obs)
    reordered, reordered_value = _logits_and_value(policy, {key: obs[key] for key in sorted(obs)})
    np.testing.assert_allclose(reordered, logits, rtol=1e-6, atol=1e-6)
    assert reordered_value == pytest.approx(value, rel=1e-6)


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


@pytest.mark.slow  # 8 s: the default tier keeps its 5 minutes
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


def _privileged_policy(access: str = "T", randomized: bool = True):
    """The per_option_privileged policy on a training env's observation (with the privileged leaf)."""
    privileged = ppo_policies("hear_gym/Hear2Act-v0")["per_option_privileged"].privileged
    env = PrivilegedObservation(
        gym.make("hear_gym/Hear2Act-v0", access=access, observation="features", **HEAR2ACT), privileged
    )
    obs, _ = env.reset(seed=4)
    obs, *_ = env.step(RECOMMEND0 + 2)
    policy = PrivilegedCriticOptionPolicy(
        env.observation_space, env.action_space, lambda _: 3e-4, net_arch=[32, 32]
    )
    return (_randomized(policy) if randomized else policy), obs


def test_the_privileged_critic_reads_the_concern_state_and_the_actor_never_does():
    torch.manual_seed(3)
    policy, obs = _privileged_policy(randomized=False)
    torch.manual_seed(3)
    plain, _ = _policy()
    theirs = plain.state_dict()
    actor = {k: v for k, v in policy.state_dict().items() if not k.startswith("mlp_extractor.value_net")}
    assert actor.keys() <= theirs.keys()
    for key, weights in actor.items():  # on one seed it starts from per_option's very weights
        torch.testing.assert_close(weights, theirs[key], rtol=0, atol=0)
    _randomized(policy)
    assert obs[PRIVILEGED_LEAF].sum() == 1.0  # the user's latest delivery label, one-hot
    logits, value = _logits_and_value(policy, obs)
    for label in range(len(obs[PRIVILEGED_LEAF])):
        other = {**obs, PRIVILEGED_LEAF: np.eye(len(obs[PRIVILEGED_LEAF]), dtype=np.float32)[label]}
        other_logits, other_value = _logits_and_value(policy, other)
        np.testing.assert_array_equal(other_logits, logits)  # the actor: not a bit changes
        if not np.array_equal(other[PRIVILEGED_LEAF], obs[PRIVILEGED_LEAF]):
            assert other_value != pytest.approx(value, abs=1e-6)  # the critic: it reads the state
    # an evaluation's observation has no such leaf: the same actions
    public = {key: value for key, value in obs.items() if key != PRIVILEGED_LEAF}
    np.testing.assert_array_equal(_logits_and_value(policy, public)[0], logits)


@pytest.mark.slow
def test_a_privileged_critic_trains_on_the_leaf_and_its_checkpoint_plays_without_it(tmp_path):
    tiny = dict(total_steps=128, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, eval_every=0, eval_limit=2)
    settings = PPOSettings(
        out=tmp_path, env_options=HEAR2ACT, policy="per_option_privileged", wandb_project=None, progress=False
    )
    settings = PPOSettings(**{**settings.to_json(), "net_arch": (32, 32), **tiny})
    result = train(settings)
    config = read_config(tmp_path / "checkpoints" / "final")
    assert PRIVILEGED_LEAF not in config["observation_shapes"]  # the checkpoint is the public actor
    assert result["metrics"]["1st%"]["n_scenarios"] == 2  # played through the runner, no leaf
