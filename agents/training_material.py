"""What a family gives the trainers in ``training/``, and where they find it: the family contract's
training side. ``training/`` names no family; it asks the registry.

A family declares its material the way it declares its agents: under the entry-point group
``EnvFamily.training_group`` (``hear_gym.training.<name>``), one entry ``material`` naming a
``TrainingMaterial`` object in its agents package (``agents/<family>/training_material.py``)::

    [project.entry-points."hear_gym.training.hear2act"]
    material = "agents.hear2act.training_material:MATERIAL"

``TrainingMaterial`` holds, each optional:

* ``chat_agent``: the class that plays a saved text model in evaluations (its ``llm`` agent);
* ``demos``: the SFT demonstration source and the access condition it demonstrates under (also
  the condition the trained model is evaluated in);
* ``tool_demos``: whole expert dialogues in TRL's tool-calling chat format (``build`` returns
  ``{"messages": [...], ...}`` rows), for SFT before dialogue GRPO through the family's tools;
* ``grpo_tasks``: single-decision GRPO tasks by name (rows, plain or paired, and their env
  reward); the family builds its counterfactual pairs itself;
* ``dialogue_tasks``: multi-turn GRPO tasks by name (whole episodes played against the env);
* ``ppo_policies``: policy networks beyond the shared ``mlp``, by name;
* ``corpus()``: text the family's chat models read (prompts, words, replies), on which
  ``training.tiny_model`` trains the tiny offline models' tokenizer;
* ``instructions()``: system instructions its prompts repeat word for word, which the tiny
  learning model's tokenizer holds as one token each (a compact prompt for small models);
* ``phrases()``: fixed phrases its observations repeat word for word (Hear2Act: each domain's
  requirement and option-feature phrases), which the tiny tool-calling learning model's
  tokenizer holds as one token each (a compact observation for small models);
* ``audio_chat_agent``, ``audio_demos``, ``audio_grpo_tasks``: the same for audio-language models
  under A+T (``agents.audio_material``: the agent that plays them, their SFT demonstrations and
  their GRPO tasks, each row's prompt naming its clip);
* ``default_for``: the material (field names above, e.g. ``demos``, ``grpo_tasks``) for which
  this family is the trainers' default when a run names no env or task (``default_env``,
  ``default_task``); ``ppo_policies`` there makes it the default env of PPO.

A family without the group has no material; a trainer then says which envs have what it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from agents.audio_material import AudioDecisionTask, AudioDemoSource
from hear_gym.core.registry import env_ids, family

MATERIAL_ENTRY = "material"
Demo = dict[str, Any]


@dataclass(frozen=True)
class DemoSource:
    """SFT demonstrations: ``build(split, access=..., limit=..., seed=..., **env_options)`` returns
    chats in TRL's conversational prompt-completion form (``demo``), written with the family's own
    prompt builder; ``access``: the condition its experts demonstrate under."""

    build: Callable[..., list[Demo]]
    access: str


@dataclass(frozen=True)
class DecisionTask:
    """A single-decision GRPO task. ``settings`` is the trainer's settings object (``model``,
    ``paired``, ``item_limit``, ``families``, ``env_options``, ``state_probe``, ``seed``, ...).

    * ``check(settings)``: refuses settings the task cannot use (one-line ``ValueError``) and
      returns the env options the task trains and evaluates with;
    * ``access(settings)``: the condition the prompts come from (the evaluation runs under it);
    * ``build(settings, eos_token_ids)``: (rows, reward). Rows have ``prompt``, ``item_id``,
      ``item_family``, ``prompt_minus``, ``item_id_minus``; paired, the ``*_minus`` columns hold
      the pair's other side, and plain, the same items come as ordinary rows (each side its own
      row), so a plain control sees exactly the paired run's items. The reward is a
      ``agents.llm.decision_reward.DecisionReward``;
    * ``eval_options(env_options)``: the env options of the held-out evaluation."""

    check: Callable[[Any], dict[str, Any]]
    access: Callable[[Any], str]
    build: Callable[[Any, set[int]], tuple[list[dict[str, Any]], Any]]
    eval_options: Callable[[dict[str, Any]], dict[str, Any]] = dict


@dataclass(frozen=True)
class DialogueTask:
    """A multi-turn GRPO task: whole episodes played turn by turn as one token sequence each
    (``training.llm.dialogue_rollout``).

    * ``make_env(episode_id, env_options)``: a text-action env that plays that one episode under
      ``access``; its ``info`` says ``invalid_action`` (None for a valid reply) every step and
      ``success`` and ``episode`` (the record, with its ``return``) on the last;
    * ``reset_options(episode_id)``: the ``reset(options=...)`` that plays it;
    * ``messages(observation, assistant)``: the chat of an observation, append-only from turn to
      turn (each step adds the reply and the next user turn);
    * ``cut_return(env, unfinished_reply)``: the return of a dialogue the token cap cut, after an
      unfinished reply or when the next user turn does not fit (``cut_rule`` says it in words);
    * ``check_options(env_options)``: refuses env options the dialogues cannot be played under;
      ``default_options``: the env options when none are given;
    * ``player``, ``agent``: the entry-point name and class of the agent that plays the trained
      model in evaluations (under ``access``)."""

    make_env: Callable[[str, dict[str, Any]], Any]
    reset_options: Callable[[str], dict[str, Any]]
    messages: Callable[[dict[str, Any], str], list[dict[str, str]]]
    cut_return: Callable[[Any, bool], float]
    cut_rule: str
    check_options: Callable[[dict[str, Any]], None]
    default_options: Mapping[str, Any]
    access: str
    player: str
    agent: type


@dataclass(frozen=True)
class PrivilegedInfo:
    """What a policy's critic alone sees while it trains (an asymmetric actor-critic): ``encode``
    turns the env's step ``info`` into ``size`` numbers in [0, 1] (e.g. the hidden state a
    listener must infer), which the training envs add to the observation as the leaf
    ``agents.ppo.PRIVILEGED_LEAF``. Evaluations never have it: the policy's actor must not read
    it, and a checkpoint records the observation without it."""

    size: int
    encode: Callable[[dict[str, Any]], np.ndarray]


@dataclass(frozen=True)
class PPOPolicy:
    """A PPO policy network: ``load()`` returns its class (imported when used);
    ``extends``: the policy whose checkpoints it may start from (``--init-from``), with
    ``extra_layers`` (name prefixes) keeping their initialization; ``privileged``: what its
    critic alone sees in training (``PrivilegedInfo``)."""

    load: Callable[[], type]
    extends: str | None = None
    extra_layers: tuple[str, ...] = ()
    privileged: PrivilegedInfo | None = None


@dataclass(frozen=True)
class TrainingMaterial:
    chat_agent: type | None = None
    demos: DemoSource | None = None
    tool_demos: DemoSource | None = None
    grpo_tasks: Mapping[str, DecisionTask] = field(default_factory=dict)
    dialogue_tasks: Mapping[str, DialogueTask] = field(default_factory=dict)
    ppo_policies: Mapping[str, PPOPolicy] = field(default_factory=dict)
    corpus: Callable[[], list[str]] | None = None
    instructions: Callable[[], list[str]] | None = None
    phrases: Callable[[], list[str]] | None = None
    # audio-language models under A+T (agents.audio_material)
    audio_chat_agent: type | None = None
    audio_demos: AudioDemoSource | None = None
    audio_grpo_tasks: Mapping[str, AudioDecisionTask] = field(default_factory=dict)
    default_for: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(set(self.default_for) - {f.name for f in fields(self)} - {"default_for"})
        if unknown:
            raise ValueError(f"default_for names {unknown}: not training material")


NO_MATERIAL = TrainingMaterial()


def training_material(env_id: str) -> TrainingMaterial:
    """The material ``env_id``'s family declares under its ``training_group`` (none: empty)."""
    group = family(env_id).training_group
    found = [ep for ep in entry_points(group=group) if ep.name == MATERIAL_ENTRY]
    if not found:
        return NO_MATERIAL
    material = found[0].load()
    if not isinstance(material, TrainingMaterial):
        raise TypeError(f"{found[0].value} (entry point {group}) is not a TrainingMaterial")
    return material


def grpo_task(name: str) -> tuple[str, DecisionTask]:
    """(env id, task) of the single-decision GRPO task ``name``, from whichever family declares it."""
    return _task("grpo_tasks", name)


def dialogue_task(name: str) -> tuple[str, DialogueTask]:
    """(env id, task) of the multi-turn GRPO task ``name``, from whichever family declares it."""
    return _task("dialogue_tasks", name)


def audio_grpo_task(name: str) -> tuple[str, AudioDecisionTask]:
    """(env id, task) of the audio GRPO task ``name``, from whichever family declares it."""
    return _task("audio_grpo_tasks", name)


def _task(kind: str, name: str):
    tasks = {
        task_name: (env_id, task)
        for env_id in env_ids()
        for task_name, task in getattr(training_material(env_id), kind).items()
    }
    if name not in tasks:
        raise ValueError(f"task must be one of {sorted(tasks)}, got {name!r}")
    return tasks[name]


def default_env(what: str) -> str:
    """The env a trainer of ``what`` (a ``TrainingMaterial`` field: ``demos``, ``grpo_tasks``,
    ``ppo_policies``, ...) uses when a run names none: the one whose family's material declares
    itself the default for it (``default_for``). None or several: a clear error asking for one."""
    claimed = [env_id for env_id in env_ids() if what in training_material(env_id).default_for]
    if len(claimed) != 1:
        why = "no family declares" if not claimed else f"{' and '.join(claimed)} each declare"
        raise ValueError(
            f"name the env: {why} itself the default for {what} (envs with it: {envs_with(what)})"
        )
    return claimed[0]


def default_task(kind: str) -> str:
    """The task a trainer of ``kind`` (``grpo_tasks``, ``audio_grpo_tasks``, ``dialogue_tasks``)
    trains when a run names none: the first its default family (``default_env``) declares."""
    tasks = getattr(training_material(default_env(kind)), kind)
    if not tasks:
        raise ValueError(f"name the task: the default family for {kind} declares none")
    return next(iter(tasks))


def envs_with(what: str) -> list[str]:
    """The registered env ids whose material has ``what`` (a ``TrainingMaterial`` field)."""
    return [env_id for env_id in env_ids() if getattr(training_material(env_id), what)]


# -- helpers the families' material shares -------------------------------------------------------
def demo(prompt: list[dict[str, str]], reply: str, **source: Any) -> Demo:
    """One demonstration: the chat an agent sends and the expert's reply, plus where it came from."""
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": reply}], **source}


def seeded_sample(items: Sequence, limit: int | None, seed: int) -> list:
    """``limit`` of ``items`` drawn with ``seed`` and kept in their order (all when None): a
    sample across every family of a list generated family by family."""
    if limit is None:
        return list(items)
    keep = np.random.default_rng(seed).permutation(len(items))[:limit]
    return [items[i] for i in sorted(keep)]


def decision_row(prompt, item_id: str, item_family: str, prompt_minus=None, item_id_minus=None) -> dict:
    """A GRPO row; without a minus side it is an ordinary group (it repeats its own)."""
    return {
        "prompt": prompt,
        "item_id": item_id,
        "item_family": item_family,
        "prompt_minus": prompt if prompt_minus is None else prompt_minus,
        "item_id_minus": item_id if item_id_minus is None else item_id_minus,
    }
