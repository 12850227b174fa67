"""Onset waveforms: one shared rendering and two branch renderings -> two branch waveforms ->
renderings -> nested prefixes.

PACT-SLM's construction (section 3.2 and its appendix), step by step, with one change: the
paper's shared prefix averages the two branches' samples, which is audibly two voices at once
(a tail-harmonicity scalar timed the onset in three trajectories of four). Here the shared
prefix is one rendering of one voice, and each branch's own rendering is spliced in after it.

1. Three renderings of the transcript by the chosen renderer (``renderer=``, any name of
   ``hear_gym.speech.renderers.RENDERERS``; eSpeak NG by default), all with the group's voice,
   rate and clause pauses: each branch's source utterance with its delivery (pitch level, pitch
   range, final contour), and the *shared* utterance with the ``shared_delivery``: the mean of
   the two deliveries' pitch level and range, and a level ending (only its samples before the
   splice are heard, so its ending never sounds). Each is normalized to ``SPEECH_DBFS`` RMS, so
   loudness carries no action. Every renderer's timing depends on the text, voice and rate, not
   on pitch, so the three renderings are aligned closely until the final clause (eSpeak: to
   within a frame). The renderings go through a ``RenderCache`` (``source_cache``; see there).
2. All three are laid on one timeline of ``N`` samples: ``LEAD_MS`` of lead-in, the speech, and
   a tail padding the branches to the longer one plus ``TAIL_MS``; both branches therefore have
   the same duration, and prefix ``k`` ends at ``round(PREFIX_FRACTIONS[k] * N)`` in both.
3. Divergence (the splice): the quietest ``SPLICE_FRAME_MS`` frame of the three renderings (the
   loudest of the three at each frame, minimized) within ``SPLICE_WINDOW`` of the midpoint
   between the end of the prefix before the onset and the end of the onset prefix: a pause or
   a consonant closure, where a change of pitch level is not heard as a jump inside a vowel.
   Before it, both branches hold the shared rendering's samples; from it a ``CROSSFADE_MS``
   raised-cosine crossfade leads to each branch's own rendering, scaled so that over the
   shared span it has the shared rendering's level (no level step at the splice).
4. A pink room-tone bed (``ROOM_TONE_DBFS``), one realization per group, is added to both
   branches, so no stretch is digital silence.
5. Renderings: ``clean``, and for the test split ``noise15``: one Gaussian-noise realization per
   group added to both branches at ``NOISE_SNR_DB`` (noise power set from the mean power of the
   two clean branches, one scale per group), *before* cropping, so prefixes stay nested and the
   pre-onset prefixes of a pair stay byte-identical. Samples past full scale are clipped (a few
   per group, in 16 of the 340 eSpeak groups, and in some groups of the neural voice), so where
   one branch clips the two branches' noise differs.

Every random draw comes from a ``numpy.random.Generator`` seeded by a stable hash of the group id;
the draws do not depend on the renderer, so two renderers' groups differ only in their speech.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from hear_gym.envs.onset.groups.generator import groups_by_id
from hear_gym.envs.onset.groups.model import CLEAN, NOISY, PREFIX_FRACTIONS, Delivery, Group
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import ProsodyPlan
from hear_gym.speech.renderers import SAMPLE_RATE, RenderRequest, make_renderer
from hear_gym.speech.scene import normalize_loudness, pink_noise, rms_dbfs

SPEECH_DBFS = -20.0
LEAD_MS = TAIL_MS = 200.0
CLAUSE_PAUSE_MS = 150.0
CROSSFADE_MS = 20.0
SPLICE_FRAME_MS = 10.0
SPLICE_WINDOW = 0.35  # of the span between the two prefix ends, either side of its midpoint
ROOM_TONE_DBFS = -55.0
NOISE_SNR_DB = 15.0
SCENE_VERSION = "onset-scene-2"  # part of every seed key: change it with any change here
# Rendered groups kept in memory: at least every group of the largest split (train: 208 groups;
# test: 80), so an evaluation or a training run renders each group once. A test group (two
# branches x clean and noise15, ~4 s of float32 each) is ~1.1 MB, a train or dev group (clean
# only) ~0.33 MB: a whole split is at most ~90 MB, all three splits together ~175 MB.
RENDERED_GROUPS = 256
DEFAULT_RENDERER = "espeak"
# Onset's source renderings in memory (``source_cache``): the group cache above is Onset's memory
# layer, so this one needs to hold only the renderings of the group being built (three of ~0.2 MB).
SOURCE_CACHE_BYTES = 8 * 2**20
SOURCE_PROSODY = "onset-source"  # the plan comes from the group, not from a plan table


@dataclass(frozen=True)
class SourceRequest(RenderRequest):
    """A render request for one source utterance of a group: ``delivery`` is its whole prosody
    plan as sorted JSON, so the plan is part of the render cache's key (``cache_key``) and every
    renderer realizes it through ``plan()`` as it realizes a plan table's plans."""

    prosody: str = SOURCE_PROSODY

    def __post_init__(self) -> None:
        if self.prosody != SOURCE_PROSODY:
            raise ValueError(f"an Onset source request uses {SOURCE_PROSODY!r}, got {self.prosody!r}")
        self.plan()  # a whole plan, or a clear error
        RenderRequest(self.text, "neutral", self.voice, self.language)  # the text, voice and language checks

    def plan(self) -> ProsodyPlan:
        return ProsodyPlan(**json.loads(self.delivery))


@dataclass(frozen=True)
class RenderedGroup:
    """Both branches of a group under each of its renderings, plus where everything lies."""

    group: Group
    waveforms: dict[tuple[str, str], np.ndarray]  # (branch id, rendering) -> read-only float32
    prefix_ends: tuple[int, ...]  # samples
    divergence: int  # the splice: first sample where the branches may differ
    manifest: dict

    def prefix(self, branch_id: str, rendering: str, k: int) -> np.ndarray:
        """The k-th nested crop (0-based) of one trajectory in one rendering (read-only view)."""
        return self.waveforms[(branch_id, rendering)][: self.prefix_ends[k]]


def shared_delivery(group: Group) -> Delivery:
    """The shared prefix's delivery: the mean pitch level and range of the two branches."""
    a, b = (branch.delivery for branch in group.branches)
    return Delivery("shared", round((a.pitch + b.pitch) / 2, 2), round((a.range + b.range) / 2, 2), "level")


def source_request(group: Group, delivery: Delivery) -> SourceRequest:
    """The render request of the group's transcript under one delivery."""
    plan = ProsodyPlan(
        label=delivery.style,
        rate=group.rate,
        pitch=delivery.pitch,
        range=delivery.range,
        gain_db=0.0,
        lead_pause_ms=0.0,
        clause_pause_ms=CLAUSE_PAUSE_MS,
        final_contour=delivery.contour,  # type: ignore[arg-type]
    )
    return SourceRequest(group.transcript, json.dumps(plan.as_dict(), sort_keys=True), group.voice, "en")


@cache
def source_cache(renderer: str = DEFAULT_RENDERER, cache_dir: Path | None = None) -> RenderCache:
    """This process's cache of source renderings for one renderer (and disk store). Not the
    process-wide ``shared_render_cache``: its 256 MB memory would hold every group's sources a
    second time beside the group cache (~235 MB for all groups); what Onset takes from the render
    cache is the content address (renderer name and version, the whole plan) and the optional
    disk store, where a slow renderer's sources outlive the process (``audio_cache_dir=``)."""
    return RenderCache(make_renderer(renderer), max_bytes=SOURCE_CACHE_BYTES, disk_dir=cache_dir)


def synthesize(
    group: Group, delivery: Delivery, renderer: str = DEFAULT_RENDERER, cache_dir: Path | None = None
) -> np.ndarray:
    """One rendering of the group's transcript (speech only), normalized to ``SPEECH_DBFS``."""
    speech = source_cache(renderer, cache_dir).render(source_request(group, delivery)).waveform
    return normalize_loudness(speech, SPEECH_DBFS)


def _rng(group: Group, purpose: str) -> np.random.Generator:
    digest = hashlib.blake2b(f"{SCENE_VERSION}|{purpose}|{group.group_id}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def _raised_cosine(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)


def _power(x: np.ndarray) -> float:
    return float(np.mean(np.square(x, dtype=np.float64)))


def splice_point(laid: list[np.ndarray], before: int, onset_end: int) -> int:
    """The start of the quietest ``SPLICE_FRAME_MS`` frame (the loudest of ``laid`` at each frame)
    within ``SPLICE_WINDOW`` of the midpoint of ``before`` and ``onset_end`` (ties: the earliest)."""
    frame = int(round(SAMPLE_RATE * SPLICE_FRAME_MS / 1000))
    half = int(SPLICE_WINDOW * (onset_end - before))
    middle = (before + onset_end) // 2
    starts = np.arange(middle - half, middle + half - frame + 1, frame)
    loudest = np.max([[_power(x[s : s + frame]) for s in starts] for x in laid], axis=0)
    return int(starts[int(np.argmin(loudest))])


def build_group(
    group: Group, renderer: str = DEFAULT_RENDERER, cache_dir: Path | None = None
) -> RenderedGroup:
    """The group's branch waveforms and renderings (steps 1-5 of the module docstring) with the
    speech of ``renderer`` (its source renderings stored in ``cache_dir`` if given)."""
    sources = [synthesize(group, b.delivery, renderer, cache_dir).astype(np.float64) for b in group.branches]
    shared_source = synthesize(group, shared_delivery(group), renderer, cache_dir).astype(np.float64)
    lead, tail = (int(round(SAMPLE_RATE * ms / 1000)) for ms in (LEAD_MS, TAIL_MS))
    total = lead + max(len(s) for s in sources) + tail
    shared, *laid = (np.zeros(total) for _ in range(3))
    for padded, source in zip((shared, *laid), (shared_source, *sources), strict=True):
        n = min(len(source), total - lead)
        padded[lead : lead + n] = source[:n]
    ends = tuple(int(round(f * total)) for f in PREFIX_FRACTIONS)
    divergence = splice_point([shared, *laid], ends[group.onset_index - 1], ends[group.onset_index])
    fade = int(round(SAMPLE_RATE * CROSSFADE_MS / 1000))
    ramp = _raised_cosine(fade)
    span = slice(lead, divergence)
    bed = pink_noise(total, _rng(group, "room"), ROOM_TONE_DBFS).astype(np.float64)
    branches, gains = {}, {}
    for branch, own in zip(group.branches, laid, strict=True):
        own_power = _power(own[span])
        gain = np.sqrt(_power(shared[span]) / own_power) if own_power else 1.0
        wave = own * gain
        wave[:divergence] = shared[:divergence]
        cross = slice(divergence, divergence + fade)
        wave[cross] = (1 - ramp) * shared[cross] + ramp * wave[cross]
        branches[branch.branch_id] = wave + bed
        gains[branch.branch_id] = round(float(20 * np.log10(gain)), 3)
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
    engine = source_cache(renderer, cache_dir).renderer
    manifest = {
        "group_id": group.group_id,
        "renderer": {"name": engine.name, "version": engine.version},
        "sample_rate": SAMPLE_RATE,
        "samples": total,
        "duration_s": total / SAMPLE_RATE,
        "prefix_ends": list(ends),
        "divergence": divergence,
        "crossfade_samples": fade,
        "shared_delivery": asdict(shared_delivery(group)),
        "continuation_gain_db": gains,
        "source_speech_s": [round(len(s) / SAMPLE_RATE, 3) for s in (*sources, shared_source)],
        "speech_dbfs": SPEECH_DBFS,
        "room_tone_dbfs": round(rms_dbfs(bed), 2),
        "noise_snr_db": NOISE_SNR_DB if NOISY in group.renderings else None,
        "pcm16_sha256": {
            f"{b}/{r}": hashlib.sha256(np.round(w * 32767).astype("<i2").tobytes()).hexdigest()
            for (b, r), w in frozen.items()
        },
    }
    return RenderedGroup(group, frozen, ends, divergence, manifest)


@lru_cache(maxsize=RENDERED_GROUPS)
def rendered_group(
    group_id: str, renderer: str = DEFAULT_RENDERER, cache_dir: Path | None = None
) -> RenderedGroup:
    """``build_group`` of a group id, kept for the next episodes (``RENDERED_GROUPS``, all
    renderers together)."""
    return build_group(groups_by_id()[group_id], renderer, cache_dir)
