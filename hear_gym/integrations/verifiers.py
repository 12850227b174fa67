"""Every registered env as a verifiers environment: ``load_environment(env=..., access=...,
**options)``, the entry verifiers' ``vf.load_environment("hear-gym", env=...)`` and ``vf-eval
hear-gym`` call (verifiers imports the module its environment id names, ``hear_gym``, and calls
its ``load_environment``; ``hear_gym.load_environment`` forwards here). The hear_gym env id is
``env``, as in ``hear-gym eval --env``: verifiers' loader takes ``env_id`` itself (the module).

Needs the ``verifiers`` extra (``pip install 'hear-gym[verifiers]'``: verifiers 0.3, whose classic
``MultiTurnEnv`` stack this uses).

* **Rows.** One per episode (the family's scenario or item ids, in its order; ``num_episodes``
  keeps the first ones) of ``split`` (the evaluation rows, default test) and of ``train_split``
  (the training rows, default train): the system prompt, and ``info`` with the episode id and
  its seed, ``episode_seed(seed, item_id, 0)``, the seed ``hear-gym eval --seed SEED`` plays
  the episode with. Repeats of a row (``rollouts_per_example``) replay the same episode.
* **Observations as messages.** The first user message holds the observation's text entries
  (``[key]`` then the text); each later one what changed (a growing transcript shows only its new
  lines; ``hear_gym.integrations.trl.changed``). Under an access condition with audio, a turn
  whose observation carries speech adds it as an OpenAI ``input_audio`` part: the clip the env
  gives (``audio[:audio_length]``) as a base64 16 kHz 16-bit WAV.
* **Replies as actions.** The model's reply is the env's text action (``gym.make(...,
  actions="text")``), so a malformed reply gets the family's documented invalid-action outcome.
  The system prompt (``system_prompt``) says which env it is; the grammar of each family's
  replies is in its docs and its chat agents' prompts (``agents/<family>/``), which a run passes
  as ``system_prompt``.
* **Rubric.** One reward function, ``episode_return``: the env return, the sum of the step
  rewards. An episode the loop leaves unfinished (``max_turns``, an error) is first played out
  with the family's ``invalid_reply`` until it ends, as the TRL adapter does, so stopping early
  never dodges a cost. Metrics: ``played_out`` (replies so played) and ``env_turns``.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import gymnasium as gym
import numpy as np
import soundfile as sf

try:
    import verifiers as vf
    from datasets import Dataset
    from verifiers.utils.message_utils import normalize_messages
except ImportError as exc:
    raise ImportError(
        "hear_gym.integrations.verifiers needs verifiers: pip install 'hear-gym[verifiers]'"
    ) from exc

from hear_gym.core.registry import family
from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.eval.runner import episode_seed
from hear_gym.integrations.trl import EPISODE_OVER, MAX_PLAYOUT_STEPS, changed, tool_set

DEFAULT_SYSTEM_PROMPT = (
    "You are the agent in the hear_gym environment {env_id}. Each user message is what you "
    "observe; answer each one with exactly one action, written as the environment's text action."
)


def observation_message(
    observation: dict[str, Any], shown: dict[str, str], with_audio: bool, done: bool = False
) -> dict[str, Any]:
    """One user message: the text entries that changed since ``shown`` (all of them on the first
    turn), then the turn's speech as an ``input_audio`` part when ``with_audio`` and it has any."""
    texts = {key: value for key, value in observation.items() if isinstance(value, str)}
    lines = []
    for key, text in texts.items():
        new = changed(shown.get(key, ""), text) if shown else text
        if new:
            lines.append(f"[{key}]\n{new}")
    if done:
        lines.append(EPISODE_OVER)
    text = "\n".join(lines)
    length = int(observation["audio_length"][0]) if with_audio and "audio" in observation else 0
    if length == 0:
        return {"role": "user", "content": text}
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": text},
            {
                "type": "input_audio",
                "input_audio": {"data": wav_base64(observation["audio"][:length]), "format": "wav"},
            },
        ],
    }


def wav_base64(clip: np.ndarray) -> str:
    """A float32 clip in [-1, 1] at the envs' rate as base64 of a 16-bit PCM WAV file."""
    buffer = io.BytesIO()
    sf.write(buffer, np.asarray(clip, dtype=np.float32), AUDIO_RATE, format="WAV", subtype="PCM_16")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def reply_text(message: Any) -> str:
    """The text of an assistant message (a string, or the text parts of a list of parts)."""
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if isinstance(content, str):
        return content
    parts = content or []
    return "".join((p.get("text") if isinstance(p, dict) else getattr(p, "text", None)) or "" for p in parts)


class _Episode:
    """One rollout's env and what it has shown and earned (kept beside the verifiers state, which
    holds JSON only)."""

    def __init__(self, env: gym.Env, observation: dict[str, Any]):
        self.env = env
        self.shown = {k: v for k, v in observation.items() if isinstance(v, str)}
        self.rewards: list[float] = []
        self.done = False
        self.played_out = 0
        self.record: dict[str, Any] | None = None

    def step(self, reply: str) -> tuple[dict[str, Any], bool]:
        observation, reward, terminated, truncated, info = self.env.step(reply)
        self.rewards.append(float(reward))
        self.done = bool(terminated or truncated)
        if self.done:
            self.record = info.get("episode")
        return observation, self.done


class HearGymEnv(vf.MultiTurnEnv):
    """A hear_gym env under one access condition as a verifiers ``MultiTurnEnv`` (module
    docstring); build it with ``load_environment``."""

    def __init__(
        self,
        env_id: str,
        access: str,
        train_rows: list[dict[str, Any]],
        eval_rows: list[dict[str, Any]],
        env_options: dict[str, Any],
        **kwargs: Any,
    ):
        self.hear_gym_id = env_id
        self._family = family(env_id)
        self._access = access
        self._env_options = env_options
        self._invalid_reply = tool_set(env_id).invalid_reply
        self._episodes: dict[str, _Episode] = {}
        rubric = vf.Rubric(funcs=[episode_return])
        rubric.add_metric(played_out)
        rubric.add_metric(env_turns)
        super().__init__(
            dataset=lambda: Dataset.from_list(train_rows),
            eval_dataset=lambda: Dataset.from_list(eval_rows),
            rubric=rubric,
            env_id=env_id,
            **kwargs,
        )

    @property
    def hears(self) -> bool:
        return "A" in self._access.split("+")

    async def setup_state(self, state: vf.State) -> vf.State:
        info = state["info"]
        item_id = info["item_id"]
        env = gym.make(
            self.hear_gym_id,
            access=self._access,
            actions="text",
            **self._family.episode_kwargs([item_id]),
            **self._env_options,
        )
        observation, _ = env.reset(seed=int(info["seed"]), options=self._family.reset_options(item_id))
        self._episodes[state["trajectory_id"]] = _Episode(env, observation)
        first = observation_message(observation, {}, self.hears)
        state["prompt"] = normalize_messages([*_plain(state["prompt"]), first], field_name="prompt")
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        episode = self._episodes[state["trajectory_id"]]
        observation, done = episode.step(reply_text(messages[-1]))
        message = observation_message(observation, episode.shown, self.hears, done)
        episode.shown = {k: v for k, v in observation.items() if isinstance(v, str)}
        if done:
            state["final_env_response"] = [message]
        return [message]

    @vf.cleanup
    async def finish_episode(self, state: vf.State) -> None:
        """Play an unfinished episode out with invalid replies, keep its figures, close its env."""
        episode = self._episodes.pop(state["trajectory_id"], None)
        if episode is None:
            return
        try:
            for _ in range(MAX_PLAYOUT_STEPS):
                if episode.done:
                    break
                episode.step(self._invalid_reply)
                episode.played_out += 1
            else:
                raise RuntimeError(f"{self.hear_gym_id}: invalid replies did not end the episode")
        finally:
            episode.env.close()
        state["hear_gym_rewards"] = episode.rewards
        state["hear_gym_played_out"] = episode.played_out
        state["hear_gym_episode"] = episode.record


def _plain(messages: Any) -> list[Any]:
    return [m.model_dump(exclude_none=True) if hasattr(m, "model_dump") else m for m in messages or []]


async def episode_return(state: vf.State) -> float:
    """The env return: the sum of the episode's step rewards."""
    return float(sum(state["hear_gym_rewards"]))


async def played_out(state: vf.State) -> float:
    """Invalid replies played to end an episode the loop left unfinished."""
    return float(state["hear_gym_played_out"])


async def env_turns(state: vf.State) -> float:
    """Steps the env took."""
    return float(len(state["hear_gym_rewards"]))


def episode_rows(
    env_id: str, split: str, num_episodes: int | None, seed: int, system_prompt: str
) -> list[dict[str, Any]]:
    ids = family(env_id).item_ids(split)[:num_episodes]
    prompt = [{"role": "system", "content": system_prompt}]
    return [
        {
            "prompt": prompt,
            "answer": "",
            "info": {"item_id": item_id, "seed": episode_seed(seed, item_id, 0)},
        }
        for item_id in ids
    ]


def load_environment(
    env: str = "hear_gym/Hear2Act-v0",
    access: str | None = None,
    split: str = "test",
    train_split: str = "train",
    num_episodes: int | None = None,
    seed: int = 0,
    system_prompt: str | None = None,
    max_turns: int = -1,
    **options: Any,
) -> HearGymEnv:
    """The env ``env`` (a registered id) under ``access`` (default: the family's text condition,
    T) as a verifiers environment: its evaluation rows are ``split``'s episodes, its training rows
    ``train_split``'s (the first ``num_episodes`` of each; all when None), each seeded as
    ``hear-gym eval --seed SEED`` seeds it. ``options`` are the family's
    ``make`` kwargs (Hear2Act: ``feedback``, ``reward``, ``turn_cost``...); ``actions`` is always
    text."""
    env_id = env
    env_family = family(env_id)
    if "actions" in options:
        raise ValueError("options must not set actions: the model's replies are the env's text actions")
    if "text" not in env_family.action_formats:
        raise ValueError(f"{env_id} has no text actions, which a model's replies are played as")
    access = env_family.check_access(access or tool_set(env_id).text_access)
    prompt = system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT.format(env_id=env_id)
    rows = {}
    for name, chosen in (("split", split), ("train_split", train_split)):
        if chosen not in (*env_family.splits, "all"):
            raise ValueError(f"{env_id}: {name} must be one of {[*env_family.splits, 'all']}, got {chosen!r}")
        rows[name] = episode_rows(env_id, chosen, num_episodes, seed, prompt)
        if not rows[name]:
            raise ValueError(f"{env_id}: no episodes in split {chosen!r}")
    return HearGymEnv(env_id, access, rows["train_split"], rows["split"], dict(options), max_turns=max_turns)


__all__ = ["HearGymEnv", "load_environment", "observation_message", "wav_base64"]
