"""What ``hear-gym render`` renders for Hear2Act: the user turns of a split, planned before any
audio is made (``hear_gym.speech.prewarm`` renders the plan in parallel).

Two plans:

* ``rollout_requests``: the turns of the episodes an evaluation will play, the same cells,
  scenarios, rollouts and episode seeds as ``hear-gym eval``. Every user turn depends on the
  agent's actions, so the episodes are played, without audio: a cell whose agent reads words only
  plays the same dialogue under T as under A+T, and T+S needs no audio either.
* ``possible_requests``: every turn each scenario's user can say (``utterances.possible_turns``),
  whatever a policy does: what a training run hears from its first step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import gymnasium as gym

from hear_gym.core.run_config import RunConfig
from hear_gym.envs.hear2act.audio import user_turn_request
from hear_gym.envs.hear2act.scenarios.bank import scenarios_for
from hear_gym.envs.hear2act.utterances import possible_turns
from hear_gym.eval.runner import AgentFactory, episode_seed
from hear_gym.speech.renderers import RenderRequest

# Conditions whose observation plays without audio: what the agent reads decides the dialogue,
# and a words-only agent reads the same under A+T as under T.
_SILENT_ACCESS = ("T", "T+S")


def rollout_requests(
    config: RunConfig, agents: Mapping[str, AgentFactory], prosody: str
) -> list[RenderRequest]:
    """Every distinct user turn of ``config``'s episodes (delivery plan table ``prosody``), in the
    order first heard."""
    seen: dict[RenderRequest, None] = {}
    for cell in config.cells:
        access = cell.access if cell.access in _SILENT_ACCESS else _silent_access(cell, agents)
        env = gym.make(
            config.env_id,
            access=access,
            item_ids=list(config.item_ids),
            disable_env_checker=True,
            **dict(config.env_kwargs),
            **dict(cell.options),
        )
        agent = agents[cell.agent]()
        base = env.unwrapped
        for scenario_id in config.item_ids:
            for rollout in range(config.rollouts):
                seed = episode_seed(config.seed, scenario_id, rollout)
                obs, _ = env.reset(seed=seed, options={"item_id": scenario_id})
                agent.reset(seed=seed)
                done = False
                while not done:
                    obs, _, terminated, truncated, _ = env.step(agent.act(obs))
                    done = terminated or truncated
                for turn in base.turns:
                    seen.setdefault(
                        user_turn_request(scenario_id, turn["user_text"], turn["delivery_label"], prosody)
                    )
        env.close()
    return list(seen)


def _silent_access(cell, agents: Mapping[str, AgentFactory]) -> str:
    """T for a cell whose agent reads words only (its dialogue under A or A+T is the same);
    otherwise its dialogue needs the audio it is being rendered for."""
    needed = getattr(agents[cell.agent](), "required_access", "T")
    if needed == "T" and cell.access == "A+T":
        return "T"
    raise ValueError(
        f"{cell.name}: the agent decides from what it hears, so its dialogues cannot be planned "
        f"before the audio is made; render every turn the users can say (--turns all) instead"
    )


def possible_requests(
    item_ids: Sequence[str], feedbacks: Iterable[str], prosody: str, patience: int | None = None
) -> list[RenderRequest]:
    """Every distinct turn the scenarios' users can say under ``feedbacks``, scenario by
    scenario (bank users: a twin, ``hidden_users="resample"``, says other requirements)."""
    seen: dict[RenderRequest, None] = {}
    for scenario in scenarios_for(item_ids=item_ids):
        for feedback in feedbacks:
            for text, delivery in possible_turns(scenario, feedback, patience):
                seen.setdefault(user_turn_request(scenario.scenario_id, text, delivery, prosody))
    return list(seen)
