"""Acoustic scenes of VoiceGate items: segments -> one 16 kHz mono waveform plus its manifest.

Each segment (one utterance by one voice, neutral delivery) is synthesized, placed in a room,
normalized and faded, exactly as paper Appendix F describes:

1. TTS through the ``RenderCache`` (eSpeak, Praat or neural renderer, same voices as Hear2Act).
2. Placement in one shoebox room (5 x 4 x 3 m, RT60 0.5 s; image-source RIR, pyroomacoustics):
   ``near`` - mouth 0.22 m from the wearable's microphone, facing it;
   ``far`` - a talker across the room, 2.4 m away;
   ``turned_away`` - the wearer's head turned toward someone else: the direct path is
   shadowed, modelled as the source moving to 0.86 m (lower direct-to-reverberant ratio) and a
   first-order low-pass at 2 kHz on the dry speech (the mouth radiates high frequencies forward).
   The reverberant result is cut to the dry length so that boundaries and gaps stay exact.
3. Loudness normalized to -20 dBFS RMS *after* room rendering (distance must not become a level
   cue), then 5 ms raised-cosine fades.
4. Segments joined at a sentence boundary: the speaker's clause pause (the silence the renderer
   puts between clauses inside one utterance, ``clause_pause_ms`` of the preceding segment's
   plan; the renderer trims each utterance's edges, so without it two sentences would run
   together and a comma's pause would be the longest in the input), plus the item's inserted gap
   (0 ms, or the switch's 600 ms), after a 200 ms lead-in and before a 200 ms tail.
5. A room-tone bed under the *whole* input (lead-in, speech, gaps, tail): stationary pink noise
   (1/f, high-passed at 50 Hz) at -50 dBFS RMS, i.e. 30 dB below the speech segments. Gaps are
   therefore never digital silence (a run of exact zeros would mark every inserted gap, which
   solves speaker-switch with one scalar), and since the bed is everywhere, where there is noise
   tells nothing either. The bed is drawn from a ``numpy.random.Generator`` seeded by a stable
   hash of the item's ``group``, so the conditions of one speaker-switch pair or cue-validity
   command carry the same noise and differ only in what the condition changes; it is a causal
   stream, so ``room_tone(item, n)`` for a larger ``n`` continues it (the audio observation pads
   with it).

Placement ``turned_away`` is only used by side-talk's optional ``side_talk_cue="turned_away"``.

The manifest records, per segment: voice, source, placement, room configuration and its
direct-to-reverberant ratio, start/end, duration, the normalization gain, RMS and peak, and
the sentence pause after it (``sentence_pause_ms``, all but the last); per
item: duration, boundaries, lead-in and tail, the noise bed (kind, level, seed key, measured
RMS), peak and a SHA-256 of the 16-bit PCM.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from functools import cache, lru_cache

import numpy as np
from scipy.signal import butter, sosfilt

from hear_gym.core.spaces import MAX_AUDIO_SAMPLES
from hear_gym.envs.voicegate.items.model import Item, Placement
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest
from hear_gym.speech.scene import (
    RoomConfig,
    direct_to_reverberant_db,
    fade,
    gap,
    normalize_loudness,
    peak_dbfs,
    pink_noise,
    reverberate,
    rms_dbfs,
    room_impulse_response,
)

SEGMENT_DBFS = -20.0
FADE_MS = 5.0
TURNED_AWAY_LOWPASS_HZ = 2_000.0
DELIVERY = "neutral"
LEAD_MS = TAIL_MS = 200.0
NOISE_DBFS = -50.0
NOISE_HIGHPASS_HZ = 50.0
NOISE_VERSION = "room-tone-1"  # part of the seed key: change it with any change to the bed
# Beds kept in memory, one per item group, each at least an audio observation long (12 s, 0.77 MB;
# at most ~100 MB): a bed costs milliseconds to draw, and a reset, its terminal step and the
# render all read the same one. 128 covers every group of a family's split (80 in
# speaker_switch/test).
ROOM_TONE_BEDS = 128
_MICROPHONE = (2.2, 2.0, 1.5)
ROOMS: dict[Placement, RoomConfig] = {
    Placement.NEAR: RoomConfig(source=(2.0, 2.05, 1.6), microphone=_MICROPHONE),
    Placement.FAR: RoomConfig(source=(4.3, 3.1, 1.6), microphone=_MICROPHONE),
    Placement.TURNED_AWAY: RoomConfig(source=(1.4, 1.7, 1.6), microphone=_MICROPHONE),
}


@cache
def _lowpass() -> np.ndarray:
    return butter(1, TURNED_AWAY_LOWPASS_HZ, fs=SAMPLE_RATE, output="sos")


@cache
def room_record(placement: Placement) -> dict:
    room = ROOMS[placement]
    return {
        **asdict(room),
        "distance_m": round(room.distance_m, 3),
        "drr_db": round(direct_to_reverberant_db(room_impulse_response(room)), 2),
        "lowpass_hz": TURNED_AWAY_LOWPASS_HZ if placement is Placement.TURNED_AWAY else None,
    }


def place(dry: np.ndarray, placement: Placement) -> np.ndarray:
    """The dry segment as the wearable's microphone hears it from ``placement``."""
    if placement is Placement.TURNED_AWAY:
        dry = sosfilt(_lowpass(), dry).astype(np.float32)
    return reverberate(dry, ROOMS[placement])[: len(dry)]


def _noise_seed(group: str) -> int:
    digest = hashlib.blake2b(f"{NOISE_VERSION}|{group}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


@lru_cache(maxsize=ROOM_TONE_BEDS)
def _bed(group: str, n: int) -> np.ndarray:
    bed = pink_noise(n, np.random.default_rng(_noise_seed(group)), NOISE_DBFS, NOISE_HIGHPASS_HZ)
    bed.flags.writeable = False  # shared by every caller
    return bed


def room_tone(item: Item, n: int) -> np.ndarray:
    """The first ``n`` samples of the item's noise bed (the same stream ``render_item`` adds),
    read-only. The bed is causal, so these are the first ``n`` of the group's cached bed of at
    least ``MAX_AUDIO_SAMPLES``: the same bytes as a bed drawn ``n`` long."""
    return _bed(item.group, max(n, MAX_AUDIO_SAMPLES))[:n]


def render_item(item: Item, cache_: RenderCache) -> tuple[np.ndarray, dict]:
    """(waveform, manifest) of an item with audio."""
    if item.segments is None:
        raise ValueError(f"{item.item_id} is a text-only item; it has no audio")
    lead = gap(LEAD_MS)
    pieces, records, position = [lead], [], len(lead)
    for i, segment in enumerate(item.segments):
        text = item.utterances[segment.utterance].text
        rendering = cache_.render(RenderRequest(text, DELIVERY, segment.voice))
        dry = rendering.waveform
        placed = place(dry, segment.placement)
        normalized = normalize_loudness(placed, SEGMENT_DBFS)
        audio = fade(normalized, FADE_MS)
        records.append(
            {
                "utterance": segment.utterance,
                "voice": segment.voice,
                "source": segment.source.value,
                "placement": segment.placement.value,
                "room": room_record(segment.placement),
                "start_s": position / SAMPLE_RATE,
                "end_s": (position + len(audio)) / SAMPLE_RATE,
                "duration_s": len(audio) / SAMPLE_RATE,
                "normalization_gain_db": round(SEGMENT_DBFS - rms_dbfs(placed), 3),
                "rms_dbfs": round(rms_dbfs(audio), 3),
                "peak_dbfs": round(peak_dbfs(audio), 3),
            }
        )
        pieces.append(audio)
        position += len(audio)
        if i < len(item.gaps_ms):
            records[-1]["sentence_pause_ms"] = rendering.plan["clause_pause_ms"]
            silence = gap(rendering.plan["clause_pause_ms"] + item.gaps_ms[i])
            pieces.append(silence)
            position += len(silence)
    pieces.append(gap(TAIL_MS))
    speech = np.concatenate(pieces)
    bed = room_tone(item, len(speech))
    waveform = np.clip(speech + bed, -1.0, 1.0)
    pcm = np.round(waveform * 32767).astype("<i2")
    manifest = {
        "item_id": item.item_id,
        "sample_rate": SAMPLE_RATE,
        "duration_s": len(waveform) / SAMPLE_RATE,
        "renderer": {"name": cache_.renderer.name, "version": cache_.renderer.version},
        "delivery": DELIVERY,
        "segment_dbfs": SEGMENT_DBFS,
        "fade_ms": FADE_MS,
        "gaps_ms": list(item.gaps_ms),
        "lead_ms": LEAD_MS,
        "tail_ms": TAIL_MS,
        "noise": {
            "kind": "pink",
            "highpass_hz": NOISE_HIGHPASS_HZ,
            "level_dbfs": NOISE_DBFS,
            "seed_key": f"{NOISE_VERSION}|{item.group}",
            "rms_dbfs": round(rms_dbfs(bed), 3),
        },
        "boundaries_s": [r["start_s"] for r in records[1:]],
        "segments": records,
        "peak_dbfs": round(peak_dbfs(waveform), 3),
        "pcm16_sha256": hashlib.sha256(pcm.tobytes()).hexdigest(),
    }
    return waveform, manifest
