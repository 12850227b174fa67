"""Export the VoiceGate item set: every input's audio as a WAV file, plus manifests.

``build_items(out)`` writes:

* ``items.jsonl``: every item (text, addressees, segments, target, split, cues), one per line;
* ``audio/<item_id>.wav``: 16 kHz mono PCM_16 for every item with audio (``/`` in ids -> ``__``);
* ``manifest.jsonl``: per audio item, the synthesis manifest of ``gate_scenes.render_item``
  (voice, durations, normalization, peak, boundaries, room configuration, PCM hash);
* ``build.json``: counts, renderer, generator version, seconds taken.

``side_talk_cue`` chooses the side-talk rendering (generator docstring). Items are rendered
in ``workers`` processes (spawned, each with its own render cache); the
files are the same whatever the worker count.
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from rich.progress import Progress

from hear_gym.core.run_folder import strict_json, write_json_atomic, write_text_atomic, write_wav_atomic
from hear_gym.envs.voicegate.items.generator import GENERATOR_VERSION, all_items
from hear_gym.envs.voicegate.scenes import render_item
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import SAMPLE_RATE, make_renderer

_CHUNK = 64


def wav_name(item_id: str) -> str:
    return item_id.replace("/", "__") + ".wav"


def _render_chunk(args: tuple[list[int], str, str, str]) -> list[dict]:
    indices, renderer, audio_dir, side_talk_cue = args
    items = all_items(side_talk_cue)
    cache = RenderCache(make_renderer(renderer), max_bytes=128 * 2**20)
    manifests = []
    for i in indices:
        waveform, manifest = render_item(items[i], cache)
        write_wav_atomic(Path(audio_dir) / wav_name(items[i].item_id), waveform, SAMPLE_RATE)
        manifests.append(manifest)
    return manifests


def _write_jsonl(path: Path, records) -> None:
    """One strict JSON record per line, replacing ``path`` at once (never through a link)."""
    write_text_atomic(path, "".join(strict_json(r, separators=(",", ":")) + "\n" for r in records))


def build_items(
    out: Path, renderer: str = "espeak", workers: int = 2, progress: bool = True, side_talk_cue: str = "none"
) -> dict:
    start = time.perf_counter()
    items = all_items(side_talk_cue)
    audio_dir = out / "audio"
    audio_dir.mkdir(parents=True, exist_ok=True)
    _write_jsonl(out / "items.jsonl", (item.as_record() for item in items))
    # Items sharing a speaker-switch command sit next to each other, so contiguous chunks let
    # each worker's render cache reuse the shared segments.
    with_audio = [i for i, item in enumerate(items) if item.has_audio]
    chunks = [
        (with_audio[k : k + _CHUNK], renderer, str(audio_dir), side_talk_cue)
        for k in range(0, len(with_audio), _CHUNK)
    ]
    manifests: list[dict] = []
    with Progress(disable=not progress) as bar:
        task = bar.add_task("rendering VoiceGate items", total=len(with_audio))
        if workers > 1:
            with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
                for chunk in pool.map(_render_chunk, chunks):
                    manifests += chunk
                    bar.advance(task, len(chunk))
        else:
            for chunk in map(_render_chunk, chunks):
                manifests += chunk
                bar.advance(task, len(chunk))
    _write_jsonl(out / "manifest.jsonl", manifests)
    summary = {
        "generator": GENERATOR_VERSION,
        "renderer": renderer,
        "side_talk_cue": side_talk_cue,
        "workers": workers,
        "n_items": len(items),
        "n_audio": len(with_audio),
        "audio_seconds": round(sum(m["duration_s"] for m in manifests), 1),
        "build_seconds": round(time.perf_counter() - start, 1),
    }
    write_json_atomic(out / "build.json", summary)
    return summary
