"""Write what the simulated user said as WAV files a person can listen to (16 kHz PCM_16).

* ``write_dialogue``: one episode of an agent in one scenario, every user turn spoken by each of
  the given renderers side by side (``turn_NN_user.<renderer>.wav``; by default the CLI passes
  every registered renderer). ``dialogue.txt`` lists each turn with its text, delivery label and
  concern state; ``index.html`` is the same dialogue as a table with one audio player per
  renderer in each user row, so one voice can be heard against another turn by turn. The
  episode is played once (with the env's own renderer), so every renderer speaks the same words
  under the same delivery labels.
* ``write_label_gallery``: one sentence under every delivery label (``<label>.wav``), with
  ``labels.txt`` giving each label's prosody plan.

Both take the delivery plan table (``prosody``, "paper" by default; see ``hear_gym.speech.plans``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from hear_gym.core.run_folder import write_text_atomic, write_wav_atomic
from hear_gym.envs.hear2act.audio import TurnAudio, voice_for
from hear_gym.envs.hear2act.user.states import SPOKEN_LABELS
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import SAMPLE_RATE, Renderer, RenderRequest, make_renderer


def _write_wav(path: Path, waveform) -> None:
    write_wav_atomic(path, waveform, SAMPLE_RATE)


@dataclass(frozen=True)
class SpokenTurn:
    """One user turn of a played dialogue and its WAV file per renderer."""

    index: int
    assistant_text: str
    user_text: str
    delivery: str
    state: str
    files: dict[str, str]  # renderer name -> file name


def usable_renderers(names: Sequence[str]) -> tuple[dict[str, Renderer], dict[str, str]]:
    """(the renderers built, {name: why not} for those whose optional extra is missing). An
    unknown name raises ``ValueError`` naming the registered ones."""
    built, missing = {}, {}
    for name in dict.fromkeys(names):
        try:
            built[name] = make_renderer(name)
        except ImportError as exc:  # an optional extra (e.g. the neural voice) not installed
            missing[name] = str(exc)
    if not built:
        raise ValueError(f"none of the renderers {list(names)} can be used here: {missing}")
    return built, missing


def write_dialogue(
    env: gym.Env,
    agent,
    scenario_id: str,
    out_dir: Path,
    seed: int = 0,
    renderers: Sequence[str] = ("espeak",),
    prosody: str = DEFAULT_PROSODY,
    played_with: str = "espeak",
) -> list[Path]:
    """Play one episode in ``env`` (built with the renderer ``played_with``: what an agent that
    hears the user heard) and write its user turns in every renderer of ``renderers``; returns
    the WAV paths (turn order, then renderer order)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    engines, missing = usable_renderers(renderers)
    audio = {name: TurnAudio(RenderCache(engine), prosody) for name, engine in engines.items()}
    obs, info = env.reset(seed=seed, options={"item_id": scenario_id})
    agent.reset(seed=seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        done = terminated or truncated
    base = env.unwrapped
    turns, paths = [], []
    for index, record in enumerate(base.turns):
        files = {}
        for name, turn_audio in audio.items():
            path = out_dir / f"turn_{index:02d}_user.{name}.wav"
            _write_wav(path, turn_audio.waveform(env, turn=index))
            files[name] = path.name
            paths.append(path)
        turns.append(
            SpokenTurn(
                index,
                record["assistant_text"] or "",
                record["user_text"],
                record["delivery_label"],
                record["concern_state"] or "request",
                files,
            )
        )
    heading = (
        f"scenario {scenario_id}, voice {voice_for(scenario_id)}, prosody {prosody}, "
        f"played with renderer {played_with}, gold option {base.scenario.gold_option}, final option {info['final_option']}"
    )
    notes = [f"renderers: {', '.join(engines)}"] + [
        f"{name} left out: {why}" for name, why in missing.items()
    ]
    lines = [heading, *notes, ""]
    for turn in turns:
        if turn.assistant_text:
            lines.append(f"ASSISTANT: {turn.assistant_text}")
        lines.append(
            f"USER ({', '.join(turn.files.values())}; delivery {turn.delivery}; state {turn.state}): "
            f"{turn.user_text}"
        )
    write_text_atomic(out_dir / "dialogue.txt", "\n".join(lines) + "\n")
    write_text_atomic(out_dir / "index.html", dialogue_page(heading, notes, list(engines), turns))
    return paths


def dialogue_page(heading: str, notes: list[str], renderers: list[str], turns: list[SpokenTurn]) -> str:
    """The dialogue as one HTML table: the words, the delivery, and a player per renderer."""
    cell = lambda text: f"<td>{html.escape(text)}</td>"  # noqa: E731
    header = "".join(f"<th>{html.escape(name)}</th>" for name in renderers)
    rows = []
    for turn in turns:
        if turn.assistant_text:
            rows.append(f"<tr><td>assistant</td><td colspan=2>{html.escape(turn.assistant_text)}</td></tr>")
        players = "".join(
            f'<td><audio controls preload="none" src="{html.escape(turn.files[name])}"></audio></td>'
            for name in renderers
        )
        rows.append(
            f"<tr>{cell('user')}{cell(turn.user_text)}{cell(f'{turn.delivery} / {turn.state}')}{players}</tr>"
        )
    items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
    return (
        '<!doctype html>\n<meta charset="utf-8">\n<title>hear-gym listen</title>\n'
        f"<p>{html.escape(heading)}</p>\n<ul>{items}</ul>\n<table border=1 cellpadding=4>\n"
        f"<tr><th>speaker</th><th>words</th><th>delivery / state</th>{header}</tr>\n"
        + "\n".join(rows)
        + "\n</table>\n"
    )


def write_label_gallery(
    text: str,
    out_dir: Path,
    voice: str = "m1",
    language: str = "en",
    renderer: str = "espeak",
    prosody: str = DEFAULT_PROSODY,
) -> list[Path]:
    """The same words under every delivery label; returns the WAV paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    engine = make_renderer(renderer)
    paths, plans = [], {}
    for label in SPOKEN_LABELS:
        rendering = engine.render(RenderRequest(text, label, voice, language, prosody))
        path = out_dir / f"{label}.wav"
        _write_wav(path, rendering.waveform)
        paths.append(path)
        plans[label] = rendering.plan
    write_text_atomic(
        out_dir / "labels.txt",
        f"text: {text}\nvoice: {voice}, language: {language}, renderer: {renderer}, prosody: {prosody}\n\n"
        + "\n".join(f"{label}.wav: {json.dumps(plan, ensure_ascii=False)}" for label, plan in plans.items())
        + "\n",
    )
    return paths
