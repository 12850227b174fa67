"""``hear_gym/Onset-v0``: when does partial speech license an action? (PACT-SLM)

An episode is one source trajectory of a contrast group under one rendering (episode id
``GROUP/BRANCH/RENDERING``, e.g. ``book_uncertainty-03/a/noise15``), streamed as its five nested
prefixes (0.2, 0.4, 0.6, 0.8, 1.0 of the waveform). ``reset`` shows prefix 0; each ``step`` takes
the decision for the prefix on show (Discrete over ``ACTIONS``: Wait or one action label; or
``step_decoded`` with a parsed text reply) and shows the next prefix. The episode terminates after
the fifth decision, so every trajectory is scored at every prefix, as the paper scores it.
``reset`` draws an episode with the env's seeded generator, or takes ``options={"item_id": ...}``
or ``options={"index": i}`` (position in ``env.episodes``).

The speech comes from ``renderer`` (a name of ``hear_gym.speech.renderers.RENDERERS``: ``espeak``,
the default, or ``praat``, ...; see ``scenes``); ``audio_cache_dir`` keeps its source renderings
on disk, which pays for the slower renderers across processes.

Observation (Dict) of the base env, which is the text-only access condition T:

* ``text``: the authored token-fraction text of the prefix (the first ``round(f * n)`` words of
  the transcript; a controlled text feature, not a time-aligned transcript);
* ``prefix_index``: which prefix is on show (0-4, shape (1,));
* ``action_mask``: every label is always allowed.

The audio conditions are wrappers (``hear_gym.envs.onset.access``). ``info`` carries the ground
truth (the branch's action, the assigned onset, the prefix's target) and is never observed.

Rewards per decision (``REWARDS``), with k* the assigned onset:

==================  ==========================================  ======
prefix              decision                                    reward
==================  ==========================================  ======
before k*           Wait                                        0
before k*           Think or Abstain (internal)                 -0.25
before k*           Ask-Clarify, Call-Tool, Interrupt-Safe      -1
at or after k*      the source utterance's action               +1
at or after k*      Wait, or a wrong internal label             -0.25
at or after k*      a wrong exposed label                       -1
any                 an unparseable text reply (``invalid``)     -1
==================  ==========================================  ======

An invalid Discrete index raises ``ValueError``; an unparseable text reply is recorded as
``invalid`` (wrong at every prefix, never counted as an exposed action) and uses the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.env_checks import require_finite, require_running
from hear_gym.core.reset_options import requested_episode
from hear_gym.core.spaces import discrete_index
from hear_gym.core.text import TEXT_CHARSET
from hear_gym.envs.onset.actions import ACTIONS, EXPOSED, INTERNAL, INVALID, N_ACTIONS, WAIT, action_mask
from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.groups.generator import item_ids as split_item_ids
from hear_gym.envs.onset.groups.model import N_PREFIXES, PREFIX_FRACTIONS, RENDERINGS, parse_item_id
from hear_gym.envs.onset.scenes import DEFAULT_RENDERER, RenderedGroup, rendered_group, source_cache

MAX_TEXT_CHARS = 200
REWARDS = {"correct": 1.0, "exposed": -1.0, "internal": -0.25, "late_wait": -0.25, "invalid": -1.0}


def token_fraction_text(transcript: str, k: int) -> str:
    """The first ``round(PREFIX_FRACTIONS[k] * n)`` words (at least one) of an ``n``-word transcript."""
    words = transcript.split()
    return " ".join(words[: max(1, int(PREFIX_FRACTIONS[k] * len(words) + 0.5))])


def decision_reward(decision: str, target: str) -> float:
    if decision == INVALID:
        return REWARDS["invalid"]
    if decision == target:
        return 0.0 if target == WAIT else REWARDS["correct"]
    if decision in EXPOSED:
        return REWARDS["exposed"]
    if decision in INTERNAL:
        return REWARDS["internal"]
    return REWARDS["late_wait"]  # Wait at or after the onset


class OnsetEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        split: str = "test",
        renderings: Sequence[str] | None = None,
        item_ids: Sequence[str] | None = None,
        render_mode: str | None = None,
        renderer: str = DEFAULT_RENDERER,
        audio_cache_dir: str | Path | None = None,
    ) -> None:
        require_finite(locals())
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if not isinstance(renderer, str):
            raise ValueError(f"renderer must be a renderer name, got {renderer!r}")
        self.renderer = renderer
        self.audio_cache_dir = Path(audio_cache_dir) if audio_cache_dir is not None else None
        source_cache(renderer, self.audio_cache_dir)  # an unknown renderer (or missing extra) fails here
        if item_ids is not None:
            for item in item_ids:
                group_id, _, _ = parse_item_id(item)
                if group_id not in groups_by_id() or item not in groups_by_id()[group_id].item_ids():
                    raise ValueError(f"unknown Onset item {item!r}")
            self.episodes = tuple(item_ids)
        else:
            wanted = tuple(renderings) if renderings is not None else RENDERINGS
            unknown = sorted(set(wanted) - set(RENDERINGS))
            if unknown:
                raise ValueError(f"renderings must be among {RENDERINGS}, got {unknown}")
            self.episodes = tuple(e for e in split_item_ids(split) if parse_item_id(e)[2] in wanted)
        if not self.episodes:
            raise ValueError(f"no Onset items for split={split!r}, renderings={renderings!r}")
        self._index = {e: i for i, e in enumerate(self.episodes)}
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "text": spaces.Text(MAX_TEXT_CHARS, min_length=1, charset=TEXT_CHARSET),
                "prefix_index": spaces.Box(0, N_PREFIXES - 1, (1,), np.int64),
                "action_mask": spaces.MultiBinary(N_ACTIONS),
            }
        )
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.item_id: str | None = None
        self.k = 0
        self._decisions: list[str] = []
        self._rewards: list[float] = []
        self._rendered: RenderedGroup | None = None

    # -- episode --------------------------------------------------------------------------
    def check_reset_options(self, options: dict) -> None:
        """Raises for reset options ``reset`` would refuse, changing nothing."""
        requested_episode(options, self._index)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        requested = requested_episode(options or {}, self._index)  # checked before any change
        super().reset(seed=seed)
        drawn = int(self.np_random.integers(len(self.episodes))) if requested is None else requested
        self.item_id = self.episodes[drawn]
        self.group_id, self.branch_id, self.rendering = parse_item_id(self.item_id)
        self.group = groups_by_id()[self.group_id]
        self.targets = self.group.targets(self.branch_id)
        self.k = 0
        self._decisions, self._rewards = [], []
        self._rendered = None
        return self._observation(), self._info()

    def step(self, action):
        require_running(self.item_id is not None, len(self._decisions) == N_PREFIXES)
        return self.step_decoded(ACTIONS[discrete_index(action, N_ACTIONS)])

    def step_decoded(self, decision: str, reply: str | None = None):
        """Apply an already decoded label (or ``INVALID``; the text-action wrapper parses replies)."""
        require_running(self.item_id is not None, len(self._decisions) == N_PREFIXES)
        if decision not in ACTIONS and decision != INVALID:
            raise ValueError(f"unknown Onset decision {decision!r}; labels: {list(ACTIONS)}")
        target = self.targets[self.k]
        reward = decision_reward(decision, target)
        self._decisions.append(decision)
        self._rewards.append(reward)
        terminated = len(self._decisions) == N_PREFIXES
        if not terminated:
            self.k += 1  # info, like the observation, now describes the next prefix
        info = {**self._info(), "decision": decision, "decision_target": target, "reply": reply or ""}
        if terminated:
            info["episode"] = self._episode_record()
        return self._observation(), reward, terminated, False, info

    def _episode_record(self) -> dict[str, Any]:
        """The finished trajectory as ``results.jsonl`` stores it (what ``metrics`` reads)."""
        audio = {}
        if self._rendered is not None:
            manifest = self._rendered.manifest
            audio = {
                "duration_s": manifest["duration_s"],
                "prefix_ends": manifest["prefix_ends"],
                "pcm16_sha256": manifest["pcm16_sha256"][f"{self.branch_id}/{self.rendering}"],
            }
        return {
            "item_id": self.item_id,
            "group_id": self.group_id,
            "domain": self.group.domain,
            "split": self.group.split,
            "branch": self.branch_id,
            "rendering": self.rendering,
            "action": self.group.branch(self.branch_id).action,
            "onset_index": self.group.onset_index,
            "targets": list(self.targets),
            "predictions": list(self._decisions),
            "rewards": list(self._rewards),
            "return": float(sum(self._rewards)),
            "audio": audio,
        }

    def action_masks(self) -> np.ndarray:
        """Valid actions (sb3-contrib convention): every label, always."""
        return action_mask()

    def prefix_audio(self) -> tuple[np.ndarray, dict]:
        """(waveform of the prefix on show, its manifest entries); rendered on first request.
        The waveform is a read-only view."""
        if self.item_id is None:
            raise RuntimeError("call reset() first")
        if self._rendered is None:
            self._rendered = rendered_group(self.group_id, self.renderer, self.audio_cache_dir)
        wave = self._rendered.prefix(self.branch_id, self.rendering, self.k)
        return wave, {"prefix_samples": len(wave)}

    # -- views ----------------------------------------------------------------------------
    def _observation(self) -> dict[str, Any]:
        return {
            "text": token_fraction_text(self.group.transcript, self.k)[:MAX_TEXT_CHARS],
            "prefix_index": np.array([self.k], dtype=np.int64),
            "action_mask": action_mask(),
        }

    def _info(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "group_id": self.group_id,
            "domain": self.group.domain,
            "rendering": self.rendering,
            "action": self.group.branch(self.branch_id).action,
            "onset_index": self.group.onset_index,
            "prefix_index": self.k,
            "target": self.targets[self.k],
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.item_id is None:
            return None
        return f"[{self.item_id} prefix {self.k + 1}/{N_PREFIXES}] {token_fraction_text(self.group.transcript, self.k)}"
