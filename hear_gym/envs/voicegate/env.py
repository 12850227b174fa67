"""``hear_gym/VoiceGate-v0``: act, stay silent or answer, from what was heard (VGBench).

An episode is one decision on one item of a family (``speaker_switch``, ``side_talk``,
``self_talk``, ``cue_validity``), split and set of conditions, all chosen by kwargs. ``reset``
draws an item with the env's seeded generator, or takes ``options={"item_id": ...}`` /
``options={"index": i}`` (position in ``env.items``) for evaluation sweeps. ``step`` takes one
action (Discrete, see ``voicegate_actions``; or ``step_decoded`` with a parsed text reply) and
terminates the episode. ``side_talk_cue`` (``"none"``, the default, or ``"turned_away"``)
chooses the side-talk rendering (see ``hear_gym.envs.voicegate.items.generator``).

Observation (Dict) of the base env, which is the transcript-only access condition T:

* ``transcript``: the words of the input, utterances in order (what an ASR front end gives);
* ``tools``: the tool inventory as JSON (names, descriptions, parameter schemas);
* ``action_mask``: valid Discrete actions.

The audio conditions are wrappers (``hear_gym.envs.voicegate.access``): ``item_audio`` adds
``audio`` / ``audio_length``, rendered by the env's ``item_audio()`` only when a wrapper asks.

``info`` carries the item's ground truth (target, addressees, sources, placements, cues) and
after ``step`` the outcome. Reward: ``REWARDS[reward]`` (``hear_gym.envs.voicegate.scoring``):
``paper`` by default, VoxGate's GRPO table exactly (+1 / -1, -0.2 more for malformed tool
syntax; on answer targets +0.5 answer, -1 mute, -0.5 empty or tool-only); ``strict_format``
and ``judged`` are the named alternatives.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.env_checks import require_finite, require_running
from hear_gym.core.records import SharedRecord
from hear_gym.core.reset_options import requested_episode
from hear_gym.core.spaces import discrete_index
from hear_gym.core.text import TEXT_CHARSET
from hear_gym.envs.voicegate.actions import MAX_UTTERANCES, N_ACTIONS, GateAction, action_mask, decode
from hear_gym.envs.voicegate.items.generator import all_items, check_side_talk_cue, select_items
from hear_gym.envs.voicegate.items.model import Family, Item
from hear_gym.envs.voicegate.items.pools import tool_inventory
from hear_gym.envs.voicegate.scenes import render_item
from hear_gym.envs.voicegate.scoring import REWARDS, Judge, KeywordJudge, score
from hear_gym.speech.cache import shared_render_cache

MAX_TRANSCRIPT_CHARS = 1_000
MAX_TOOLS_CHARS = 8_000
# Rendered inputs an env keeps (waveform and manifest, a few hundred kB each): a reset of an item
# seen before renders nothing (the room, the loudness and the hash cost milliseconds even with
# every TTS segment cached). 256 covers a family's test split (240 in speaker_switch).
RENDERED_ITEMS = 256
# Finished Discrete decisions an env keeps (reward and info record, ~1 kB each): every episode is
# one step, so without them each step would score, validate the tool call and build the outcome
# and episode records again for the same item and action. Covers every action on 256 items.
DECIDED_STEPS = RENDERED_ITEMS * N_ACTIONS
_MASKS = {n: action_mask(n).astype(bool) for n in range(1, MAX_UTTERANCES + 1)}  # read, never handed out


class VoiceGateEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        family: str = "speaker_switch",
        split: str | None = "test",
        conditions: tuple[str, ...] | list[str] | None = None,
        renderer: str = "espeak",
        audio_cache_dir: str | Path | None = None,
        reward: str = "paper",
        judge: Judge | None = None,
        render_mode: str | None = None,
        side_talk_cue: str = "none",
        item_ids: Sequence[str] | None = None,
    ) -> None:
        require_finite(locals())
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {sorted(REWARDS)}, got {reward!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if family not in {f.value for f in Family}:
            raise ValueError(f"family must be one of {[f.value for f in Family]}, got {family!r}")
        self.family = Family(family)
        self.side_talk_cue = check_side_talk_cue(side_talk_cue)
        if item_ids is not None:  # explicit items, of any family and split (evaluation sweeps)
            by_id = {item.item_id: item for item in all_items(side_talk_cue)}
            unknown = [i for i in item_ids if i not in by_id]
            if unknown:
                raise ValueError(f"unknown VoiceGate items {unknown[:3]}{'...' if len(unknown) > 3 else ''}")
            self.items = tuple(by_id[i] for i in item_ids)
        else:
            self.items = select_items(
                self.family, split, tuple(conditions) if conditions else None, side_talk_cue
            )
        if not self.items:
            raise ValueError(f"no {self.family.value} items for split={split!r}, conditions={conditions!r}")
        self._index = {item.item_id: i for i, item in enumerate(self.items)}
        self.render_mode = render_mode
        self.reward_fn = REWARDS[reward]
        self.judge = judge or KeywordJudge()
        self.cache = shared_render_cache(renderer, Path(audio_cache_dir) if audio_cache_dir else None)
        self._rendered = lru_cache(maxsize=RENDERED_ITEMS)(self._render)
        self._reset_views = cache(self._item_views)  # one entry per item of the env
        self._decided = lru_cache(maxsize=DECIDED_STEPS)(self._decide)
        self.tools_json = json.dumps(tool_inventory(), separators=(",", ":"))
        self.observation_space = spaces.Dict(
            {
                "transcript": spaces.Text(MAX_TRANSCRIPT_CHARS, min_length=1, charset=TEXT_CHARSET),
                "tools": spaces.Text(MAX_TOOLS_CHARS, min_length=1, charset=TEXT_CHARSET),
                "action_mask": spaces.MultiBinary(N_ACTIONS),
            }
        )
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.item: Item | None = None
        # waveform, manifest (read here) and the manifest that callers get copies of
        self._audio: tuple[np.ndarray, dict, SharedRecord] | None = None
        self._obs: dict[str, Any] | None = None
        self._drawn = -1  # index of self.item in self.items
        self._done = True

    # -- episode --------------------------------------------------------------------------
    def check_reset_options(self, options: dict) -> None:
        """Raises for reset options ``reset`` would refuse, changing nothing."""
        requested_episode(options, self._index)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        requested = requested_episode(options or {}, self._index)  # checked before any change
        super().reset(seed=seed)
        drawn = int(self.np_random.integers(len(self.items))) if requested is None else requested
        self.item = self.items[drawn]
        self._drawn = drawn
        self._done = False
        self._audio = None
        self._obs, info = self._reset_views(drawn)
        return self._observation(), info.copy()

    def step(self, action):
        require_running(self.item is not None, self._done)
        index = discrete_index(action, N_ACTIONS)
        # A Discrete decision on an item always ends alike (no judge reads it: an answer names
        # its utterance), so it is scored once; each step hands out a copy of the item's info
        # (the reset's) completed with a copy of the decision's part.
        reward, decision = self._decided(self._drawn, index, self._audio is not None)
        self._done = True
        info = self._reset_views(self._drawn)[1].copy()
        info.update(decision.copy())
        episode = info["episode"]  # holds the info's own target and outcome, as in step_decoded
        episode["target"], episode["outcome"] = info["item"]["target"], info["outcome"]
        return self._observation(), reward, True, False, info

    def _decide(self, drawn: int, index: int, rendered: bool) -> tuple[float, SharedRecord]:
        """Reward and the decision's part of the info (outcome, reply, episode record) of
        Discrete action ``index`` on the current item, ``drawn`` (``rendered``: its audio was
        rendered, so the episode record names it), computed as ``step_decoded`` computes them."""
        item = self.items[drawn]
        manifest = self._audio[1] if rendered else {}
        reward, info = self._finish(item, decode(index, len(item.utterances)), None, manifest)
        return reward, SharedRecord({key: info[key] for key in ("outcome", "reply", "episode")})

    def step_decoded(self, action: GateAction, reply: str | None = None):
        """Apply an already decoded action (the text-action wrapper parses replies into one)."""
        require_running(self.item is not None, self._done)
        reward, info = self._finish(self.item, action, reply, self._audio[1] if self._audio else {})
        self._done = True
        return self._observation(), reward, True, False, info

    def _finish(
        self, item: Item, action: GateAction, reply: str | None, manifest: dict
    ) -> tuple[float, dict]:
        """Reward and info of ``action`` on ``item``; ``manifest``: its rendered input's, ``{}``
        when nothing was rendered."""
        outcome = score(item, action, self.judge)
        reward = float(self.reward_fn(item, outcome))
        info = self._info(item)
        info["outcome"] = outcome.as_record()
        info["reply"] = reply
        info["episode"] = self._episode_record(item, info, reward, manifest)
        return reward, info

    @staticmethod
    def _episode_record(item: Item, info: dict[str, Any], reward: float, manifest: dict) -> dict[str, Any]:
        """The finished decision as ``results.jsonl`` stores it. ``audio`` names the rendered
        input (duration and PCM hash), ``{}`` when nothing was rendered (access T)."""
        return {
            "item_id": item.item_id,
            "group": item.group,
            "family": item.family.value,
            "condition": item.condition,
            "split": item.split,
            "transcript": item.transcript,
            "target": info["item"]["target"],
            "command_tool": item.command_tool(),
            "cues": dict(item.cues),
            "reply": info["reply"],
            "outcome": info["outcome"],
            "reward": reward,
            "audio": {k: manifest[k] for k in ("duration_s", "pcm16_sha256")} if manifest else {},
        }

    def item_audio(self) -> tuple[np.ndarray, dict] | None:
        """(waveform, manifest) of the current item, rendered on first request (and kept, see
        ``RENDERED_ITEMS``); None for the text-only condition. The waveform is shared and
        read-only; the manifest is the caller's own copy."""
        if self.item is None:
            raise RuntimeError("call reset() first")
        if not self.item.has_audio:
            return None
        if self._audio is None:
            self._audio = self._rendered(self._index[self.item.item_id])
        waveform, _, manifest = self._audio
        return waveform, manifest.copy()

    def _render(self, index: int) -> tuple[np.ndarray, dict, SharedRecord]:
        waveform, manifest = render_item(self.items[index], self.cache)
        waveform.flags.writeable = False  # shared by every episode of the item
        return waveform, manifest, SharedRecord(manifest)

    def action_masks(self) -> np.ndarray:
        """Valid Discrete actions (sb3-contrib's MaskablePPO reads this method)."""
        return _MASKS[len(self.item.utterances)].copy()

    # -- views ----------------------------------------------------------------------------
    def _item_views(self, drawn: int) -> tuple[dict[str, Any], SharedRecord]:
        """What a reset shows of item ``drawn``: the observation (its arrays are copied for each
        caller) and the info record."""
        item = self.items[drawn]
        mask = _MASKS[len(item.utterances)].astype(np.int8)
        mask.flags.writeable = False
        observation = {
            "transcript": item.transcript[:MAX_TRANSCRIPT_CHARS],
            "tools": self.tools_json,
            "action_mask": mask,
        }
        return observation, SharedRecord(self._info(item))

    def _observation(self) -> dict[str, Any]:
        return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in self._obs.items()}

    def _info(self, item: Item) -> dict[str, Any]:
        return {
            "item": item.as_record(),
            "item_id": item.item_id,
            "group": item.group,
            "family": item.family.value,
            "condition": item.condition,
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.item is None:
            return None
        return f"[{self.item.item_id}] {self.item.transcript}"
