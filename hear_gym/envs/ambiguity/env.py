"""``hear_gym/Ambiguity-v0``: the same words, said differently or heard in another context, call
for a different answer (C3, arXiv:2507.22968), in English and Mandarin.

An episode is one ``items.model.Episode`` (episode id, e.g. ``phonological-en-pause-test-003/b``
or ``coreference-zh-test-012/resolution``): a phonological reading, a semantic sentence, an
omission or coreference task, or a multi-turn dialogue. ``reset`` draws one with the env's seeded
generator, or takes ``options={"item_id": ...}`` (an episode id) or ``{"index": i}``. Each ``step``
answers the question on show; single-decision episodes end after one step, a dialogue after its
last turn (the first question again).

Observation (Dict) of the base env, which is the access condition ``T``:

* ``question``: the task's instruction and its lettered options (``A) ...``), in the item's
  language; shown under every condition;
* ``transcript``: the dialogue so far, one line per utterance: ``User: `` lines as a transcriber
  writes them (punctuation, spelling), ``Assistant: `` lines with the agent's earlier answers;
* ``turn``: the turn on show (shape (1,)); ``action_mask``: the options this question has.

Actions: ``Discrete(4)``, an option index (``actions.py``; the text grammar is the letter). Rewards
and the invalid outcome: ``scoring.py``. ``info`` carries the ground truth (``answer``, the
phenomenon, the contrast) and is never observed; the last step's ``info["episode"]`` is the record.
Audio (A, A+T) is rendered on first request per turn (``turn_audio``), never at construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hear_gym.core.env_checks import require_finite, require_running
from hear_gym.core.reset_options import requested_episode
from hear_gym.core.spaces import AUDIO_RATE, discrete_index
from hear_gym.core.text import TEXT_CHARSET, shared_text_space
from hear_gym.envs.ambiguity.actions import LETTERS, Decision, format_options, option_mask, parse_reply
from hear_gym.envs.ambiguity.items.generator import all_episodes, episodes_by_id
from hear_gym.envs.ambiguity.items.generator import item_ids as split_item_ids
from hear_gym.envs.ambiguity.items.model import LANGUAGES, MAX_OPTIONS, Episode, Phenomenon
from hear_gym.envs.ambiguity.scoring import is_correct, match_free_text, reward

USER, ASSISTANT = "User: ", "Assistant: "
MAX_TURNS = 16
MAX_QUESTION_CHARS = 1_000
MAX_TRANSCRIPT_CHARS = 8_000
MAX_REPLY_IN_TRANSCRIPT = 200  # an earlier reply as the transcript shows it
TURN_GAP_S = 0.3  # silence between the utterances of one turn
DEFAULT_VOICE = "m3"
# views of (episode, decisions so far) kept per env (~0.9 kB each, ~15 MB full): a single-decision
# episode has at most five (its reset and four answers), so a split's ~2,600 episodes fit
VIEWS_KEPT = 16384
TURN_CLIPS_KEPT = 256  # turn waveforms kept per env (mostly the render cache's own arrays)
_OPTION_DECISIONS = tuple(Decision(i, "option") for i in range(MAX_OPTIONS))
_INVALID_DECISION = Decision(None, "invalid")


@lru_cache(maxsize=1)
def charset() -> str:
    """The observation charset: printable ASCII, the basic CJK block and every other character
    the suite's text uses."""
    used = {
        ch
        for e in all_episodes()
        for t in e.turns
        for text in (t.asked.prompt, *t.asked.options, *(u.written for u in t.said))
        for ch in text
    }
    # the whole basic CJK block too, so a Mandarin reply keeps its characters in the transcript
    cjk = {chr(c) for c in range(0x4E00, 0xA000)} | set("，。？！、：；“”（）")
    return TEXT_CHARSET + "".join(sorted((used | cjk) - set(TEXT_CHARSET)))


def in_charset(text: str) -> str:
    """``text`` with characters outside the observation charset dropped and lines joined."""
    allowed = _charset_set()
    return "".join(ch if ch in allowed else " " if ch.isspace() else "" for ch in text.replace("\n", " "))


@lru_cache(maxsize=1)
def _charset_set() -> frozenset[str]:
    return frozenset(charset()) - {"\n", "\r", "\t", "\x0b", "\x0c"}


class _View(NamedTuple):
    """What the env shows after a given sequence of decisions in an episode: the observation's
    text, its arrays (read-only; each observation gets copies) and the step's reward. (The info
    is built at each step: a kept copy to unpickle costs about as much as building it.)"""

    question: str
    transcript: str
    turn: np.ndarray
    action_mask: np.ndarray
    reward: float

    def observation(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "transcript": self.transcript,
            "turn": self.turn.copy(),
            "action_mask": self.action_mask.copy(),
        }


class AmbiguityEnv(gym.Env):
    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        split: str = "test",
        item_ids: Sequence[str] | None = None,
        phenomena: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        voice: str = DEFAULT_VOICE,
        renderer: str = "espeak",
        render_mode: str | None = None,
    ) -> None:
        require_finite(locals())
        from hear_gym.envs.ambiguity.render import check_renderer  # loads the speech layer

        check_renderer(renderer)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if item_ids is not None:
            unknown = [i for i in item_ids if i not in episodes_by_id()]
            if unknown:
                raise ValueError(f"unknown Ambiguity episodes {unknown[:3]}")
            chosen = tuple(item_ids)
        else:
            chosen = self._select(split, phenomena, languages)
        if not chosen:
            raise ValueError(f"no Ambiguity episodes for split={split!r}, {phenomena=}, {languages=}")
        self.episodes = chosen
        self._index = {e: i for i, e in enumerate(self.episodes)}
        self.voice, self.renderer, self.render_mode = voice, renderer, render_mode
        self.observation_space = spaces.Dict(
            {
                "question": shared_text_space(MAX_QUESTION_CHARS, charset()),
                "transcript": shared_text_space(MAX_TRANSCRIPT_CHARS, charset()),
                "turn": spaces.Box(0, MAX_TURNS - 1, (1,), np.int64),
                "action_mask": spaces.MultiBinary(MAX_OPTIONS),
            }
        )
        self.action_space = spaces.Discrete(MAX_OPTIONS)
        self.episode: Episode | None = None
        self.turn = 0
        self._drawn = -1  # index of self.episode in self.episodes
        self._decisions: tuple[Decision, ...] = ()
        self._audio: tuple[int, np.ndarray] | None = None
        # an episode and its decisions so far fix everything a step shows, and a turn its audio:
        # both are built once and kept (bounded), not rebuilt at every reset and step
        self._views = lru_cache(maxsize=VIEWS_KEPT)(self._view)
        self._turn_waves = lru_cache(maxsize=TURN_CLIPS_KEPT)(self._turn_wave)

    @staticmethod
    def _select(split, phenomena, languages) -> tuple[str, ...]:
        known = {p.value for p in Phenomenon}
        wanted_p = set(phenomena) if phenomena is not None else known
        wanted_l = set(languages) if languages is not None else set(LANGUAGES)
        if wanted_p - known or wanted_l - set(LANGUAGES):
            raise ValueError(
                f"phenomena must be among {sorted(known)} and languages among {LANGUAGES}, "
                f"got {sorted(wanted_p - known)} {sorted(wanted_l - set(LANGUAGES))}"
            )
        by_id = episodes_by_id()
        return tuple(
            e
            for e in split_item_ids(split)
            if by_id[e].phenomenon.value in wanted_p and by_id[e].language in wanted_l
        )

    # -- episode --------------------------------------------------------------------------
    def check_reset_options(self, options: dict) -> None:
        """Raises for reset options ``reset`` would refuse, changing nothing."""
        requested_episode(options, self._index)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        requested = requested_episode(options or {}, self._index)  # checked before any change
        super().reset(seed=seed)
        drawn = int(self.np_random.integers(len(self.episodes))) if requested is None else requested
        self.episode = episodes_by_id()[self.episodes[drawn]]
        self._drawn, self.turn = drawn, 0
        self._decisions, self._audio = (), None
        return self._views(drawn, ()).observation(), self._info(self.episode, 0)

    def step(self, action):
        self._require_running()
        index = discrete_index(action, MAX_OPTIONS)
        valid = index < len(self._asked().options)
        return self._advance(_OPTION_DECISIONS[index] if valid else _INVALID_DECISION)

    def parse(self, reply: str) -> Decision:
        """A text reply as a decision (the grammar in ``actions.py``)."""
        self._require_running()
        options = self._asked().options
        choice = parse_reply(reply, len(options))
        if choice is not None:
            return Decision(choice, "option", reply)
        if self.episode.phenomenon == Phenomenon.MULTI_TURN:
            return Decision(match_free_text(reply, options), "judged", reply)
        return Decision(None, "invalid", reply)

    def step_decoded(self, decision: Decision, reply: str | None = None):
        """Apply an already decoded answer (the text-action wrapper parses replies with ``parse``)."""
        self._require_running()
        if not isinstance(decision, Decision):
            raise TypeError(f"step_decoded expects a Decision, got {type(decision).__name__}")
        n_options = len(self._asked().options)
        if decision.choice is not None and not 0 <= decision.choice < n_options:
            raise ValueError(f"choice {decision.choice} outside the {n_options} options")
        return self._advance(decision)

    def _advance(self, decision: Decision):
        self._decisions = (*self._decisions, decision)
        view = self._views(self._drawn, self._decisions)
        last = len(self._decisions) == len(self.episode.turns)
        if not last:
            self.turn += 1
            self._audio = None
        return view.observation(), view.reward, last, False, self._step_info(self.episode, self._decisions)

    def _view(self, drawn: int, decisions: tuple[Decision, ...]) -> _View:
        """What episode ``drawn`` shows after ``decisions`` (its reset: none)."""
        episode = episodes_by_id()[self.episodes[drawn]]
        done = len(decisions) == len(episode.turns)
        turn = len(decisions) - 1 if done else len(decisions)
        lines: list[str] = []
        for answered, decision in zip(episode.turns[: len(decisions)], decisions, strict=True):
            lines += [USER + u.written for u in answered.said]
            lines.append(ASSISTANT + self._said_back(decision, answered.asked.options))
        if not done:
            lines += [USER + u.written for u in episode.turns[turn].said]
        asked = episode.turns[turn].asked
        turn_array, mask = np.array([turn], dtype=np.int64), option_mask(len(asked.options))
        turn_array.flags.writeable = mask.flags.writeable = False
        paid = reward(decisions[-1], asked.answer) if done else 0.0
        return _View(
            f"{asked.prompt}\n{format_options(asked.options)}"[:MAX_QUESTION_CHARS],
            "\n".join(lines)[-MAX_TRANSCRIPT_CHARS:],
            turn_array,
            mask,
            paid,
        )

    def _step_info(self, episode: Episode, decisions: tuple[Decision, ...]) -> dict[str, Any]:
        """The info of the step that took ``decisions[-1]``."""
        decision, answered = decisions[-1], episode.turns[len(decisions) - 1].asked
        info = {
            **self._info(episode, len(decisions) - 1),
            "decision": decision.choice,
            "decision_kind": decision.kind,
            "correct": is_correct(decision, answered.answer),
            "invalid_action": "not one option letter" if decision.kind == "invalid" else None,
        }
        if len(decisions) == len(episode.turns):
            record = self._episode_record(episode, decisions)
            info.update(success=record["success"], episode=record)
        return info

    def _said_back(self, decision: Decision, options: tuple[str, ...]) -> str:
        if decision.text:
            return in_charset(decision.text)[:MAX_REPLY_IN_TRANSCRIPT].strip() or "(no answer)"
        if decision.choice is None:
            return "(no answer)"
        return f"{LETTERS[decision.choice]}) {options[decision.choice]}"

    def _require_running(self) -> None:
        require_running(self.episode is not None, len(self._decisions) == len(self.episode.turns))

    def _turn(self):
        return self.episode.turns[self.turn]

    def _asked(self):
        return self._turn().asked

    @staticmethod
    def _episode_record(e: Episode, decisions: tuple[Decision, ...]) -> dict[str, Any]:
        """The finished episode as ``results.jsonl`` stores it (what ``metrics`` reads)."""
        answers = [t.asked.answer for t in e.turns]
        correct = [is_correct(d, a) for d, a in zip(decisions, answers, strict=True)]
        return {
            "item_id": e.episode_id,
            "instance_id": e.item_id,
            "phenomenon": e.phenomenon.value,
            "contrast": e.contrast.value,
            "task": e.task,
            "row": e.row,
            "language": e.language,
            "split": e.split,
            "control": e.control,
            "answers": answers,
            "choices": [d.choice for d in decisions],
            "kinds": [d.kind for d in decisions],
            "replies": [d.text for d in decisions],
            "options": [list(t.asked.options) for t in e.turns],
            "last_said": " ".join(u.written for u in e.turns[-1].said),  # what a judge reads as the question
            "correct": correct,
            "success": correct[-1],
            "consistent": decisions[0].choice is not None and decisions[-1].choice == decisions[0].choice,
            "return": reward(decisions[-1], answers[-1]),
        }

    def action_masks(self) -> np.ndarray:
        """Valid actions (sb3-contrib convention): the options the question on show has."""
        if self.episode is None:
            return option_mask(MAX_OPTIONS)
        return self._views(self._drawn, self._decisions).action_mask.copy()

    # -- audio ----------------------------------------------------------------------------
    def turn_audio(self) -> tuple[np.ndarray, dict]:
        """(waveform of the current turn's user speech, manifest entries); rendered on first
        request (``render.py``: a phonological reading as marked, other turns in plain delivery)."""
        if self.episode is None:
            raise RuntimeError("call reset() first")
        if self._audio is None or self._audio[0] != self.turn:
            self._audio = (self.turn, self._turn_waves(self._drawn, self.turn))
        wave = self._audio[1]
        return wave, {"turn_samples": len(wave)}

    def _turn_wave(self, drawn: int, turn: int) -> np.ndarray:
        """Turn ``turn`` of episode ``drawn``: its utterances joined by ``TURN_GAP_S`` of silence
        (read-only: shared by every episode that plays the turn)."""
        from hear_gym.envs.ambiguity.render import render_reading, render_text

        episode = episodes_by_id()[self.episodes[drawn]]
        gap = np.zeros(int(TURN_GAP_S * AUDIO_RATE), dtype=np.float32)
        parts: list[np.ndarray] = []
        for utterance in episode.turns[turn].said:
            if parts:
                parts.append(gap)
            if utterance.spoken is not None:
                parts.append(render_reading(utterance.spoken, self.voice, self.renderer))
            else:
                parts.append(render_text(utterance.written, episode.language, self.voice, self.renderer))
        if len(parts) == 1 and parts[0].dtype == np.float32 and not parts[0].flags.writeable:
            return parts[0]  # the render cache's own read-only array: a copy would hold the same bytes
        wave = np.concatenate(parts).astype(np.float32)
        wave.flags.writeable = False
        return wave

    # -- views ----------------------------------------------------------------------------
    @staticmethod
    def _info(e: Episode, turn: int) -> dict[str, Any]:
        return {
            "item_id": e.episode_id,
            "instance_id": e.item_id,
            "phenomenon": e.phenomenon.value,
            "contrast": e.contrast.value,
            "task": e.task,
            "language": e.language,
            "turn": turn,
            "answer": e.turns[turn].asked.answer,
        }

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.episode is None:
            return None
        obs = self._views(self._drawn, self._decisions).observation()
        return f"[{self.episode.episode_id} turn {self.turn + 1}/{len(self.episode.turns)}]\n{obs['transcript']}\n{obs['question']}"
