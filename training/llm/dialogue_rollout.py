"""Whole dialogues as one token sequence each, for TRL's ``GRPOTrainer(rollout_func=...)``.

The env, its chat and its cut reward are the family's dialogue task (``agents.training_material.
DialogueTask``; Hear2Act's is ``agents.hear2act.dialogue_task``). A dialogue's prompt is the chat
of its reset observation (Hear2Act: the P6a system prompt, the user's request, the standardized
opening, the user's reaction). Its completion is
the rest of the dialogue in the chat template's layout::

    reply 1 + EOS | env tokens: end of turn, the user's answer, the next generation prompt |
    reply 2 + EOS | env tokens ... | reply n + EOS

``env_mask`` is 1 on every token the model sampled (each reply and its stop token) and 0 on every
token the environment wrote, so user turns never enter the loss. The env tokens after a reply
are what the tokenizer's chat template adds between the assistant's reply and the next
generation prompt, rendered from the env's next observation (``between_turns_ids``).

``DialogueRollout.__call__(prompts, trainer)`` plays all (already repeated) prompts in lockstep:
one batched ``generate`` per turn over the live dialogues (left padding with an explicit
attention mask, so a pad token equal to EOS never hides the EOS tokens inside the context), each
reply cut after its first stop token, the env stepped with the decoded reply.

The cap (``trainer.args.max_completion_length``) counts the WHOLE completion, model and env
tokens. A dialogue is *cut* (``cut=True``) when a reply reaches the cap before its stop token
(that unfinished reply is never played) or when the next user turn does not fit (its env tokens
are kept up to the cap). A cut dialogue's reward is the task's ``cut_return`` (its ``cut_rule``;
Hear2Act: no final reward, the step rewards paid so far, an unfinished reply charged like an
invalid one).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import torch

from agents.training_material import DialogueTask

_PLACEHOLDER = "PLACEHOLDER_REPLY"  # the assistant content when rendering what a template adds around a reply


# -- the chat template as token ids ----------------------------------------------------------------
def render(tokenizer, messages: Sequence[dict[str, str]], generation_prompt: bool) -> str:
    return tokenizer.apply_chat_template(
        list(messages), tokenize=False, add_generation_prompt=generation_prompt
    )


def token_ids(tokenizer, text: str) -> list[int]:
    """Token ids of rendered template text (its special tokens are already in the text)."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def prompt_ids(tokenizer, messages: Sequence[dict[str, str]]) -> list[int]:
    return token_ids(tokenizer, render(tokenizer, messages, generation_prompt=True))


def between_turns_ids(tokenizer, messages: Sequence[dict[str, str]], stop_text: str | None) -> list[int]:
    """The env tokens after the model's reply in ``messages[-2]`` (an assistant message): the end
    of that turn (less the stop token the model generated, ``stop_text``), the user turn
    ``messages[-1]``, and the next generation prompt."""
    if messages[-2]["role"] != "assistant" or messages[-1]["role"] != "user":
        raise ValueError("between_turns_ids needs [..., assistant reply, user answer]")
    history = [*messages[:-2], {"role": "assistant", "content": _PLACEHOLDER}]
    closed = render(tokenizer, history, generation_prompt=False)
    following = render(tokenizer, [*history, messages[-1]], generation_prompt=True)
    if not following.startswith(closed) or _PLACEHOLDER not in closed:
        raise ValueError(
            "the tokenizer's chat template does not render a dialogue append-only (a later turn rewrites "
            "an earlier one), so a whole dialogue cannot be one token sequence"
        )
    end_of_turn = closed[closed.rindex(_PLACEHOLDER) + len(_PLACEHOLDER) :]
    if stop_text and end_of_turn.startswith(stop_text):
        end_of_turn = end_of_turn[len(stop_text) :]
    return token_ids(tokenizer, end_of_turn + following[len(closed) :])


# -- one dialogue ------------------------------------------------------------------------------------
@dataclass
class Dialogue:
    item_id: str
    env: gym.Env
    messages: list[dict[str, str]]
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    turns: int = 0  # replies played
    invalid_actions: int = 0
    ended: bool = False  # terminated or truncated by the env
    cut: bool = False  # cut by the token cap
    episode_return: float = 0.0
    success: bool = False

    @property
    def live(self) -> bool:
        return not (self.ended or self.cut)

    def add(self, ids: Sequence[int], model: bool) -> None:
        self.completion_ids.extend(int(i) for i in ids)
        self.env_mask.extend([int(model)] * len(ids))


def prompt_key(messages: Sequence[dict[str, Any]]) -> str:
    return json.dumps([[m["role"], m["content"]] for m in messages])


# -- the rollout -------------------------------------------------------------------------------------
class DialogueRollout:
    """TRL's ``rollout_func``: plays each prompt's episode to its end against the env (``task``).

    ``item_ids``: the episodes the dataset holds; ``env_options``: the env's kwargs (Hear2Act:
    ``feedback``, ``reward``, ``turn_cost``, ``max_turns``, ...); every dialogue of an episode
    starts from ``reset(seed=reset_seed)``, so its prompt is the same in every group and epoch.
    ``history`` keeps one row of statistics per call (what ``curve.jsonl`` logs)."""

    def __init__(
        self,
        task: DialogueTask,
        item_ids: Sequence[str],
        env_options: dict[str, Any],
        reset_seed: int = 0,
        assistant: str = "text",
    ) -> None:
        task.check_options(env_options)
        self.task, self.reset_seed, self.assistant = task, reset_seed, assistant
        self.env_options = {**env_options, "assistant": assistant}
        self.prompts: dict[str, list[dict[str, str]]] = {}
        self.item_of: dict[str, str] = {}  # prompt key -> item id (TRL passes only prompts)
        for item_id in item_ids:
            env = task.make_env(item_id, self.env_options)
            messages = task.messages(self._reset(env, item_id), assistant)
            key = prompt_key(messages)
            if key in self.item_of:
                raise ValueError(f"items {self.item_of[key]!r} and {item_id!r} open with the same prompt")
            self.item_of[key], self.prompts[item_id] = item_id, messages
        self.history: list[dict[str, float]] = []

    def _reset(self, env: gym.Env, item_id: str) -> dict[str, Any]:
        observation, _ = env.reset(seed=self.reset_seed, options=self.task.reset_options(item_id))
        return observation

    def dataset(self):
        """The training dataset: one row per item, ``prompt`` (conversational) and ``item_id``."""
        from datasets import Dataset

        return Dataset.from_list([{"prompt": m, "item_id": s} for s, m in self.prompts.items()])

    def start(self, prompt: Sequence[dict[str, Any]], tokenizer) -> Dialogue:
        key = prompt_key(prompt)
        if key not in self.item_of:
            raise KeyError("a prompt that is not in this rollout's dataset")
        item_id = self.item_of[key]
        env = self.task.make_env(item_id, self.env_options)
        messages = self.task.messages(self._reset(env, item_id), self.assistant)
        if prompt_key(messages) != key:
            raise RuntimeError(f"item {item_id!r} no longer opens with its dataset prompt")
        return Dialogue(item_id, env, messages, prompt_ids(tokenizer, messages))

    def __call__(self, prompts: list, trainer) -> dict[str, list]:
        tokenizer = trainer.processing_class
        cap = int(trainer.args.max_completion_length)
        dialogues = [self.start(p, tokenizer) for p in prompts]
        model = _generation_model(trainer)
        stop_ids = _stop_ids(trainer, model, tokenizer)
        was_training = model.training
        model.eval()
        try:
            while live := [d for d in dialogues if d.live]:
                budgets = [cap - len(d.completion_ids) for d in live]
                replies = generate_replies(
                    model,
                    tokenizer,
                    [d.prompt_ids + d.completion_ids for d in live],
                    budgets,
                    stop_ids,
                    trainer.args,
                )
                for dialogue, reply, budget in zip(live, replies, budgets, strict=True):
                    self.play(dialogue, reply, budget, tokenizer, stop_ids)
        finally:
            model.train(was_training)
            for d in dialogues:
                d.env.close()
        self.history.append(summarize(dialogues))
        return {
            "prompt_ids": [d.prompt_ids for d in dialogues],
            "completion_ids": [d.completion_ids for d in dialogues],
            "logprobs": None,
            "env_mask": [d.env_mask for d in dialogues],
            "episode_return": [d.episode_return for d in dialogues],
            "cut": [d.cut for d in dialogues],
            "turns": [d.turns for d in dialogues],
            "invalid_actions": [d.invalid_actions for d in dialogues],
            "success": [d.success for d in dialogues],
            "item_id": [d.item_id for d in dialogues],
        }

    def play(self, d: Dialogue, reply: list[int], budget: int, tokenizer, stop_ids: Sequence[int]) -> None:
        """One turn: the reply's tokens (model), the env's step, the user's answer (env tokens)."""
        d.add(reply, model=True)
        finished = bool(reply) and reply[-1] in stop_ids
        if not finished:  # the cap cut the reply: never played
            d.cut, d.episode_return = True, self.task.cut_return(d.env, True)
            return
        text = tokenizer.decode(reply, skip_special_tokens=True)
        observation, _, terminated, truncated, info = d.env.step(text)
        d.turns += 1
        d.invalid_actions += info["invalid_action"] is not None
        if terminated or truncated:
            d.ended = True
            d.episode_return, d.success = float(info["episode"]["return"]), bool(info["success"])
            return
        messages = self.task.messages(observation, self.assistant)
        if messages[: len(d.messages)] != d.messages or len(messages) != len(d.messages) + 2:
            raise RuntimeError("the dialogue's messages are not append-only")  # a bug, not a model error
        d.messages = messages
        env_ids = between_turns_ids(tokenizer, messages, tokenizer.decode(reply[-1:]))
        room = budget - len(reply)
        d.add(env_ids[:room], model=False)
        if len(env_ids) >= room:  # no room for the user's turn and a next reply
            d.cut, d.episode_return = True, self.task.cut_return(d.env, False)


def generate_replies(
    model, tokenizer, contexts: list[list[int]], budgets: list[int], stop_ids: Sequence[int], args
) -> list[list[int]]:
    """One sampled reply per context, each cut after its first stop token and to its budget.

    Left padding with an explicit attention mask built from lengths, never from the pad token:
    with ``pad_token_id == eos_token_id`` the EOS ending every earlier turn stays attended."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop_ids[0]
    width = max(len(c) for c in contexts)
    input_ids = torch.tensor([[pad_id] * (width - len(c)) + c for c in contexts], device=model.device)
    attention_mask = torch.tensor(
        [[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=model.device
    )
    with torch.no_grad():
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=max(budgets),
            do_sample=True,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            min_p=args.min_p,
            repetition_penalty=args.repetition_penalty,
            eos_token_id=list(stop_ids),
            pad_token_id=pad_id,
        )
    replies = []
    for row, budget in zip(out[:, width:].tolist(), budgets, strict=True):
        row = row[:budget]
        end = next((i for i, t in enumerate(row) if t in stop_ids), None)
        replies.append(row if end is None else row[: end + 1])
    return replies


def _generation_model(trainer):
    accelerator = getattr(trainer, "accelerator", None)
    return trainer.model if accelerator is None else accelerator.unwrap_model(trainer.model)


def _stop_ids(trainer, model, tokenizer) -> list[int]:
    """The trainer's EOS ids (TRL: the tokenizer's EOS and the generation config's)."""
    ids = getattr(trainer, "eos_token_ids", None)
    if ids:
        return list(ids)
    configured = model.generation_config.eos_token_id
    configured = (
        [] if configured is None else [configured] if isinstance(configured, int) else list(configured)
    )
    return [tokenizer.eos_token_id, *(i for i in configured if i != tokenizer.eos_token_id)]


def summarize(dialogues: Sequence[Dialogue]) -> dict[str, float]:
    """Per-call statistics: mean return, cut and success fractions, invalid-action rate (per
    reply played), mean turns and token counts."""
    n = len(dialogues)
    turns = sum(d.turns for d in dialogues)
    return {
        "dialogues": n,
        "reward": sum(d.episode_return for d in dialogues) / n,
        "cut_fraction": sum(d.cut for d in dialogues) / n,
        "success": sum(d.success for d in dialogues) / n,
        "invalid_action_rate": sum(d.invalid_actions for d in dialogues) / turns if turns else 0.0,
        "turns": turns / n,
        "model_tokens": sum(sum(d.env_mask) for d in dialogues) / n,
        "completion_tokens": sum(len(d.completion_ids) for d in dialogues) / n,
    }


def episode_return_reward(completions, episode_return, **kwargs) -> list[float]:
    """The reward function: each dialogue's env return (a cut dialogue's by the task's cut rule)."""
    return [float(r) for r in episode_return]
