"""Onset waveforms: two source utterances -> two branch waveforms -> renderings -> nested prefixes.

PACT-SLM's construction (section 3.2 and its appendix), step by step:

1. Each source utterance is synthesized by eSpeak NG with its delivery (pitch level, pitch range,
   final contour) and the group's shared voice, rate and clause pauses, then normalized to
   ``SPEECH_DBFS`` RMS, so loudness carries no action.
2. Both sources are laid on one timeline of ``N`` samples: ``LEAD_MS`` of lead-in, the speech,
   and a tail padding both to the longer one plus ``TAIL_MS``; both branches therefore have the
   same duration, and prefix ``k`` ends at ``round(PREFIX_FRACTIONS[k] * N)`` in both.
3. Divergence: the midpoint between the end of the prefix before the onset and the end of the
   onset prefix. Before it, both branches hold the same averaged samples ``(a + b) / 2``; from
   it a ``CROSSFADE_MS`` raised-cosine crossfade leads to each branch's own source. The average
   is scaled to the mean power of the two sources over the shared span (our addition: a plain
   average of two differently pitched voices is quieter, and that level step would mark the
   divergence for any energy scalar).
4. A pink room-tone bed (``ROOM_TONE_DBFS``), one realization per group, is added to both
   branches, so no stretch is digital silence.
5. Renderings: ``clean``, and for the test split ``noise15``: one Gaussian-noise realization per
   group added to both branches at ``NOISE_SNR_DB`` (noise power set from the mean power of the
   two clean branches, one scale per group), *before* cropping, so prefixes stay nested and the
   pre-onset prefixes of a pair stay byte-identical.

Every random draw comes from a ``numpy.random.Generator`` seeded by a stable hash of the group id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.groups.model import CLEAN, NOISY, PREFIX_FRACTIONS, Branch, Group
from hear_gym.speech.plans import ProsodyPlan
from hear_gym.speech.renderers import SAMPLE_RATE, EspeakRenderer, assemble, clauses, spoken_text
from hear_gym.speech.scene import normalize_loudness, pink_noise, rms_dbfs

SPEECH_DBFS = -20.0
LEAD_MS = TAIL_MS = 200.0
CLAUSE_PAUSE_MS = 150.0
CROSSFADE_MS = 50.0
ROOM_TONE_DBFS = -55.0
NOISE_SNR_DB = 15.0
SCENE_VERSION = "onset-scene-1"  # part of every seed key: change it with any change here


@dataclass(frozen=True)
class RenderedGroup:
    """Both branches of a group under each of its renderings, plus where everything lies."""

    group: Group
    waveforms: dict[tuple[str, str], np.ndarray]  # (branch id, rendering) -> read-only float32
    prefix_ends: tuple[int, ...]  # samples
    divergence: int  # first sample where the branches may differ
    manifest: dict

    def prefix(self, branch_id: str, rendering: str, k: int) -> np.ndarray:
        """The k-th nested crop (0-based) of one trajectory in one rendering (read-only view)."""
        return self.waveforms[(branch_id, rendering)][: self.prefix_ends[k]]


def synthesize_source(group: Group, branch: Branch) -> np.ndarray:
    """One source utterance (speech only), normalized to ``SPEECH_DBFS``."""
    d = branch.delivery
    plan = ProsodyPlan(
        label=d.style,
        rate=group.rate,
        pitch=d.pitch,
        range=d.range,
        gain_db=0.0,
        lead_pause_ms=0.0,
        clause_pause_ms=CLAUSE_PAUSE_MS,
        final_contour=d.contour,  # type: ignore[arg-type]
    )
    renderer = EspeakRenderer()
    text = spoken_text(group.transcript, "en", d.contour)
    speech = assemble(clauses(text, group.voice, "en", renderer.settings(plan)), plan)
    return normalize_loudness(speech, SPEECH_DBFS)


def _rng(group: Group, purpose: str) -> np.random.Generator:
    digest = hashlib.blake2b(f"{SCENE_VERSION}|{purpose}|{group.group_id}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _raised_cosine(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


def _power(x: np.ndarray) -> float:
    return float(np.mean(np.square(x, dtype=np.float64)))


def build_group(group: Group) -> RenderedGroup:
    """The group's branch waveforms and renderings (steps 2-5 of the module docstring)."""
    sources = [synthesize_source(group, b).astype(np.float64) for b in group.branches]
    lead, tail = (int(round(SAMPLE_RATE * ms / 1000)) for ms in (LEAD_MS, TAIL_MS))
    total = lead + max(len(s) for s in sources) + tail
    laid = []
    for source in sources:
        padded = np.zeros(total)
        padded[lead : lead + len(source)] = source
        laid.append(padded)
    ends = tuple(int(round(f * total)) for f in PREFIX_FRACTIONS)
    divergence = (ends[group.onset_index - 1] + ends[group.onset_index]) // 2
    fade = int(round(SAMPLE_RATE * CROSSFADE_MS / 1000))
    average = (laid[0] + laid[1]) / 2
    span = slice(lead, divergence)
    average_power = _power(average[span])
    gain = (
        np.sqrt((_power(laid[0][span]) + _power(laid[1][span])) / 2 / average_power) if average_power else 1.0
    )
    shared = average * gain
    ramp = _raised_cosine(fade)
    bed = pink_noise(total, _rng(group, "room"), ROOM_TONE_DBFS).astype(np.float64)
    branches = {}
    for branch, own in zip(group.branches, laid, strict=True):
        wave = own.copy()
        wave[:divergence] = shared[:divergence]
        cross = slice(divergence, divergence + fade)
        wave[cross] = (1 - ramp) * shared[cross] + ramp * own[cross]
        branches[branch.branch_id] = wave + bed
    waveforms = {(b, CLEAN): branches[b] for b in branches}
    if NOISY in group.renderings:
        noise = _rng(group, "noise").standard_normal(total)
        signal_power = np.mean([_power(w) for w in branches.values()])
        noise *= np.sqrt(signal_power / 10 ** (NOISE_SNR_DB / 10))
        waveforms.update({(b, NOISY): branches[b] + noise for b in branches})
    frozen = {}
    for key, wave in waveforms.items():
        out = np.clip(wave, -1.0, 1.0).astype(np.float32)
        out.flags.writeable = False
        frozen[key] = out
    manifest = {
        "group_id": group.group_id,
        "sample_rate": SAMPLE_RATE,
        "samples": total,
        "duration_s": total / SAMPLE_RATE,
        "prefix_ends": list(ends),
        "divergence": divergence,
        "crossfade_samples": fade,
        "shared_gain_db": round(float(20 * np.log10(gain)), 3),
        "source_speech_s": [round(len(s) / SAMPLE_RATE, 3) for s in sources],
        "speech_dbfs": SPEECH_DBFS,
        "room_tone_dbfs": round(rms_dbfs(bed), 2),
        "noise_snr_db": NOISE_SNR_DB if NOISY in group.renderings else None,
        "pcm16_sha256": {
            f"{b}/{r}": hashlib.sha256(np.round(w * 32767).astype("<i2").tobytes()).hexdigest()
            for (b, r), w in frozen.items()
        },
    }
    return RenderedGroup(group, frozen, ends, divergence, manifest)


@lru_cache(maxsize=32)
def rendered_group(group_id: str) -> RenderedGroup:
    """``build_group`` of a group id, kept for the next episodes (a pair's four trajectories are
    usually played back to back)."""
    return build_group(groups_by_id()[group_id])
