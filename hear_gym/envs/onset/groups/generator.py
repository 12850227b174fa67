"""Generate the Onset contrast groups: a pure function of ``SEED_KEY`` and the data files, named by
``GENERATOR_VERSION`` (bumped with any change to either, so runs and caches of older groups
never resume).

Per domain (``data/domains.json``) there are ``GROUPS_PER_DOMAIN`` groups: every unordered pair
of the five source actions twice, each with its own transcript (distinct within the domain), a
voice and rate shared by both utterances, and per-utterance deliveries (``data/deliveries.json``).
Held-out domains form the test split; of every other domain ``DEV_PER_DOMAIN`` groups go to dev
and the rest to train. The onset fraction (0.4, 0.6, 0.8) is then assigned so that it is balanced
within every (split, action pair) bucket, and, through a running offset, within every split.
All draws come from ``StableRng`` streams keyed by ``SEED_KEY``, domain and bucket.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from itertools import product

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.onset.groups.model import (
    ACTION_PAIRS,
    BRANCH_IDS,
    ONSET_FRACTIONS,
    PREFIX_FRACTIONS,
    SPLITS,
    Branch,
    Delivery,
    Group,
    pair_key,
)
from hear_gym.speech.espeak import VOICES

# onset-2: the deliveries were redrawn so that no single prosodic control names the action
# (data/deliveries.json); the draws are onset-1's (``SEED_KEY``), so every group keeps its
# transcript, voice, rate, action pair, onset and jitter, and only the deliveries differ.
GENERATOR_VERSION = "onset-2"
SEED_KEY = "onset-1"
GROUPS_PER_DOMAIN = 2 * len(ACTION_PAIRS)
DEV_PER_DOMAIN = 4


def _data(name: str) -> dict:
    return json.loads(resources.files("hear_gym.envs.onset.groups").joinpath("data", name).read_text("utf-8"))


@cache
def domains() -> dict[str, dict]:
    return _data("domains.json")["domains"]


@cache
def deliveries() -> dict:
    return _data("deliveries.json")


def transcripts(domain: str) -> list[str]:
    """Every transcript the domain's templates can produce, in a fixed order."""
    spec = domains()[domain]
    out = []
    for template in spec["templates"]:
        names = [n for n in spec["slots"] if "{" + n + "}" in template]
        for values in product(*(spec["slots"][n] for n in names)):
            text = template.format(**dict(zip(names, values, strict=True)))
            out.append(text[0].upper() + text[1:])
    return out


def _delivery(action: str, pitch_offset: float, range_offset: float, rng: StableRng) -> Delivery:
    spec, jitter = deliveries()["actions"][action], deliveries()["utterance_jitter"]
    return Delivery(
        style=spec["style"],
        pitch=round(
            min(99.0, max(0.0, spec["pitch"] + pitch_offset + rng.uniform(-1, 1) * jitter["pitch"])), 2
        ),
        range=round(
            min(99.0, max(0.0, spec["range"] + range_offset + rng.uniform(-1, 1) * jitter["range"])), 2
        ),
        contour=spec["contour"],
    )


def _domain_specs(domain: str) -> list[dict]:
    """The domain's groups before onsets are assigned."""
    rng = StableRng(f"{SEED_KEY}|{domain}")
    texts = rng.sample(transcripts(domain), GROUPS_PER_DOMAIN)
    pairs = rng.shuffled([pair for pair in ACTION_PAIRS for _ in range(2)])
    dev = set(rng.sample(range(GROUPS_PER_DOMAIN), DEV_PER_DOMAIN))
    speaker = deliveries()["speaker"]
    specs = []
    for i, (text, pair) in enumerate(zip(texts, pairs, strict=True)):
        pitch_offset = rng.uniform(-1, 1) * speaker["pitch_offset"]
        range_offset = rng.uniform(-1, 1) * speaker["range_offset"]
        ordered = pair if rng.below(2) == 0 else pair[::-1]  # which action becomes branch "a"
        specs.append(
            {
                "group_id": f"{domain}-{i:02d}",
                "domain": domain,
                "split": "test" if domains()[domain]["held_out"] else ("dev" if i in dev else "train"),
                "transcript": text,
                "voice": rng.choice(VOICES),
                "rate": int(round(rng.uniform(*speaker["rate"]))),
                "branches": tuple(
                    Branch(b, a, _delivery(a, pitch_offset, range_offset, rng))
                    for b, a in zip(BRANCH_IDS, ordered, strict=True)
                ),
            }
        )
    return specs


@cache
def all_groups() -> tuple[Group, ...]:
    specs = [spec for domain in sorted(domains()) for spec in _domain_specs(domain)]
    onset: dict[str, int] = {}
    for split in SPLITS:
        offset = 0  # carried across buckets so that the split as a whole is balanced too
        for pair in ACTION_PAIRS:
            bucket = sorted(
                s["group_id"]
                for s in specs
                if s["split"] == split and pair_key(b.action for b in s["branches"]) == pair
            )
            bucket = StableRng(f"{SEED_KEY}|onset|{split}|{'+'.join(pair)}").shuffled(bucket)
            for j, group_id in enumerate(bucket):
                onset[group_id] = PREFIX_FRACTIONS.index(ONSET_FRACTIONS[(offset + j) % len(ONSET_FRACTIONS)])
            offset += len(bucket)
    return tuple(Group(**spec, onset_index=onset[spec["group_id"]]) for spec in specs)


@cache
def groups_by_id() -> dict[str, Group]:
    return {g.group_id: g for g in all_groups()}


def select_groups(split: str = "all") -> tuple[Group, ...]:
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {(*SPLITS, 'all')}, got {split!r}")
    return tuple(g for g in all_groups() if split in ("all", g.split))


def item_ids(split: str = "all") -> tuple[str, ...]:
    """Every item (trajectory x rendering) of the split, in generation order."""
    return tuple(e for g in select_groups(split) for e in g.item_ids())
