"""``hear_gym/DeliveryPlan-v0``: plan how to say a fixed utterance from cited evidence, then change
only what an edited cue licenses (VoxReason, arXiv:2609.03203).

An episode is one case (episode id = case id, e.g. ``vr-017``) played in two steps: step 0 shows
the original case, step 1 the edited one (the source record replaced, everything else fixed).
Each step takes the planner's output for the side on show (see ``actions`` for the three
formats) and scores it with the verifier; after step 1 the pair is scored too, so
counterfactual consistency is measured on the agent's own two plans.

Observation (Dict) of the base env, which is access condition ``T`` (labels as text):

* ``text``: the case side as a prompt: utterance with word indices, role, scene and the three
  evidence records (the utterance, the speaker's take of the line and their take of the other
  line), each with its cue id; the takes name their emotion and intensity. The records' order
  and ids are drawn at reset from the env's generator (``display``), so neither says anything
  about a record; every record gets a new id on the edited side;
* ``step``: 0 (original) or 1 (edited), shape (1,);
* ``action_mask``: over the ``discrete`` catalogue, every entry always allowed.

The audio conditions are wrappers (``access``). ``info`` holds the ground truth (source key,
expected plan, gold evidence, declared delta) and every verifier metric; it is never observed.

Reward per step: the side's citation-required grounded score (``reward="gcite"``) by default;
``reward`` may name another case metric (``grounded_score``, ``plan_slot_accuracy``,
``evidence_f1``) or ``counterfactual_consistency`` (0 at step 0, the pair's consistency at
step 1). A malformed text reply is scored as the verifier's malformed case and uses the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.env_checks import require_finite, require_running
from hear_gym.core.reset_options import requested_episode
from hear_gym.core.spaces import discrete_index
from hear_gym.core.text import TEXT_CHARSET
from hear_gym.envs.deliveryplan.actions import (
    N_CATALOGUE,
    decode_catalogue,
    decode_typed,
    encode_typed,
    typed_space,
)
from hear_gym.envs.deliveryplan.case_tables import (
    MAX_TEXT_CHARS,
    CaseTables,
    SideTables,
    case_tables,
    output_record,
    side_prompt,
)
from hear_gym.envs.deliveryplan.cases import Case, CaseView, cases_by_id
from hear_gym.envs.deliveryplan.display import Display, draw_display
from hear_gym.envs.deliveryplan.splits import PARTITIONS
from hear_gym.envs.deliveryplan.splits import item_ids as split_item_ids
from hear_gym.envs.deliveryplan.verifier import PlannerOutput, score_case, score_pair

N_STEPS = 2
# the arrays every observation copies (a copy is cheaper than building one)
_ALL_VALID = np.ones(N_CATALOGUE, dtype=np.int8)
_STEP_ARRAYS = tuple(np.array([side], dtype=np.int64) for side in range(N_STEPS))
PAIR_REWARD = "counterfactual_consistency"
REWARD_OPTIONS = ("gcite", "grounded_score", "plan_slot_accuracy", "evidence_f1", PAIR_REWARD)


class DeliveryPlanEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        split: str = "test",
        partition: str = "public",
        item_ids: Sequence[str] | None = None,
        reward: str = "gcite",
        render_mode: str | None = None,
    ) -> None:
        require_finite(locals())
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if partition not in PARTITIONS:
            raise ValueError(f"partition must be one of {PARTITIONS}, got {partition!r}")
        if reward not in REWARD_OPTIONS:
            raise ValueError(f"reward must be one of {REWARD_OPTIONS}, got {reward!r}")
        known = cases_by_id()
        if item_ids is not None:
            unknown = [i for i in item_ids if i not in known]
            if unknown or not item_ids:
                raise ValueError(f"unknown DeliveryPlan cases {unknown}; ids are vr-000 .. vr-099")
            self.episodes = tuple(item_ids)
        else:
            self.episodes = split_item_ids(split, partition)
        self.split, self.partition, self.reward_name = split, partition, reward
        self._index = {e: i for i, e in enumerate(self.episodes)}
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {
                "text": spaces.Text(MAX_TEXT_CHARS, min_length=1, charset=TEXT_CHARSET),
                "step": spaces.Box(0, N_STEPS - 1, (1,), np.int64),
                "action_mask": spaces.MultiBinary(N_CATALOGUE),
            }
        )
        self.action_space = typed_space()
        self.case: Case | None = None
        self.side = 0
        self._tables: CaseTables | None = None
        self.display: Display | None = None
        self._outputs: list[PlannerOutput] = []
        self._output_records: list[dict[str, Any]] = []
        self._played: list[int | None] = []  # per step: its catalogue entry, None for other formats
        self._replies: list[str] = []
        self._scores: list[dict[str, float]] = []
        self._rewards: list[float] = []

    # -- episode --------------------------------------------------------------------------
    @property
    def view(self) -> CaseView:
        return self._side_tables().view

    def _side_tables(self) -> SideTables:
        if self.case is None:
            raise RuntimeError("call reset() first")
        return self._tables.sides[self.side]

    def check_reset_options(self, options: dict) -> None:
        """Raises for reset options ``reset`` would refuse, changing nothing."""
        requested_episode(options, self._index)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        requested = requested_episode(options or {}, self._index)
        super().reset(seed=seed)
        drawn = int(self.np_random.integers(len(self.episodes))) if requested is None else requested
        self._tables = case_tables(self.episodes[drawn])
        self.case = self._tables.case
        self.display = self._draw_display()
        self.side = 0
        self._outputs, self._output_records, self._played = [], [], []
        self._replies, self._scores, self._rewards = [], [], []
        return self._observation(), self._info()

    def _draw_display(self) -> Display:
        """The episode's record order and cue ids, from the env's generator alone."""
        return draw_display(self.np_random)

    def step(self, action):
        require_running(self.case is not None, len(self._outputs) == N_STEPS)
        return self.step_decoded(
            decode_typed(action, self.display.shown_ids(self.side), len(self.case.words))
        )

    def step_catalogue(self, action):
        """Play a ``discrete`` action (an index into ``actions.CATALOGUE``) as the typed action it
        stands for; its decoding and scores are kept per case side (``case_tables``)."""
        self._side_tables()  # "call reset() first" before any check of the action
        index = discrete_index(action, N_CATALOGUE)
        require_running(self.case is not None, len(self._outputs) == N_STEPS)
        play = self._tables.play(self.side, index, self.display.order)
        return self._advance(play.output, dict(play.scores), play.record.copy(), index, None)

    def step_decoded(self, output: PlannerOutput, reply: str | None = None):
        """Score a decoded planner output for the side on show, its citations the episode's cue
        ids (the text wrapper parses replies)."""
        require_running(self.case is not None, len(self._outputs) == N_STEPS)
        if not isinstance(output, PlannerOutput):
            raise TypeError(f"step_decoded takes a PlannerOutput, got {type(output).__name__}")
        output = PlannerOutput(self.display.to_names(self.side, output.citations), output.plan)
        view = self.view
        scores = score_case(output, view.gold_evidence, view.decisive_cue, view.expected_plan)
        return self._advance(output, scores, output_record(output), None, reply)

    def _advance(
        self,
        output: PlannerOutput,
        scores: dict[str, float],
        record: dict[str, Any],
        played: int | None,
        reply: str | None,
    ):
        """Record the side's scored output (``record``: its episode-record entry; ``played``: its
        catalogue entry or None) and move on: to the edited side, or to the pair's scores."""
        self._outputs.append(output)
        self._output_records.append(record)
        self._played.append(played)
        self._replies.append(reply or "")
        self._scores.append(scores)
        terminated = len(self._outputs) == N_STEPS
        pair = self._pair_scores() if terminated else None
        if self.reward_name == PAIR_REWARD:
            reward = pair[PAIR_REWARD] if pair else 0.0
        else:
            reward = scores[self.reward_name]
        self._rewards.append(float(reward))
        if not terminated:
            self.side = 1  # the observation and info now describe the edited case
        info = self._info()
        info["scores"], info["malformed"], info["reply"] = scores, output.malformed, reply or ""
        if terminated:
            info["pair_scores"] = pair
            info["episode"] = self._episode_record(pair)
        return self._observation(), float(reward), terminated, False, info

    def _pair_scores(self) -> dict[str, float]:
        original, edited = self._played
        if original is not None and edited is not None:
            return self._tables.pair(original, edited)
        return score_pair(self._outputs[0].plan, self._outputs[1].plan, self.case.declared_delta)

    def _episode_record(self, pair: dict[str, float]) -> dict[str, Any]:
        """The finished case as ``results.jsonl`` stores it (what ``report`` reads)."""
        tables = self._tables
        return {
            "item_id": self.case.case_id,
            "split": self.split,
            "partition": self.partition,
            "source_key": tables.source_key,
            "edited_key": tables.edited_key,
            "declared_delta": tables.declared_delta.copy(),
            "outputs": list(self._output_records),
            "replies": list(self._replies),
            "malformed": [o.malformed for o in self._outputs],
            "case_scores": list(self._scores),
            "pair_scores": pair,
            "rewards": list(self._rewards),
            "return": float(sum(self._rewards)),
        }

    def catalogue_typed(self, index: int) -> dict[str, Any]:
        """The typed action catalogue entry ``index`` stands for on the side on show."""
        output = decode_catalogue(discrete_index(index, N_CATALOGUE), self.display.order)
        listed = self.display.shown_ids(self.side)
        cited = frozenset(self.display.to_ids(self.side, output.citations))
        return encode_typed(PlannerOutput(cited, output.plan), listed)

    def action_masks(self) -> np.ndarray:
        """Valid ``discrete`` actions (sb3-contrib convention): every catalogue entry, always."""
        return _ALL_VALID.copy()

    def source_audio_request(self) -> tuple[str, str, str, str]:
        """(statement, emotion, intensity, voice) of the source record on show: what the audio
        conditions render."""
        source = self.view.source
        return source.text, source.emotion, source.intensity, source.voice

    # -- views ----------------------------------------------------------------------------
    def prompt(self, *, labels: bool = True) -> str:
        self._side_tables()  # "call reset() first"
        return side_prompt(self.case, self.side, self.display, labels=labels)

    def _observation(self) -> dict[str, Any]:
        return {
            "text": self.prompt(labels=True),
            "step": _STEP_ARRAYS[self.side].copy(),
            "action_mask": _ALL_VALID.copy(),
        }

    def _info(self) -> dict[str, Any]:
        info = self._side_tables().info.copy()
        shown = self.display.ids[self.side]
        info["gold_evidence"] = self.display.to_ids(self.side, info["gold_records"])
        info["decisive_cue"] = shown[self.view.decisive_cue]
        info["cue_ids"] = self.display.shown_ids(self.side)
        return info

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.case is None:
            return None
        return f"[{self.case.case_id} step {self.side + 1}/{N_STEPS}]\n{self.prompt(labels=True)}"
