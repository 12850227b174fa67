"""Behaviour cloning into a PPO policy (``--imitate AGENT``): the policy starts from what an agent
registered for the env does (Hear2Act: ``planner``, ``ask_before_confirm``), then PPO improves on
it.

1. ``demonstrations``: the agent plays whole episodes of the training envs (the training split and
   ``train_env_options``) on the dict observation it reads, while a twin env fed the same seed
   and the same actions gives the feature observation the policy reads: the envs draw everything
   from their own generator, so the two play the same episode (checked at every step). With a
   ``learner`` (DAgger), each step's action is the learner's with probability ``1 - beta``, so the
   demonstrations cover the states the learner reaches; the label is always the agent's action.
2. ``clone``: minimizes the cross-entropy of the agent's actions under the policy's masked
   distribution, and fits the value to the discounted return from each step (so PPO's first
   advantages are measured against a critic that knows the demonstrated play).
3. ``imitate``: the whole recipe, ``rounds`` of DAgger after the first cloning.

The feature observation's measured leaves would need the training envs' running standardization;
cloning is refused there (``PPOSettings`` checks it), which leaves every transcript condition."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from hear_gym.cli.common import available_agents
from hear_gym.core.registry import family

DEMO_SEED_OFFSET = 7_919  # the demonstrations' episode seeds, apart from the training envs'
# Cloning fits a few thousand labelled steps: small batches and a higher rate than PPO's, so a
# few dozen epochs reach a sharp policy (sampled play is what the evaluations score)
CLONE_BATCH = 64
CLONE_LEARNING_RATE = 1e-3


@dataclass
class Demonstrations:
    """Per step: the feature observation (leaf -> rows), the agent's action, the return from it."""

    observations: dict[str, np.ndarray]
    actions: np.ndarray
    returns: np.ndarray
    episode_returns: list[float]

    def __len__(self) -> int:
        return len(self.actions)

    def __add__(self, other: Demonstrations) -> Demonstrations:
        leaves = {k: np.concatenate([v, other.observations[k]]) for k, v in self.observations.items()}
        actions = np.concatenate([self.actions, other.actions])
        returns = np.concatenate([self.returns, other.returns])
        return Demonstrations(leaves, actions, returns, self.episode_returns + other.episode_returns)


def expert_agent(env_id: str, name: str, env_options: Mapping[str, Any]):
    """The agent registered as ``name`` for ``env_id``'s family, told the env's options as the
    evaluation runner tells it (``configure``)."""
    agents = available_agents(family(env_id))
    if name not in agents:
        raise ValueError(f"imitate: no agent {name!r} for {env_id}; registered: {', '.join(sorted(agents))}")
    agent = agents[name].load()()
    configure = getattr(agent, "configure", None)
    if callable(configure):
        configure(dict(env_options))
    return agent


def demonstrations(
    settings,
    expert,
    episodes: int,
    seed: int,
    learner: torch.nn.Module | None = None,
    beta: float = 1.0,
) -> Demonstrations:
    """``episodes`` episodes of the training envs played by ``expert`` (or, with ``learner``, by
    the learner with probability ``1 - beta`` at each step), labelled with the expert's actions."""
    options = settings.training_env_options()
    make = {
        kind: gym.make(
            settings.env_id,
            access=settings.access,
            observation=kind,
            split="train",
            disable_env_checker=True,
            **options,
        )
        for kind in ("dict", "features")
    }
    rng = np.random.default_rng(seed)
    rows: dict[str, list[np.ndarray]] = {}
    actions, returns, episode_returns = [], [], []
    try:
        for k in range(episodes):
            episode_seed = seed + DEMO_SEED_OFFSET + k
            seen, _ = make["dict"].reset(seed=episode_seed)
            features, _ = make["features"].reset(seed=episode_seed)
            expert.reset(seed=episode_seed)
            rewards, done = [], False
            while not done:
                label = int(expert.act(seen))
                for key, leaf in features.items():
                    rows.setdefault(key, []).append(np.asarray(leaf, np.float32))
                actions.append(label)
                action = label
                if learner is not None and rng.random() >= beta:
                    action = _learner_action(learner, features)
                seen, reward, terminated, truncated, _ = make["dict"].step(action)
                features, twin_reward, twin_terminated, twin_truncated, _ = make["features"].step(action)
                if (reward, terminated, truncated) != (twin_reward, twin_terminated, twin_truncated):
                    raise RuntimeError("imitate: the dict and feature envs left the same episode")
                rewards.append(float(reward))
                done = terminated or truncated
            returns.extend(_returns_to_go(rewards, settings.gamma))
            episode_returns.append(float(sum(rewards)))
    finally:
        for env in make.values():
            env.close()
    leaves = {key: np.stack(values) for key, values in rows.items()}
    return Demonstrations(leaves, np.asarray(actions), np.asarray(returns, np.float32), episode_returns)


def _returns_to_go(rewards: list[float], gamma: float) -> list[float]:
    out, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        out.append(running)
    return out[::-1]


def _learner_action(policy, features: dict[str, np.ndarray]) -> int:
    observation, _ = policy.obs_to_tensor(features)
    with torch.no_grad():
        distribution = policy.get_distribution(observation, action_masks=features["action_mask"])
        return int(distribution.sample()[0])


def clone(
    policy,
    data: Demonstrations,
    epochs: int,
    seed: int,
    batch_size: int = CLONE_BATCH,
    learning_rate: float = CLONE_LEARNING_RATE,
    vf_coef: float = 0.5,
) -> float:
    """Fit ``policy`` (an SB3 maskable actor-critic) to the demonstrations: cross-entropy of the
    expert's actions under the masked distribution plus ``vf_coef`` times the value's squared
    error to the return from each step, with an Adam of its own (PPO's starts afresh after). The
    last epoch's mean cross-entropy."""
    generator = np.random.default_rng(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    leaves = {k: torch.as_tensor(v, device=policy.device) for k, v in data.observations.items()}
    actions = torch.as_tensor(data.actions, device=policy.device)
    returns = torch.as_tensor(data.returns, device=policy.device)
    masks = data.observations["action_mask"]
    policy.set_training_mode(True)
    loss_sum = 0.0
    for _ in range(epochs):
        order = generator.permutation(len(data))
        loss_sum, batches = 0.0, 0
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            batch = {k: v[index] for k, v in leaves.items()}
            values, log_prob, _ = policy.evaluate_actions(batch, actions[index], action_masks=masks[index])
            cross_entropy = -log_prob.mean()
            loss = cross_entropy + vf_coef * torch.nn.functional.mse_loss(values.flatten(), returns[index])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
            loss_sum, batches = loss_sum + cross_entropy.item(), batches + 1
        loss_sum /= batches
    policy.set_training_mode(False)
    return loss_sum


def imitate(policy, settings) -> list[dict[str, float]]:
    """Clone ``settings.imitate`` into ``policy``: ``imitate_episodes`` expert episodes, then each
    of ``dagger_rounds`` rounds adds as many episodes played half by the policy (DAgger, beta 0.5)
    and clones again on everything; per round, the demonstrations' size, the expert's mean return
    on the episodes it played and the last epoch's cross-entropy."""
    expert = expert_agent(settings.env_id, settings.imitate, settings.training_env_options())
    data = demonstrations(settings, expert, settings.imitate_episodes, settings.seed)
    report = []
    for round_ in range(settings.dagger_rounds + 1):
        if round_:
            seed = settings.seed + round_ * settings.imitate_episodes
            data = data + demonstrations(settings, expert, settings.imitate_episodes, seed, policy, beta=0.5)
        loss = clone(policy, data, settings.imitate_epochs, settings.seed + round_)
        report.append({"round": round_, "steps": len(data), "cross_entropy": loss})
    report[0]["expert_return"] = float(np.mean(data.episode_returns[: settings.imitate_episodes]))
    return report
