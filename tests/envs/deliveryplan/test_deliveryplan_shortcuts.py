"""Shortcut policies stay near chance (VoxReason §5.2, §6), each bound checked to fail on a leaky
construction: what a planner gets from the cue ids, from where and of which kind a record is,
from editing without opening the evidence, and from the paper's controls. Every control plays
through the env with strict JSON replies (about 0.1 s per 100 cases)."""

import hashlib
from collections import Counter
from functools import cache
from itertools import combinations

import gymnasium as gym
import numpy as np
import pytest

import hear_gym  # noqa: F401
from agents.deliveryplan import baselines
from agents.deliveryplan.planners import ShownSide, records_cited
from agents.deliveryplan.play import mean_rows, play_control
from hear_gym.envs.deliveryplan import case_tables, cases, splits
from hear_gym.envs.deliveryplan.cases import (
    DEFAULT_SEED,
    KEY_COUNTS,
    KIND_OF,
    OTHER_TAKE,
    RECORD_KINDS,
    RECORD_NAMES,
    ROLES,
    SOURCE,
    SOURCE_KIND,
    TEST_VOICES,
    UTTERANCES,
    cases_by_id,
    generate_cases,
)
from hear_gym.envs.deliveryplan.display import CUE_ID, Display
from hear_gym.envs.deliveryplan.env import DeliveryPlanEnv
from hear_gym.envs.deliveryplan.plan import LEVELS, SOURCE_KEYS, DeliveryPlan, key_name
from hear_gym.envs.deliveryplan.plan_table import BASE_PLANS

ENV_ID = "hear_gym/DeliveryPlan-v0"
ALL = splits.split_ids("all")
METRICS = (
    "evidence_f1",
    "evidence_recall",
    "decisive_cue_recall",
    "gcite",
    "plan_slot_accuracy",
    "plan_slot_accuracy_original",
    "required_change_accuracy",
    "counterfactual_consistency",
    "unexpected_change_rate",
)
ID_MARGIN = 0.05  # key accuracy of the id lookup over the prior
CITE_MARGIN = 0.10  # F1 / decisive recall of a citation control over its chance value
BLIND_MARGIN = 0.05  # the blind edit's consistency over prior-only's


def _scores(control, split="all", partition="public", seed=0):
    return mean_rows(play_control(control, splits.split_ids(split, partition), partition, seed), METRICS)


def _clear_caches():
    for cached in (cases.generate_cases, cases.cases_by_id, case_tables.case_tables, baselines.fitted):
        cached.cache_clear()
    _voices_drawn_per_case.cache_clear()
    for cached in (splits.partition, splits.training_sides, splits.training_pairs):
        cached.cache_clear()


@pytest.fixture
def leaky(monkeypatch):
    """Patch a construction back in for one test; the caches built from it go with it."""
    _clear_caches()
    yield monkeypatch
    monkeypatch.undo()
    _clear_caches()


# -- 1. cue ids --------------------------------------------------------------------------
def _hashed_display(env) -> Display:
    """The old construction: ids a hash of the case, the record and its content, order fixed."""
    case = env.case

    def ids(view):
        return {
            r.name: "e"
            + str(int(hashlib.sha256(f"{case.case_id}|{r.as_dict()}".encode()).hexdigest(), 16) % 900 + 100)
            for r in view.records
        }

    return Display(RECORD_NAMES, (ids(case.original), ids(case.edited)))


def _id_lookup_accuracy(reference_seeds=(11, 12, 13), eval_seed=0) -> tuple[float, float]:
    """An agent with the case tables and the construction code but no audio: it plays the env
    under ``A`` (labels hidden) with seeds of its own, records which source key came with each
    id it saw and where the source record was listed, and on the evaluation run names the key
    those ids and that place came with most often. Returns its key accuracy and the prior's (the
    commonest key)."""
    env = gym.make(ENV_ID, access="T", actions="text", split="all").unwrapped

    def shown(seed):
        out = []
        for index, case_id in enumerate(ALL):
            env.reset(seed=seed if index == 0 else None, options={"item_id": case_id})
            for side in (0, 1):
                env.side = side
                text = env.prompt(labels=False)
                shown_side = ShownSide.read(text)
                place = [cue for cue, _ in shown_side.listed].index(shown_side.ids[SOURCE])
                out.append((CUE_ID.findall(text), place, key_name(*env.view.source_key)))
        return out

    seen: dict = {}
    for seed in reference_seeds:
        for ids, place, key in shown(seed):
            for feature in (*ids, ("place", place)):
                seen.setdefault(feature, Counter())[key] += 1
    evaluated = shown(eval_seed)
    prior = Counter(key for _, _, key in evaluated).most_common(1)[0][0]
    hits = 0
    for ids, place, key in evaluated:
        votes = sum((seen.get(f, Counter()) for f in (*ids, ("place", place))), Counter())
        hits += (votes.most_common(1)[0][0] if votes else prior) == key
    return hits / len(evaluated), float(np.mean([key == prior for _, _, key in evaluated]))


def test_cue_ids_and_order_say_nothing_about_the_source_key():
    accuracy, prior = _id_lookup_accuracy()
    assert accuracy <= prior + ID_MARGIN, (accuracy, prior)


def test_the_id_bound_fails_on_content_hashed_ids(leaky):
    leaky.setattr(DeliveryPlanEnv, "_draw_display", _hashed_display)
    accuracy, prior = _id_lookup_accuracy()
    assert accuracy > prior + ID_MARGIN, (accuracy, prior)


# -- 2. citations ------------------------------------------------------------------------
def _chance_f1(n_cited: int, n_gold: int, n_records: int = len(RECORD_NAMES)) -> float:
    """Mean evidence F1 of ``n_cited`` records drawn uniformly from ``n_records`` (0 when none)."""
    gold = set(range(n_gold))
    scores = []
    for cited in combinations(range(n_records), n_cited):
        hits = len(gold & set(cited))
        scores.append(2 * hits / (n_cited + n_gold) if n_cited else 0.0)
    return float(np.mean(scores))


def _citation_scores(control):
    """(mean F1, mean chance F1 of as many records, mean decisive recall) over both sides of
    every case."""
    rows = [r for seed in (0, 1, 2) for r in play_control(control, ALL, seed=seed)]
    gold = [len(v.gold_evidence) for c in cases.generate_cases() for v in (c.original, c.edited)] * 3
    chance = float(np.mean([_chance_f1(records_cited(control), g) for g in gold]))
    return (
        mean_rows(rows, ["evidence_f1"])["evidence_f1"],
        chance,
        mean_rows(rows, ["decisive_cue_recall"])["decisive_cue_recall"],
    )


RULE_CONTROLS = [
    "cite_all",
    "cite_none",
    *(f"cite_position_{i}" for i in range(len(RECORD_NAMES))),
    *(f"cite_kind_{kind}" for kind in RECORD_KINDS),
]


@pytest.mark.parametrize("control", RULE_CONTROLS)
def test_citing_by_rule_stays_near_chance(control):
    """Citing every record, none, the one listed at a place, or every record of one kind earns
    about the evidence F1 of citing as many records at random: relevance follows neither place
    nor kind (the utterance is gold about as often as a random record, and the source record is
    one of two recordings)."""
    f1, chance, decisive = _citation_scores(control)
    assert f1 <= chance + CITE_MARGIN, (control, f1, chance)
    if control.startswith("cite_position"):
        assert decisive <= 1 / len(RECORD_NAMES) + CITE_MARGIN, (control, decisive)


def test_the_gold_set_varies_and_cite_all_is_not_perfect():
    sizes = Counter(len(v.gold_evidence) for c in generate_cases() for v in (c.original, c.edited))
    assert len(sizes) > 1 and max(sizes.values()) < 0.8 * sum(sizes.values()), sizes
    assert _citation_scores("cite_all")[0] < 0.8


def test_the_citation_bounds_fail_on_the_fixed_all_record_gold_set(leaky):
    leaky.setattr(cases.CaseView, "gold_evidence", property(lambda self: frozenset(RECORD_NAMES)))
    leaky.setattr(
        DeliveryPlanEnv, "_draw_display", lambda env: Display(RECORD_NAMES, _hashed_display(env).ids)
    )
    assert _citation_scores("cite_all")[0] > 0.99  # an id collision of the hash aside
    source_place = RECORD_NAMES.index(SOURCE)
    decisive = _citation_scores(f"cite_position_{source_place}")[2]  # the source, always there
    assert decisive > 1 / len(RECORD_NAMES) + CITE_MARGIN and decisive > 0.95, decisive


def test_the_kind_bound_fails_when_the_source_is_the_only_record_of_its_kind(leaky):
    """The construction before the other take: the source record was the suite's only
    recording, so citing the recording was citing the gold. Listing the other take under a kind
    of its own puts that back: citing the source kind then beats chance by far."""
    leaky.setitem(KIND_OF, OTHER_TAKE, "note")
    f1, chance, decisive = _citation_scores(f"cite_kind_{SOURCE_KIND}")
    assert f1 > chance + CITE_MARGIN and decisive == 1.0, (f1, chance)


# -- 3. the blind edit -------------------------------------------------------------------
def _old_plan_table():
    """The first construction's table: strong raises energy, else pitch range, else rate."""

    def strong(plan: DeliveryPlan) -> DeliveryPlan:
        for slot in ("energy", "pitch_range", "rate"):
            level = LEVELS.index(plan.slot(slot))
            if level < 2:
                return plan.replace(**{slot: LEVELS[level + 1]})
        raise AssertionError(plan)

    base = {
        **BASE_PLANS,
        "disgust": DeliveryPlan("low", "low", "mid", "mid", "high", "fall", "tense", frozenset({0})),
        "surprised": DeliveryPlan("mid", "high", "high", "high", "mid", "rise", "modal", frozenset({0})),
    }
    return {k: base[k[0]] if k[1] == "normal" else strong(base[k[0]]) for k in cases.PLAN_TABLE}


def _held_out_voice_cases() -> list[str]:
    """The cases whose source voice no audio probe trains on: where listening is measured."""
    return [c.case_id for c in cases.generate_cases() if c.original.source.voice in TEST_VOICES]


def _blind_and_prior(split="all", partition="public") -> tuple[float, float]:
    ids = _held_out_voice_cases() if split == "held_out_voices" else splits.split_ids(split, partition)
    return tuple(
        mean_rows(play_control(control, ids, partition), ["counterfactual_consistency"])[
            "counterfactual_consistency"
        ]
        for control in ("blind_edit", "prior_only")
    )


@pytest.mark.parametrize(
    "split,partition",
    [
        ("all", "public"),
        ("held_out_voices", "public"),
        ("test", "source_key_disjoint"),
        ("test", "source_emotion_disjoint"),
    ],
)
def test_a_blind_edit_gains_nothing_over_prior_only(split, partition):
    """The blind edit is right only on the edits of the one key whose change it guesses, so it
    stays near prior-only wherever the keys are mixed as in the suite, held-out voices too."""
    blind, prior = _blind_and_prior(split, partition)
    assert blind <= prior + BLIND_MARGIN, (blind, prior)


def test_the_blind_edit_bound_fails_on_the_shared_intensity_slots(leaky):
    leaky.setattr(cases, "PLAN_TABLE", _old_plan_table())
    blind, prior = _blind_and_prior()
    assert blind > prior + BLIND_MARGIN, (blind, prior)


OLD_VOICES = ("f1", "f2", "f3", "f4", "f5", "m1", "m2", "m3", "m4", "m7")


@cache
def _voices_drawn_per_case(seed: int = DEFAULT_SEED):
    """The old draw: each case's voice drawn uniformly of the ten, whatever its key (as the
    construction before the dealt voices drew it, a discarded statement draw included)."""
    rng = np.random.default_rng(seed)
    out = []
    for key in SOURCE_KEYS:
        for _ in range(KEY_COUNTS[key]):
            utterance = UTTERANCES[int(rng.integers(len(UTTERANCES)))]
            role = ROLES[int(rng.integers(len(ROLES)))]
            rng.integers(len(UTTERANCES))
            voice = OLD_VOICES[int(rng.integers(len(OLD_VOICES)))]
            out.append(cases._build_case(f"vr-{len(out):03d}", key, utterance, role, voice))
    return tuple(out)


def test_the_held_out_voice_bound_fails_on_voices_drawn_per_case(leaky):
    """Voices drawn per case left one key's edit over-represented among the held-out voices
    (angry normal -> strong, the blind edit's guess: 5 of 46)."""
    leaky.setattr(cases, "generate_cases", _voices_drawn_per_case)
    blind, prior = _blind_and_prior("held_out_voices")
    assert blind > prior + BLIND_MARGIN, (blind, prior)


# -- the paper's controls ----------------------------------------------------------------
def test_text_only_misses_the_decisive_cue_and_every_required_change():
    s = _scores("text_only")
    assert s["decisive_cue_recall"] == 0.0  # it never sees the source record
    assert s["required_change_accuracy"] == s["counterfactual_consistency"] == 0.0


@pytest.mark.parametrize("partition", ["source_key_disjoint", "source_emotion_disjoint"])
def test_prior_only_never_makes_an_intensity_triggered_change(partition):
    s = _scores("prior_only", "test", partition)
    assert s["required_change_accuracy"] == s["counterfactual_consistency"] == 0.0
    assert s["gcite"] == 0.0  # no citations


def test_prior_only_plan_slot_is_high_on_held_out_keys_and_falls_on_held_out_emotions():
    keys = _scores("prior_only", "test", "source_key_disjoint")["plan_slot_accuracy_original"]
    emotions = _scores("prior_only", "test", "source_emotion_disjoint")["plan_slot_accuracy_original"]
    assert keys >= 0.8  # a held-out key's emotion was trained
    assert emotions < 0.5 and emotions < keys - 0.3  # an emotion training never saw


def test_references_satisfy_locality_and_echo_does_not():
    for control in ("oracle", "declared_delta"):
        s = _scores(control, "test", "source_key_disjoint")
        assert s["counterfactual_consistency"] == s["decisive_cue_recall"] == 1.0
    echo = _scores("citation_echo", "test", "source_key_disjoint")
    assert echo["decisive_cue_recall"] == echo["required_change_accuracy"] == 0.0
    assert echo["unexpected_change_rate"] == 0.0


def test_a_shuffled_delta_is_near_chance_and_depends_on_its_seed():
    """Another case's delta is right only when the two cases share a key pair: near the share of
    the commonest pair, far from the declared delta's 1.0."""
    runs = [
        _scores("shuffled_delta", "all", "public", seed)["counterfactual_consistency"] for seed in (0, 1, 2)
    ]
    pairs = Counter((c.original.source_key, c.edited.source_key) for c in generate_cases())
    chance = sum((n / len(ALL)) ** 2 for n in pairs.values())
    assert max(runs) <= chance + BLIND_MARGIN and len(set(runs)) > 1, (runs, chance)
    assert all(cases_by_id()[c].declared_delta for c in ALL)
