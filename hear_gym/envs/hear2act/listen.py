"""Write what the simulated user said as WAV files a person can listen to (16 kHz PCM_16).

* ``write_dialogue``: one episode of an agent in one scenario; every user turn becomes
  ``turn_NN_user.wav``, and ``dialogue.txt`` lists each turn with its text, delivery label and
  concern state, so the contrast between words and delivery can be heard and checked. With
  ``side_by_side`` renderers, each user turn is also written as each of them speaks it
  (``turn_NN_user.<renderer>.wav``), the same words and delivery plan, for comparing voices.
* ``write_label_gallery``: one sentence under every delivery label (``<label>.wav``), with
  ``labels.txt`` giving each label's prosody plan.

Both take the delivery plan table (``prosody``, "paper" by default; see ``hear_gym.speech.plans``).
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import soundfile as sf

from hear_gym.envs.hear2act.audio import TurnAudio, voice_for
from hear_gym.envs.hear2act.user.states import SPOKEN_LABELS
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest, make_renderer


def _write_wav(path: Path, waveform) -> None:
    sf.write(path, waveform, SAMPLE_RATE, subtype="PCM_16")


def write_dialogue(
    env: gym.Env,
    agent,
    scenario_id: str,
    out_dir: Path,
    seed: int = 0,
    renderer: str = "espeak",
    prosody: str = DEFAULT_PROSODY,
    side_by_side: tuple[str, ...] = (),
) -> list[Path]:
    """Play one episode and write its user turns; returns the WAV paths in turn order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    audio = TurnAudio(RenderCache(make_renderer(renderer)), prosody)
    others = {name: TurnAudio(RenderCache(make_renderer(name)), prosody) for name in side_by_side}
    obs, info = env.reset(seed=seed, options={"scenario_id": scenario_id})
    agent.reset(seed=seed)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        done = terminated or truncated
    base = env.unwrapped
    paths, lines = (
        [],
        [
            f"scenario {scenario_id}, voice {voice_for(scenario_id)}, renderer {renderer}, "
            f"prosody {prosody}, "
            f"gold option {base.scenario.gold_option}, final option {info['final_option']}",
            "",
        ],
    )
    for index, record in enumerate(base.turns):
        if record["assistant_text"]:
            lines.append(f"ASSISTANT: {record['assistant_text']}")
        path = out_dir / f"turn_{index:02d}_user.wav"
        _write_wav(path, audio.waveform(env, turn=index))
        paths.append(path)
        for name, other in others.items():
            paths.append(out_dir / f"{path.stem}.{name}.wav")
            _write_wav(paths[-1], other.waveform(env, turn=index))
        also = "".join(f", {path.stem}.{name}.wav" for name in others)
        lines.append(
            f"USER ({path.name}{also}; delivery {record['delivery_label']}; "
            f"state {record['concern_state'] or 'request'}): {record['user_text']}"
        )
    (out_dir / "dialogue.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


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
    (out_dir / "labels.txt").write_text(
        f"text: {text}\nvoice: {voice}, language: {language}, renderer: {renderer}, prosody: {prosody}\n\n"
        + "\n".join(f"{label}.wav: {json.dumps(plan, ensure_ascii=False)}" for label, plan in plans.items())
        + "\n",
        encoding="utf-8",
    )
    return paths
