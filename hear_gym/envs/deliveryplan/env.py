"""``hear_gym/DeliveryPlan-v0``: plan how to say a fixed utterance from cited evidence, then change
only what an edited cue licenses (VoxReason, arXiv:2609.03203).

An episode is one case (episode id = case id, e.g. ``vr-017``) played in two steps: step 0 shows
the original case, step 1 the edited one (the source record replaced, everything else fixed).
Each step takes the planner's output for the side on show (see ``actions`` for the three
formats) and scores it with the verifier; after step 1 the pair is scored too, so
counterfactual consistency is measured on the agent's own two plans.

Observation (Dict) of the base env, which is access condition ``T`` (labels as text):

* ``text``: the case side as a prompt: utterance with word indices, role, scene and the four
  evidence records, each with its cue id; the source record names its emotion and intensity;
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
from hear_gym.core.text import TEXT_CHARSET
from hear_gym.envs.deliveryplan.actions import N_CATALOGUE, decode_typed, typed_space
from hear_gym.envs.deliveryplan.cases import SOURCE_KIND, Case, CaseView, cases_by_id
from hear_gym.envs.deliveryplan.plan import key_name
from hear_gym.envs.deliveryplan.splits import PARTITIONS, split_ids
from hear_gym.envs.deliveryplan.verifier import PlannerOutput, score_case, score_pair

MAX_TEXT_CHARS = 600
N_STEPS = 2
PAIR_REWARD = "counterfactual_consistency"
REWARD_OPTIONS = ("gcite", "grounded_score", "plan_slot_accuracy", "evidence_f1", PAIR_REWARD)


def side_prompt(case: Case, view: CaseView, *, labels: bool) -> str:
    """The case side as text; ``labels=False`` hides the source record's emotion and intensity
    (its cue id stays: it is what the planner cites)."""
    words = " ".join(f"{i}:{w}" for i, w in enumerate(case.words))
    lines = [f"utterance: {case.utterance} (words {words})", "evidence:"]
    for record in view.records:
        if record.kind != SOURCE_KIND:
            lines.append(f"[{record.cue_id}] {record.kind}: {record.text}")
        elif labels:
            lines.append(
                f"[{record.cue_id}] source: emotion {record.emotion}, intensity {record.intensity} "
                f'("{record.text}", voice {record.voice})'
            )
        else:
            lines.append(f"[{record.cue_id}] source: the recording you hear")
    return "\n".join(lines)


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
            self.episodes = split_ids(split, partition)
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
        self._outputs: list[PlannerOutput] = []
        self._replies: list[str] = []
        self._scores: list[dict[str, float]] = []
        self._rewards: list[float] = []

    # -- episode --------------------------------------------------------------------------
    @property
    def view(self) -> CaseView:
        if self.case is None:
            raise RuntimeError("call reset() first")
        return self.case.original if self.side == 0 else self.case.edited

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        requested = requested_episode(options or {}, self._index)
        super().reset(seed=seed)
        drawn = int(self.np_random.integers(len(self.episodes))) if requested is None else requested
        self.case = cases_by_id()[self.episodes[drawn]]
        self.side = 0
        self._outputs, self._replies, self._scores, self._rewards = [], [], [], []
        return self._observation(), self._info()

    def step(self, action):
        require_running(self.case is not None, len(self._outputs) == N_STEPS)
        return self.step_decoded(decode_typed(action, self.view, len(self.case.words)))

    def step_decoded(self, output: PlannerOutput, reply: str | None = None):
        """Score a decoded planner output for the side on show (the text wrapper parses replies)."""
        require_running(self.case is not None, len(self._outputs) == N_STEPS)
        if not isinstance(output, PlannerOutput):
            raise TypeError(f"step_decoded takes a PlannerOutput, got {type(output).__name__}")
        view = self.view
        scores = score_case(output, view.gold_evidence, view.decisive_cue, view.expected_plan)
        self._outputs.append(output)
        self._replies.append(reply or "")
        self._scores.append(scores)
        terminated = len(self._outputs) == N_STEPS
        pair = (
            score_pair(self._outputs[0].plan, output.plan, self.case.declared_delta) if terminated else None
        )
        if self.reward_name == PAIR_REWARD:
            reward = pair[PAIR_REWARD] if pair else 0.0
        else:
            reward = scores[self.reward_name]
        self._rewards.append(float(reward))
        info = {**self._info(), "scores": scores, "malformed": output.malformed, "reply": reply or ""}
        if terminated:
            info["pair_scores"] = pair
            info["episode"] = self._episode_record(pair)
        else:
            self.side = 1  # the observation and info now describe the edited case
            info.update(self._info())
        return self._observation(), float(reward), terminated, False, info

    def _episode_record(self, pair: dict[str, float]) -> dict[str, Any]:
        """The finished case as ``results.jsonl`` stores it (what ``report`` reads)."""
        case = self.case
        return {
            "item_id": case.case_id,
            "split": self.split,
            "partition": self.partition,
            "source_key": key_name(*case.original.source_key),
            "edited_key": key_name(*case.edited.source_key),
            "declared_delta": case.as_dict()["declared_delta"],
            "outputs": [
                {"evidence": sorted(o.citations), "plan": None if o.plan is None else o.plan.as_dict()}
                for o in self._outputs
            ],
            "replies": list(self._replies),
            "malformed": [o.malformed for o in self._outputs],
            "case_scores": list(self._scores),
            "pair_scores": pair,
            "rewards": list(self._rewards),
            "return": float(sum(self._rewards)),
        }

    def action_masks(self) -> np.ndarray:
        """Valid ``discrete`` actions (sb3-contrib convention): every catalogue entry, always."""
        return np.ones(N_CATALOGUE, dtype=np.int8)

    def source_audio_request(self) -> tuple[str, str, str, str]:
        """(statement, emotion, intensity, voice) of the source record on show: what the audio
        conditions render."""
        source = self.view.source
        return source.text, source.emotion, source.intensity, source.voice

    # -- views ----------------------------------------------------------------------------
    def prompt(self, *, labels: bool = True) -> str:
        return side_prompt(self.case, self.view, labels=labels)[:MAX_TEXT_CHARS]

    def _observation(self) -> dict[str, Any]:
        return {
            "text": self.prompt(labels=True),
            "step": np.array([self.side], dtype=np.int64),
            "action_mask": self.action_masks(),
        }

    def _info(self) -> dict[str, Any]:
        view = self.view
        return {
            "item_id": self.case.case_id,
            "step_index": self.side,
            "source_key": key_name(*view.source_key),
            "expected_plan": view.expected_plan.as_dict(),
            "gold_evidence": sorted(view.gold_evidence),
            "decisive_cue": view.decisive_cue,
            "cue_ids": [r.cue_id for r in view.records],
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.case is None:
            return None
        return f"[{self.case.case_id} step {self.side + 1}/{N_STEPS}]\n{self.prompt(labels=True)}"
